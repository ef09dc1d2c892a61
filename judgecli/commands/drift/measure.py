"""Judge drift: how far the verdicts on the same cases moved when the judge changed (a model
retired, a rubric edited, a temperature raised). Pure: two finished runs in, a DriftSummary
and the flipped cases out (`audit` says whether two runs compare, and what differs in their
judges); `files` reads and writes them.

Cases are paired on id over those graded (status ok) in both runs. Each case has a label,
which a flip compares, and a headline value, which the shift averages:

- pairwise: the winner (old / tie / new, or "dropped" when the flip policy dropped the
  case); value NEW's outcome, 1 / 0.5 / 0 (the win rate's unit; a dropped case has none);
- binary: the choice ("(split)" for a panel without a majority); value passed, 1 / 0;
- pointwise: pass / fail when both runs have a pass mark (the rubric's pass_at) on every
  paired case, else the score; value the score.

The two runs must be of one kind: a flip from 3 to YES, or a shift from a win rate to a
mean score, means nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from judgecli.commands.drift.anchors import split_shift
from judgecli.commands.drift.audit import AuditedRun, check_comparable, differences_of
from judgecli.deciding.outcomes import case_value
from judgecli.errors import InputError
from judgecli.grading.repeats import DROPPED, SPLIT
from judgecli.result import CaseResult, CaseStatus, natural_key
from judgecli.rubric import RubricKind
from judgecli.stats.agreement import cohen_kappa
from judgecli.stats.interval_rule import mean_interval, proportion_interval
from judgecli.stats.intervals import Interval
from judgecli.stats.paired import paired_t
from judgecli.stats.scores import mean
from judgecli.summary.drift import (
    DRIFT,
    Difference,
    Drift,
    DriftGate,
    DriftRuns,
    DriftSummary,
    Flip,
    LeftOut,
)
from judgecli.summary.gate_records import GateMetric

PASS, FAIL = "pass", "fail"
WINNERS = ("old", "tie", "new", DROPPED)
"""Pairwise labels, in the order tables list them (NEW's outcome rising, then dropped)."""

VALUE_METRIC = {
    RubricKind.PAIRWISE: GateMetric.WIN_RATE,
    RubricKind.BINARY: GateMetric.PASS_RATE,
    RubricKind.POINTWISE: GateMetric.MEAN,
}
"""The headline value of a case, per kind: the value the run's own headline number averages."""
VALUE_NAME = {
    RubricKind.PAIRWISE: "outcome",
    RubricKind.BINARY: "passed",
    RubricKind.POINTWISE: "score",
}


@dataclass(frozen=True)
class PairedCase:
    """One case graded in both runs, with its labels and headline values."""

    a: CaseResult
    b: CaseResult
    a_label: str
    b_label: str
    a_value: float | None
    b_value: float | None

    @property
    def change(self) -> float | None:
        """b_value − a_value, None when either has no value."""
        if self.a_value is None or self.b_value is None:
            return None
        return self.b_value - self.a_value


def pair_cases(
    a: Sequence[CaseResult], b: Sequence[CaseResult]
) -> tuple[list[tuple[CaseResult, CaseResult]], LeftOut, int]:
    """The cases graded in both runs (in id order), why the others were left out, and how
    many ids were.
    """
    a_by_id = {r.id: r for r in a}
    b_by_id = {r.id: r for r in b}
    shared = sorted(a_by_id.keys() & b_by_id.keys(), key=natural_key)
    reasons = LeftOut(
        missing_in_a=len(b_by_id.keys() - a_by_id.keys()),
        missing_in_b=len(a_by_id.keys() - b_by_id.keys()),
        failed_in_a=sum(a_by_id[i].status is not CaseStatus.OK for i in shared),
        failed_in_b=sum(b_by_id[i].status is not CaseStatus.OK for i in shared),
    )
    pairs = [
        (a_by_id[i], b_by_id[i])
        for i in shared
        if a_by_id[i].status is CaseStatus.OK and b_by_id[i].status is CaseStatus.OK
    ]
    left_out = len(a_by_id.keys() | b_by_id.keys()) - len(pairs)
    return pairs, reasons, left_out


class Compared(StrEnum):
    """What a case's label is (DriftSummary.compared)."""

    WINNER = "winner"
    CHOICE = "choice"
    PASSED = "passed"
    SCORE = "score"


def compared_on(pairs: Sequence[tuple[CaseResult, CaseResult]], kind: RubricKind) -> Compared:
    """What the labels of these pairs are. Pointwise cases are compared pass/fail only when
    both runs have a pass mark on every one of them: otherwise a pass and a 3 would be told
    apart.
    """
    match kind:
        case RubricKind.PAIRWISE:
            return Compared.WINNER
        case RubricKind.BINARY:
            return Compared.CHOICE
    marked = all(x.passed is not None and y.passed is not None for x, y in pairs)
    return Compared.PASSED if marked else Compared.SCORE


def case_label(result: CaseResult, compared: Compared) -> str:
    """A graded case's verdict as the label a flip compares (see the module's docstring)."""
    match compared:
        case Compared.WINNER:
            return result.winner.value if result.winner is not None else DROPPED
        case Compared.CHOICE:
            return result.choice if result.choice is not None else SPLIT
        case Compared.PASSED:
            return PASS if result.passed else FAIL
    return "none" if result.score is None else f"{result.score:g}"


def label_order(seen: set[str], compared: Compared) -> list[str]:
    """The labels seen, in the order tables list them: outcomes rising, pass before fail,
    choices by name (a split last), scores by value.
    """
    match compared:
        case Compared.WINNER:
            return [w for w in WINNERS if w in seen]
        case Compared.PASSED:
            return [p for p in (PASS, FAIL) if p in seen]
        case Compared.CHOICE:
            return sorted(seen - {SPLIT}) + [SPLIT] * (SPLIT in seen)
    return sorted(seen, key=lambda s: (s == "none", float(s) if s != "none" else 0.0))


def paired_cases(
    pairs: Sequence[tuple[CaseResult, CaseResult]], kind: RubricKind, compared: Compared
) -> list[PairedCase]:
    """Each pair with its labels and headline values."""
    metric = VALUE_METRIC[kind]
    return [
        PairedCase(
            a=x,
            b=y,
            a_label=case_label(x, compared),
            b_label=case_label(y, compared),
            a_value=case_value(x, metric),
            b_value=case_value(y, metric),
        )
        for x, y in pairs
    ]


@dataclass(frozen=True)
class Shift:
    """mean(B) − mean(A) of the headline values on the cases with a value in both."""

    n: int
    mean_a: float | None
    mean_b: float | None
    shift: float | None
    ci: Interval
    p_value: float | None
    why: str | None = None
    """Why `ci` is (None, None) while there is a shift (one case, or no spread)."""


def shift_of(cases: Sequence[PairedCase]) -> Shift:
    """The shift with its paired t interval and test. When no case moved at all, p = 1
    (the t statistic itself is 0/0 there) but there is no interval: [0, 0] would claim that
    no case of any other sample would move either (the flip rate's interval says how many
    might); the gate passes such a shift all the same, as it is within any bar.
    """
    values = [(c.a_value, c.b_value) for c in cases if c.change is not None]
    xs = [x for x, _ in values if x is not None]
    ys = [y for _, y in values if y is not None]
    diffs = [y - x for x, y in zip(xs, ys, strict=True)]
    paired = mean_interval(diffs, what="change")
    t = paired_t(diffs)
    p_value = 1.0 if diffs and all(d == 0 for d in diffs) else t.p_value
    return Shift(len(diffs), mean(xs), mean(ys), mean(diffs), paired.ci, p_value, paired.why)


def weighted_kappa_of(cases: Sequence[PairedCase]) -> float | None:
    """Quadratic-weighted κ of the two runs' scores over every score between the lowest
    and the highest seen (a score neither run gave keeps its place in the weights).
    """
    scores = [(c.a.score, c.b.score) for c in cases]
    a = [int(x) for x, _ in scores if x is not None]
    b = [int(y) for _, y in scores if y is not None]
    levels = list(range(min(a + b), max(a + b) + 1))
    return cohen_kappa(a, b, labels=levels, weights="quadratic")


def on_integer_scale(cases: Sequence[PairedCase], kind: RubricKind) -> bool:
    """Pointwise, and every paired score a whole number (in both runs)."""
    return (
        kind is RubricKind.POINTWISE
        and bool(cases)
        and all(
            s is not None and float(s).is_integer() for c in cases for s in (c.a.score, c.b.score)
        )
    )


def transitions_of(cases: Sequence[PairedCase], order: list[str]) -> dict[str, dict[str, int]]:
    """Cases per A label → B label, every pair of labels seen (0 included)."""
    table = {x: dict.fromkeys(order, 0) for x in order}
    for c in cases:
        table[c.a_label][c.b_label] += 1
    return table


def flips_of(cases: Sequence[PairedCase]) -> list[Flip]:
    """The cases whose label moved, largest |change| of the headline value first (those
    without a value last), then by id in natural order.
    """
    flipped = sorted(
        (c for c in cases if c.a_label != c.b_label),
        key=lambda c: (c.change is None, -abs(c.change or 0.0), natural_key(c.a.id)),
    )
    rows = []
    for c in flipped:
        fields: dict[str, Any] = {
            "id": c.a.id,
            "a": c.a_label,
            "b": c.b_label,
            "a_value": c.a_value,
            "b_value": c.b_value,
            "change": c.change,
        }
        if text := c.a.case or c.b.case:
            fields["case"] = text
        rows.append(Flip(**fields))
    return rows


def warnings_of(
    a: AuditedRun, b: AuditedRun, cases: Sequence[PairedCase], differences: dict[str, Difference]
) -> list[str]:
    """What may make the numbers mean less than they seem to."""
    warnings = []
    changed = sum(
        any(c.a.case[k] != c.b.case[k] for k in c.a.case.keys() & c.b.case.keys()) for c in cases
    )
    if changed:
        warnings.append(
            f"{changed} paired case(s) showed the judge different text in the two runs: "
            "their verdicts moved with the data, not only with the judge"
        )
    for run in (a, b):
        if not run.info:
            warnings.append(
                f"{run.path} has no run.json: only the models and the rubric are compared"
            )
    if not differences:
        warnings.append(
            "the two runs' judges are configured alike: what moved is the judge's own "
            "randomness, or nothing"
        )
    return warnings


def shift_gate(shift: Shift, max_shift: float) -> DriftGate:
    """--max-shift: fails when the shift is significant (its interval excludes 0) and
    |shift| > max_shift; passes a shift within the bar whether or not it has an interval;
    no verdict (None) for a larger shift without one.
    """
    low, high = shift.ci
    significant = None if low is None or high is None else bool(low > 0 or high < 0)
    passed = None
    if shift.shift is not None and abs(shift.shift) <= max_shift:
        passed = True
    elif significant is not None and shift.shift is not None:
        passed = not significant
    return DriftGate(
        metric="shift",
        max_shift=max_shift,
        shift=shift.shift,
        shift_ci=shift.ci,
        significant=significant,
        passed=passed,
    )


def measure_drift(a: AuditedRun, b: AuditedRun, *, max_shift: float | None = None) -> Drift:
    """Compare run B's verdicts with run A's, case by case (InputError when the runs are
    of different kinds or share no graded case).
    """
    kind = check_comparable(a, b)
    pairs, reasons, left_out = pair_cases(a.results, b.results)
    if not pairs:
        raise InputError(
            f"{a.path} and {b.path} share no case graded in both "
            f"({reasons.missing_in_a + reasons.missing_in_b} ids in one run only, "
            f"{reasons.failed_in_a + reasons.failed_in_b} failed)",
            hint="compare two runs of the same cases (with --anchor: the cases RUN_A judged)",
        )
    compared = compared_on(pairs, kind)
    cases = paired_cases(pairs, kind, compared)
    order = label_order({c.a_label for c in cases} | {c.b_label for c in cases}, compared)
    flips = flips_of(cases)
    shift = shift_of(cases)
    differences = differences_of(a, b)
    extra: dict[str, Any] = {}
    if on_integer_scale(cases, kind):
        extra["weighted_kappa"] = weighted_kappa_of(cases)
    if max_shift is not None:
        extra["gate"] = shift_gate(shift, max_shift)
    # Issue 35: the anchors' (identical outputs') shift is the judge's, beside the system's.
    split = split_shift(b, pairs, VALUE_METRIC[kind])
    extra.update(split.fields)
    no_interval = dict(split.no_interval)
    if shift.shift is not None and shift.why is not None:
        no_interval["shift"] = shift.why
    if no_interval:
        extra["no_interval"] = no_interval
    summary = DriftSummary(
        command=DRIFT,
        runs=DriftRuns(a=str(a.path), b=str(b.path)),
        kind=kind.value,
        compared=compared.value,
        value=VALUE_NAME[kind],
        differences=differences,
        n_paired=len(cases),
        n_flipped=len(flips),
        left_out=left_out,
        left_out_reasons=reasons,
        flip_rate=len(flips) / len(cases),
        flip_rate_ci=proportion_interval(len(flips), len(cases)),
        n_shift=shift.n,
        mean_a=shift.mean_a,
        mean_b=shift.mean_b,
        shift=shift.shift,
        shift_ci=shift.ci,
        shift_p_value=shift.p_value,
        kappa=cohen_kappa([c.a_label for c in cases], [c.b_label for c in cases], labels=order),
        labels=order,
        transitions=transitions_of(cases, order),
        warnings=warnings_of(a, b, cases, differences) + split.warnings,
        **extra,
    )
    return Drift(summary=summary, flips=flips)
