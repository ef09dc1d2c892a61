"""The AlignSummary of a `judge align` run (summary.json): the sealed split, what the
choosing found on train, and baseline against aligned on the sealed test with the paired
bootstrap interval of each metric's gain (docs/results.md#align).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

from judgecli.stats.paired_gain import Gain, GainMetric

SMALL_TEST = 30
"""Below this many sealed test cases, the run warns that its interval is wide."""

PRIMARY = GainMetric.KAPPA
"""The metric whose interval decides "better" and that `--min-gain` reads."""


class AlignDecision(StrEnum):
    """What the sealed test says."""

    BETTER = "better"
    NO_SIGNIFICANT_GAIN = "no significant gain"


class SplitRecord(BaseModel):
    """The sealed split (`split`)."""

    model_config = ConfigDict(frozen=True)

    train: list[str]
    test: list[str]
    test_hash: str
    """sha256 of the sorted test ids, one a line."""
    test_share: float
    seed: int


@dataclass(frozen=True)
class AlignGate:
    """`--min-gain`'s verdict, as every command's gate reads (`commands.outcome.Gated`)."""

    passed: bool
    decided: bool = True
    """A gain's interval always decides: there is no undecided evidence here."""


class AlignSummary(BaseModel):
    """summary.json of `judge align`."""

    model_config = ConfigDict(frozen=True)

    command: Literal["align"] = "align"
    rubric: str
    rubric_hash: str
    aligned_rubric_hash: str
    """The content hash of rubric.yaml as judge reads it (what a run of it records)."""
    labels_hash: str
    """sha256 of the labels file's bytes."""
    model: str
    optimizer_model: str | None
    seed: int
    split: SplitRecord
    folds: int
    cv_accuracy: dict[str, float | None]
    """Each method's cross-validated accuracy on train (`baseline`: its accuracy there)."""
    method: str
    """The method chosen on train (`baseline` when none beat it)."""
    pass_at: float | None = None
    """The pass mark the `pass-mark` method chose (pointwise), else None."""
    confidence: float
    n_test_labels: int
    baseline: dict[str, float | None]
    aligned: dict[str, float | None]
    gain: dict[str, float | None]
    gain_ci: dict[str, list[float | None]]
    primary_metric: str
    decision: AlignDecision
    kept: Literal["aligned", "baseline"]
    min_gain: float | None
    passed: bool

    @property
    def gate(self) -> AlignGate | None:
        """`--min-gain`'s verdict (None without it)."""
        return None if self.min_gain is None else AlignGate(self.passed)

    @property
    def incomplete(self) -> None:
        """None: an align run that could not finish raises (exit 3) instead."""
        return None

    @property
    def warnings(self) -> list[str]:
        """What the run warns of: a sealed test too small for a narrow interval."""
        n = len(self.split.test)
        if n >= SMALL_TEST:
            return []
        return [
            f"the sealed test holds {n} cases (under {SMALL_TEST}): its interval is wide, and "
            "a real gain may read as none; label more cases or raise --test-share"
        ]


def gains_record(
    gains: dict[GainMetric, Gain],
) -> tuple[
    dict[str, float | None],
    dict[str, float | None],
    dict[str, float | None],
    dict[str, list[float | None]],
]:
    """The per-metric maps of summary.json: baseline, aligned, gain, gain_ci."""
    return (
        {m.value: g.baseline for m, g in gains.items()},
        {m.value: g.aligned for m, g in gains.items()},
        {m.value: g.gain for m, g in gains.items()},
        {m.value: list(g.gain_ci) for m, g in gains.items()},
    )


def decide(gains: dict[GainMetric, Gain], min_gain: float | None) -> tuple[AlignDecision, bool]:
    """Say "better" only when the primary metric's gain interval lies above 0; the gate passes
    unless `--min-gain` asks more than the interval's lower bound.
    """
    primary = gains[PRIMARY]
    decision = AlignDecision.BETTER if primary.significant else AlignDecision.NO_SIGNIFICANT_GAIN
    low = primary.gain_ci[0]
    passed = min_gain is None or (low is not None and low >= min_gain)
    return decision, passed
