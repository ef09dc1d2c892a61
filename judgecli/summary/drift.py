"""The summary.json of `judge drift` (DriftSummary) and its flips.jsonl lines (Flip): how far
the verdicts on one set of cases moved between two runs whose judge changed.

Its keys are a contract like every summary's (users' CI scripts read them with `jq`): keys
may be added, none renamed. It is a Record: a key that was set is written, null
included ("computed, no value", e.g. a κ of raters who never varied), and a key that does
not apply is absent (`weighted_kappa` off an integer scale, `gate` without --max-shift).
A Record writes only the fields it was given, so the keys every drift has have no defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from judgecli.stats.intervals import Interval
from judgecli.summary.judge_shift import JudgeShiftGate
from judgecli.summary.parts import Part, Record

DRIFT = "drift"
"""summary.json's `command` of a drift: what tells it from a run's summary."""


class DriftRuns(Part):
    """The two runs compared, as given."""

    a: str
    """The baseline run (the old judge)."""
    b: str
    """The run with the changed judge (with --anchor: the re-judged run)."""


class Difference(Part):
    """One setting of the judge that is not the same in the two runs."""

    a: Any
    b: Any


class LeftOut(Part):
    """Why cases were left out of the pairing (a case failed in both counts in both)."""

    missing_in_a: int = 0
    """Ids run B judged and run A did not."""
    missing_in_b: int = 0
    """Ids run A judged and run B did not."""
    failed_in_a: int = 0
    """Ids both runs judged whose verdict failed in A."""
    failed_in_b: int = 0
    """Ids both runs judged whose verdict failed in B."""


class DriftGate(Record):
    """--max-shift: the shift fails the gate when it is significant (its 95% interval
    excludes 0) and larger than the bar in either direction.
    """

    metric: Literal["shift"]
    max_shift: float
    shift: float | None
    shift_ci: Interval
    significant: bool | None
    """None: the interval could not be computed (too few cases with a value, no case moved,
    or every case moved by the same amount); the gate then has no verdict (exit 3) unless
    the shift is within the bar."""
    passed: bool | None


class DriftSummary(Record):
    """summary.json of `judge drift`."""

    command: Literal["drift"]
    runs: DriftRuns
    kind: str
    """The verdicts' kind: "pointwise", "binary" or "pairwise"."""
    compared: str
    """What a case's label is: "passed" (pass/fail; pointwise with a pass mark in both
    runs), "score", "choice" or "winner" (pairwise; "dropped" when the flip policy dropped
    the case)."""
    value: str
    """What a case's headline value is: "score", "passed" (1 or 0) or "outcome" (NEW's:
    1 win, 0.5 tie, 0 loss)."""
    differences: dict[str, Difference]
    """What differs in the judge's configuration (models, rubric, temperature, ...)."""
    n_paired: int
    """Cases graded (status ok) in both runs."""
    n_flipped: int
    """Of those, cases whose label differs."""
    left_out: int
    """Ids in either run that are not paired."""
    left_out_reasons: LeftOut
    flip_rate: float | None
    flip_rate_ci: Interval
    """Wilson 95% interval."""
    n_shift: int
    """Paired cases with a headline value in both runs (a dropped pair has none)."""
    mean_a: float | None
    mean_b: float | None
    shift: float | None
    """mean(B) − mean(A) of the headline values, on the same cases."""
    shift_ci: Interval
    """Paired t 95% interval of the per-case differences (null when no case moved, or
    every case moved alike: `no_interval` says which)."""
    shift_p_value: float | None
    """Paired t test of the differences against 0 (1 when no case moved)."""
    kappa: float | None
    """Cohen's κ between A's and B's labels (None: undefined, e.g. one label throughout)."""
    weighted_kappa: float | None = None
    """Quadratic-weighted κ of the scores (pointwise, integer scores only)."""
    labels: list[str]
    """Every label seen, in the order of `transitions`."""
    transitions: dict[str, dict[str, int]]
    """Cases per (A's label → B's label)."""
    warnings: list[str]
    gate: DriftGate | None = None
    no_interval: dict[str, str] | None = None
    """Why `shift_ci` is null while there is a shift (as a run summary's `no_interval`)."""
    shift_scale: str | None = None
    """The scale of judge_shift and system_shift: the first check of run B's gate when it
    reads a pass rate, a mean or a win rate ("pass_rate", "mean", "win_rate"), else the
    headline value's."""
    n_identical: int | None = None
    """Paired cases whose text the judge saw is byte-identical in both runs (with a value)."""
    judge_shift: float | None = None
    """The anchors' mean change B − A: the judge's own shift (issue 35)."""
    judge_shift_ci: Interval | None = None
    """Paired t 95% interval of the anchors' changes (null: fewer than two anchors, or
    every anchor changed alike)."""
    n_system: int | None = None
    system_shift: float | None = None
    """The other paired cases' mean change: the system's shift (the judge's mixed in)."""
    system_shift_ci: Interval | None = None
    judge_shift_gate: JudgeShiftGate | None = None
    """Run B has a gate on a pass rate, mean or win rate: whether judge_shift could explain
    its decision."""


class Flip(Record):
    """A flips.jsonl line: a case whose label moved."""

    id: str
    a: str
    b: str
    a_value: float | None
    b_value: float | None
    change: float | None
    """b_value − a_value (None when either has no value)."""
    case: dict[str, str] | None = None
    """The case's text as the judge was shown it, when the results carry it."""


@dataclass(frozen=True)
class Drift:
    """What `judge drift` found: the summary and the flipped cases, largest change first."""

    summary: DriftSummary
    flips: list[Flip]
