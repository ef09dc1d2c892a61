"""A run's tool-call check → summary.json's `tool_calls`: precision, recall and F1
micro-averaged over every call of the cases checked, with 95% intervals from resampling
cases, the counts behind them, and the same per category (docs/tool-calls.md).

A case counts when its calls were checked (results.jsonl's `tool_calls`): it has
`expected_tool_calls` and the rubric a `tool_calls` check, whatever a judge said of it (a
judge's failure does not change the calls a run made). A case without expectations is not
checked, and is counted as `unchecked`.

The three numbers are proportions (of calls made, of calls expected, of both), so by the
one rule of `stats.interval_rule` each has an interval whenever it has a value, inside
[0, 1] and never a single point: Wilson's, at the effective number of independent calls
that resampling the cases implies (the calls of one case are not independent trials;
`stats.micro_f1`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from judgecli.result import CallCheck, CaseResult
from judgecli.rubric import Rubric
from judgecli.stats.intervals import Interval
from judgecli.stats.micro_f1 import MatchCounts, micro_estimates
from judgecli.stats.scores import NO_CATEGORY
from judgecli.summary.parts import Record


class ToolCallNumbers(Record):
    """Precision, recall and F1 over the calls of some checked cases, and their counts."""

    cases: int
    """Cases whose calls were checked."""
    expected: int
    """Calls the cases expected (Σ of their `expected_tool_calls`)."""
    actual: int
    """Calls the runs made."""
    matched: int
    """Expected calls made: true positives."""
    missed: int
    """Expected calls not made: false negatives (expected − matched)."""
    extra: int
    """Calls made that match no expected call: false positives (actual − matched)."""
    precision: float | None
    """matched / actual (null when no call was made)."""
    precision_ci: Interval
    recall: float | None
    """matched / expected (null when no call was expected)."""
    recall_ci: Interval
    f1: float | None
    """2·matched / (expected + actual), the harmonic mean of the two (null when no call was
    expected or made)."""
    f1_ci: Interval


class ToolCallsSummary(ToolCallNumbers):
    """summary.json's `tool_calls`: the run's numbers, how calls were matched, and by
    category when the cases carry more than one.
    """

    match: str
    """The rubric's `tool_calls.match`: exact or subset."""
    order: str
    """The rubric's `tool_calls.order`: any or strict."""
    perfect: int
    """Checked cases that made every expected call and no other."""
    decided: int
    """Checked cases whose verdict is the check's (no judge asked)."""
    unchecked: int
    """Cases of the run that were not checked (no `expected_tool_calls`)."""
    by_category: dict[str, ToolCallNumbers]


def counts_of(check: CallCheck) -> MatchCounts:
    """A case's check as the counts the statistics pool."""
    matched = len(check.matched)
    return MatchCounts(
        matched=matched,
        expected=matched + len(check.missed),
        made=matched + len(check.extra),
    )


def call_numbers(checks: Sequence[CallCheck], *, seed: int = 0) -> ToolCallNumbers:
    """The micro-averaged numbers of some checked cases, each with its interval."""
    cases = [counts_of(c) for c in checks]
    estimates = micro_estimates(cases, seed=seed)
    numbers: dict[str, float | Interval | None] = {}
    for name, found in estimates.items():
        numbers |= {name: found.value, f"{name}_ci": found.ci}
    matched = sum(c.matched for c in cases)
    expected = sum(c.expected for c in cases)
    actual = sum(c.made for c in cases)
    return ToolCallNumbers(
        cases=len(cases),
        expected=expected,
        actual=actual,
        matched=matched,
        missed=expected - matched,
        extra=actual - matched,
        **numbers,
    )


def summarize_tool_calls(
    results: Iterable[CaseResult], rubric: Rubric, *, seed: int = 0
) -> ToolCallsSummary | None:
    """The run's `tool_calls`; None when its rubric checks no tool calls."""
    if rubric.tool_calls is None:
        return None
    rows = list(results)
    checked = [r for r in rows if r.tool_calls is not None]
    checks = [r.tool_calls for r in checked if r.tool_calls is not None]
    categories: dict[str, list[CallCheck]] = {}
    for r in checked:
        assert r.tool_calls is not None
        categories.setdefault(r.category or NO_CATEGORY, []).append(r.tool_calls)
    by_category = (
        {name: call_numbers(group, seed=seed) for name, group in sorted(categories.items())}
        if len(categories) > 1
        else {}
    )
    return ToolCallsSummary(
        **call_numbers(checks, seed=seed).model_dump(),
        match=rubric.tool_calls.match.value,
        order=rubric.tool_calls.order.value,
        perfect=sum(c.passed for c in checks),
        decided=sum(c.decided for c in checks),
        unchecked=len(rows) - len(checked),
        by_category=by_category,
    )
