"""The arena's gate: does one system (--for, default the last file's) beat the systems
named by --beats, and rank high enough (--min-rank)? Pure: a summary in, a verdict out.

- `--beats NAME`: passes when the system's score is above NAME's and it is above NAME's in
  at least 95% of the bootstrap resamples (the cases resampled, every system refitted):
  a one-sided 95% test that its score is higher. Stricter than the point estimates,
  looser than asking the two 95% intervals not to overlap (for independent estimates of
  equal precision, a test at about 99.5%).
- `--min-rank N`: passes when the system's rank (1 + the systems whose interval lies
  wholly above its own) is N or better.

With --style-control the gate reads the style-controlled leaderboard: that is the
question asked. A run that could not be judged (incomplete) gets no verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

from judgecli.arena.systems import system_index
from judgecli.errors import ConfigError
from judgecli.summary.arena import ArenaGate, ArenaSummary, GateCheck

BEAT_SHARE = 0.95
"""--beats: the share of resamples the system must be above the other in."""


@dataclass(frozen=True)
class ArenaGateSpec:
    """The gate's flags as given."""

    system: str | None = None
    """--for: the system gated (None: the last file's)."""
    beats: tuple[str, ...] = ()
    min_rank: int | None = None

    @property
    def asked(self) -> bool:
        """Whether any check was asked for."""
        return bool(self.beats) or self.min_rank is not None

    def checked(self, names: list[str]) -> ArenaGateSpec:
        """The spec with its system named, checked against the systems (ConfigError, exit
        2, before anything is judged: an unknown name, a system asked to beat itself, a
        rank outside 1..n).
        """
        system = self.system if self.system is not None else names[-1]
        system_index(names, system, "--for")
        for other in self.beats:
            system_index(names, other, "--beats")
            if other == system:
                raise ConfigError(
                    f"--beats {other!r}: that is the system gated (--for {system!r})",
                    hint="name another system, or choose the gated one with --for",
                )
        if self.min_rank is not None and not 1 <= self.min_rank <= len(names):
            raise ConfigError(
                f"--min-rank {self.min_rank}: ranks run from 1 to {len(names)}",
                hint="1 is the top of the leaderboard",
            )
        return ArenaGateSpec(system=system, beats=self.beats, min_rank=self.min_rank)


def evaluate_arena_gate(summary: ArenaSummary, spec: ArenaGateSpec) -> ArenaGate | None:
    """The gate's verdict on a complete summary (None when nothing was asked)."""
    if not spec.asked or spec.system is None:
        return None
    styled = summary.style_control
    board = styled.leaderboard if styled else summary.leaderboard
    above = styled.above_share if styled else summary.above_share
    standing = {s.name: s for s in board}
    me = standing[spec.system]
    checks = []
    for other in spec.beats:
        share = above[spec.system][other]
        higher = me.score > standing[other].score
        checks.append(
            GateCheck(
                check="beats",
                against=other,
                value=share,
                threshold=BEAT_SHARE,
                passed=higher and share is not None and share >= BEAT_SHARE,
            )
        )
    if spec.min_rank is not None:
        checks.append(
            GateCheck(
                check="min_rank",
                value=me.rank,
                threshold=spec.min_rank,
                passed=me.rank <= spec.min_rank,
            )
        )
    return ArenaGate(
        passed=all(c.passed for c in checks),
        system=spec.system,
        leaderboard="style-controlled" if styled else "raw",
        checks=checks,
    )
