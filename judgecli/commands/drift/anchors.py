"""The anchors of a drift: paired cases whose text the judge saw is byte-identical in both
runs (results.jsonl's `case`, every field equal). Their change measures the judge's own
shift, the other cases' the system's (docs/drift.md, "Judge shift vs system shift"). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judgecli.commands.drift.audit import AuditedRun
from judgecli.deciding.outcomes import case_value
from judgecli.result import CaseResult
from judgecli.summary.gate_records import GateCheck, GateMetric
from judgecli.summary.judge_shift import (
    SHIFT_METRICS,
    MeanShift,
    explained_warning,
    gate_explained,
    mean_shift,
)

Pair = tuple[CaseResult, CaseResult]
"""A case graded in both runs: (A's result, B's result)."""


def is_anchor(pair: Pair) -> bool:
    """The judge was shown the same text in both runs: the same fields, each byte-equal
    (a case without recorded text is no anchor: nothing shows it did not change).
    """
    a, b = pair
    return bool(a.case) and a.case == b.case


def gated_check(b: AuditedRun) -> GateCheck | None:
    """Run B's first gate check when it reads a mean of per-case values (pass rate, mean,
    win rate): the number the judge's shift is measured on; None otherwise.
    """
    gate = b.summary.gate
    if gate is None or not gate.checks:
        return None
    check = gate.checks[0]
    return check if check.metric in SHIFT_METRICS else None


def changes(pairs: Sequence[Pair], metric: GateMetric) -> list[float]:
    """B − A of each case's value for `metric`, over the cases with a value in both."""
    out = []
    for a, b in pairs:
        x, y = case_value(a, metric), case_value(b, metric)
        if x is not None and y is not None:
            out.append(y - x)
    return out


@dataclass(frozen=True)
class ShiftSplit:
    """The judge's shift (anchors) and the system's (the other cases), and the keys and
    warnings they add to a drift's summary.
    """

    judge: MeanShift
    system: MeanShift
    fields: dict[str, Any]
    warnings: list[str]
    no_interval: dict[str, str]
    """Why judge_shift_ci or system_shift_ci is null while there is a shift."""


def split_shift(b: AuditedRun, pairs: Sequence[Pair], headline: GateMetric) -> ShiftSplit:
    """The judge's shift over the anchors beside the system's over the other cases, on the
    scale of run B's gate (the drift's `headline` value without one), and the warning when
    the judge's shift could explain B's gate decision.
    """
    check = gated_check(b)
    metric = check.metric if check is not None else headline
    anchors = [p for p in pairs if is_anchor(p)]
    others = [p for p in pairs if not is_anchor(p)]
    judge = mean_shift(changes(anchors, metric))
    system = mean_shift(changes(others, metric))
    fields: dict[str, Any] = {
        "shift_scale": metric.value,
        "n_identical": judge.n,
        "judge_shift": judge.shift,
        "judge_shift_ci": judge.ci,
        "n_system": system.n,
        "system_shift": system.shift,
        "system_shift_ci": system.ci,
    }
    warnings = []
    if not anchors and others:
        warnings.append(
            "no paired case showed the judge byte-identical text in both runs: the judge's "
            "shift cannot be told from the system's (keep some outputs unchanged as anchors)"
        )
    if check is not None:
        explained = gate_explained(check, judge)
        fields["judge_shift_gate"] = explained
        if warning := explained_warning(explained, judge, str(b.path)):
            warnings.append(warning)
    no_interval = {
        key: part.why
        for key, part in (("judge_shift", judge), ("system_shift", system))
        if part.shift is not None and part.why is not None
    }
    return ShiftSplit(judge, system, fields, warnings, no_interval)
