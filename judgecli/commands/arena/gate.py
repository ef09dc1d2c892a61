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

Every comparison is judged in both orders, so the arena has a position consistency (the
share of graded comparisons whose two orders agreed; with a panel, on which every judge's
did) and stands on the same floor as a pairwise gate (`--min-consistency`, default 0.5,
`consistency`): below it the judge cannot tell the answers apart, and the gate is undecided
(exit 3). A run with --no-flip measures no consistency; the floor does not apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from judgecli.commands.arena.systems import system_index
from judgecli.deciding.consistency import (
    ARENA_TO_DO,
    DEFAULT_FLOOR,
    floor_of,
    floor_undecided,
    floor_warnings,
)
from judgecli.errors import ConfigError
from judgecli.summary.arena import ArenaGate, ArenaSummary, GateCheck
from judgecli.summary.gate_records import ConsistencyFloor

BEAT_SHARE = 0.95
"""--beats: the share of resamples the system must be above the other in."""


@dataclass(frozen=True)
class ArenaGateSpec:
    """The gate's flags as given."""

    system: str | None = None
    """--for: the system gated (None: the last file's)."""
    beats: tuple[str, ...] = ()
    min_rank: int | None = None
    min_consistency: float | None = None
    """The position-consistency floor (None: the default, 0.5)."""

    @property
    def asked(self) -> bool:
        """Whether any check was asked for (the floor alone is none)."""
        return bool(self.beats) or self.min_rank is not None

    @property
    def floor(self) -> float:
        """The position-consistency floor the gate stands on."""
        return DEFAULT_FLOOR if self.min_consistency is None else self.min_consistency

    def checked(self, names: list[str], *, flip: bool = True) -> ArenaGateSpec:
        """The spec with its system named, checked against the systems (ConfigError, exit
        2, before anything is judged: an unknown name, a system asked to beat itself, a
        rank outside 1..n, --min-consistency with --no-flip).
        """
        if self.min_consistency is not None and not flip:
            raise ConfigError(
                "--min-consistency with --no-flip: a comparison judged in one order "
                "measures no position consistency",
                hint="drop --no-flip (both orders are judged by default), or --min-consistency",
            )
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
        return ArenaGateSpec(
            system=system,
            beats=self.beats,
            min_rank=self.min_rank,
            min_consistency=self.min_consistency,
        )


def arena_floor(summary: ArenaSummary, spec: ArenaGateSpec) -> ConsistencyFloor | None:
    """The arena's consistency against the floor; None with --no-flip."""
    return floor_of(summary.consistency, spec.floor) if summary.flip else None


def arena_warnings(summary: ArenaSummary, spec: ArenaGateSpec) -> list[str]:
    """The loud warning of an arena below the floor, gated or not."""
    return floor_warnings(arena_floor(summary, spec), None, ARENA_TO_DO)


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
    floor = arena_floor(summary, spec)
    leaderboard: Literal["raw", "style-controlled"] = "style-controlled" if styled else "raw"
    # Absent, not null, where there is no floor (--no-flip).
    floored = {} if floor is None else {"consistency_floor": floor}
    if floor is None or floor.met:
        return ArenaGate(
            passed=all(c.passed for c in checks),
            system=spec.system,
            leaderboard=leaderboard,
            checks=checks,
            decided=True,
            undecided=None,
            hint=None,
            **floored,
        )
    # The judge picks a position, not an answer: the leaderboard it made decides nothing.
    why = floor_undecided(floor, ARENA_TO_DO)
    return ArenaGate(
        passed=False,
        system=spec.system,
        leaderboard=leaderboard,
        checks=[c.model_copy(update={"passed": False, "decided": False}) for c in checks],
        decided=False,
        undecided=why.reason,
        hint=why.hint,
        **floored,
    )
