"""Why a gate's evidence cannot decide, and what to do about it: the third outcome of a gate
(exit 3) beside passed (0) and failed on judged evidence (1).

A check is undecided when the number it compares does not exist on this run's data: a
statistic undefined there (κ when every human label is one class, a win rate when every
case was dropped), or the bound `--on lower-bound` compares when the statistic has no
interval (too few informative cases). A whole pairwise gate is undecided when the judge is
below the position-consistency floor (`consistency`). An absent number is no evidence
either way, so it never passes and never fails a gate.
"""

from __future__ import annotations

from dataclasses import dataclass

from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.gate_records import GateCheck, GateMetric, GateOn
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.run import RunSummary

KAPPAS = frozenset({GateMetric.COHEN_KAPPA, GateMetric.WEIGHTED_KAPPA})

NAMES = {
    GateMetric.COHEN_KAPPA: "κ",
    GateMetric.WEIGHTED_KAPPA: "weighted κ",
    GateMetric.PASS_K: "pass^K",
    GateMetric.CHECKLIST_SCORE: "checklist score",
    GateMetric.TOOL_F1: "tool-call F1",
    GateMetric.TOOL_RECALL: "tool-call recall",
    GateMetric.TOOL_PRECISION: "tool-call precision",
}
# Why a tool-call number has no value: its denominator is 0 (docs/tool-calls.md#the-numbers).
NO_CALLS = {
    GateMetric.TOOL_F1: "no checked case expected a call or made one",
    GateMetric.TOOL_RECALL: "no checked case expected a call (each has expected_tool_calls: [])",
    GateMetric.TOOL_PRECISION: "no checked case made a tool call",
}


@dataclass(frozen=True)
class Undecided:
    """Why one check cannot decide, and what to do."""

    reason: str
    hint: str


def name_of(metric: GateMetric) -> str:
    """A gated number's name in a reason."""
    return NAMES.get(metric, metric.value)


def one_class(summary: RunSummary) -> str | None:
    """The one label every human gave, when a calibrate run's labels are all one class
    (κ then cannot tell agreement from chance: it is undefined, or 0 at best); else None.
    """
    if not isinstance(summary, CalibrateSummary) or summary.confusion is None:
        return None
    used = [
        label
        for label, row in zip(summary.confusion.labels, summary.confusion.matrix, strict=True)
        if sum(row)
    ]
    return used[0] if len(used) == 1 else None


def kappa_undecided(summary: RunSummary, metric: GateMetric) -> Undecided | None:
    """A κ check on labels of one class: undecided whatever κ came out as."""
    label = one_class(summary) if metric in KAPPAS else None
    if label is None:
        return None
    return Undecided(
        f"{name_of(metric)} is undefined: every human label is {label!r} (one class), so "
        "agreement beyond chance cannot be measured",
        "label cases of more than one class (`judge review export` picks cases to label), "
        "or gate on --min-accuracy",
    )


def no_number(summary: RunSummary, metric: GateMetric) -> Undecided:
    """The check's number is undefined on this run's data."""
    name = name_of(metric)
    dropped = (
        isinstance(summary, PairwiseSummary)
        and metric in (GateMetric.WIN_RATE, GateMetric.LOSS_RATE)
        and summary.n_ok > 0
        and summary.dropped == summary.n_ok
    )
    if dropped:
        return Undecided(
            f"no {name}: the two orders disagreed on every graded pair and --flip-policy "
            "drop left each one out",
            "use --flip-policy tie, or a judge that gives the same verdict in both orders",
        )
    if metric in NO_CALLS:
        return Undecided(
            f"{name} is undefined: {NO_CALLS[metric]}",
            "gate on another of --min-tool-f1, --min-tool-recall, --min-tool-precision, or "
            "check runs that expect and make calls",
        )
    return Undecided(
        f"{name} is n/a on this run's data",
        "the report's tables show which numbers the data could not define; judge more "
        "(and more varied) cases, or gate on another number",
    )


def no_bound(metric: GateMetric, point: float | None, on: GateOn) -> Undecided:
    """The interval whose end `--on` compares does not exist."""
    at = "" if point is None else f" ({point:.3g})"
    return Undecided(
        f"{name_of(metric)}{at} has no 95% interval on this data (too few informative "
        f"cases), so --on {on.value} has no bound to compare",
        "judge more cases, or gate on the point estimate (--on point)",
    )


def no_sequence(metric: GateMetric) -> Undecided:
    """--on sequential for a number the run's confidence sequence did not follow."""
    return Undecided(
        f"the run's confidence sequence does not follow {name_of(metric)}",
        "re-run with --sequential and this threshold, or gate with --on point / lower-bound",
    )


def undecided_check(made: GateCheck, why: Undecided) -> tuple[GateCheck, Undecided]:
    """The check marked undecided for `why` (its number stands, its pass does not)."""
    update = {"passed": False, "decided": False, "undecided": why.reason}
    return made.model_copy(update=update), why
