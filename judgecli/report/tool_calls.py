"""The tool-call check in every report: the "tool calls" tables (precision, recall and F1
over every call, with intervals and counts; by category), the headline's F1, each case's
matched, missed and extra calls in the HTML case view, and in JUnit a case's missed and
extra calls. Runs whose rubric checks no tool calls have none of it.
"""

from __future__ import annotations

from judgecli.inputs.tools import arguments_json
from judgecli.report.cells import Section, fmt_ci, fmt_pct, group_ci
from judgecli.report.escape import esc
from judgecli.result import CallCheck, CaseResult, CheckedCall
from judgecli.summary.run import RunSummary
from judgecli.summary.score import ScoreSummary
from judgecli.summary.tool_calls import ToolCallNumbers, ToolCallsSummary

NO_JUDGE = "none (the rubric only checks tool calls)"
"""Who judged a run whose rubric asks no judge, where a report names the judges."""
LISTED = 20
"""Calls of each kind (missed, extra) a case's JUnit text and HTML view list."""

MEANS = (
    "Each case's calls (every assistant turn's tool_calls) checked against its "
    "expected_tool_calls, {how}; each expected call matched at most once. Precision is the "
    "share of the calls made that were expected, recall the share of expected calls made, "
    "F1 their harmonic mean, all over every call of the run (micro-averaged). The 95% "
    "intervals come from resampling cases: the calls of one case are not independent."
)


def calls_of(s: RunSummary) -> ToolCallsSummary | None:
    """The run's tool-call numbers, when its rubric checks tool calls."""
    return s.tool_calls if isinstance(s, ScoreSummary) else None


def tool_calls_line(s: RunSummary) -> str | None:
    """The headline's part: `tool-call F1 83.3% [61.2%, 94.1%]`; None without a check."""
    calls = calls_of(s)
    if calls is None or calls.f1 is None:
        return None
    return f"tool-call F1 {fmt_pct(calls.f1)} {fmt_ci(calls.f1_ci, pct=True)}"


def number_rows(numbers: ToolCallNumbers) -> list[tuple[str, str, str]]:
    """Precision, recall and F1 with their intervals."""
    return [
        ("precision", fmt_pct(numbers.precision), fmt_ci(numbers.precision_ci, pct=True)),
        ("recall", fmt_pct(numbers.recall), fmt_ci(numbers.recall_ci, pct=True)),
        ("F1", fmt_pct(numbers.f1), fmt_ci(numbers.f1_ci, pct=True)),
    ]


def tool_call_sections(s: RunSummary) -> list[Section]:
    """The tool-call tables of a run with the check: the numbers, then by category."""
    calls = calls_of(s)
    if calls is None:
        return []
    rows = [
        ("cases checked", f"{calls.cases} of {calls.cases + calls.unchecked}", ""),
        ("  verdict by the check", str(calls.decided), ""),
        *number_rows(calls),
        ("calls expected / made", f"{calls.expected} / {calls.actual}", ""),
        ("matched / missed / extra", f"{calls.matched} / {calls.missed} / {calls.extra}", ""),
        ("cases with every call right", f"{calls.perfect} of {calls.cases}", ""),
    ]
    how = f"arguments {calls.match}, order {calls.order}"
    sections = [
        Section("tool calls", ["measure", "value", "95% CI"], rows, note=MEANS.format(how=how))
    ]
    if calls.by_category:
        sections.append(
            Section(
                "tool calls by category",
                ["category", "cases", "precision", "recall", "F1", "95% CI"],
                [
                    (
                        name,
                        str(c.cases),
                        fmt_pct(c.precision),
                        fmt_pct(c.recall),
                        fmt_pct(c.f1),
                        group_ci(c.f1_ci, c.cases, pct=True),
                    )
                    for name, c in calls.by_category.items()
                ],
            )
        )
    return sections


def call_text(call: CheckedCall) -> str:
    """A call as a reader checks it: `name(arguments)`, schemas after the arguments."""
    shown = arguments_json(call.arguments)
    if call.argument_schemas:
        schemas = ", ".join(
            f"{name} ~ {arguments_json(schema)}" for name, schema in call.argument_schemas.items()
        )
        shown = f"{shown}; {schemas}" if shown else schemas
    return f"{call.name}({shown})"


def findings(check: CallCheck) -> str:
    """`1 missed, 2 extra` (or `every expected call made, no other`)."""
    if check.passed:
        return "every expected call made, no other" if check.matched else "none expected, none made"
    parts = [f"{len(check.missed)} missed"] * bool(check.missed)
    parts += [f"{len(check.extra)} extra"] * bool(check.extra)
    return ", ".join(parts)


def call_lines(check: CallCheck) -> list[str]:
    """Each missed and extra call on a line (up to LISTED of each)."""
    lines = [f"missed: {call_text(c)}" for c in check.missed[:LISTED]]
    lines += [f"extra: {call_text(c)}" for c in check.extra[:LISTED]]
    more = max(0, len(check.missed) - LISTED) + max(0, len(check.extra) - LISTED)
    if more:
        lines.append(f"... and {more} more in results.jsonl")
    return lines


def junit_text(result: CaseResult) -> str | None:
    """A checked case's calls for its JUnit testcase: what the check found, and each missed
    and extra call; None for a case that was not checked.
    """
    check = result.tool_calls
    if check is None:
        return None
    who = "the check decided this case" if check.decided else "the judge decided this case"
    head = f"tool calls: {len(check.matched)} matched, {findings(check)} ({who})"
    return "\n".join([head, *call_lines(check)])


def junit_message(result: CaseResult) -> str | None:
    """The failure message of a case the check decided against: `tool calls: 1 missed`."""
    check = result.tool_calls
    if check is None or not check.decided or check.passed:
        return None
    return f"tool calls: {findings(check)}"


def case_calls_html(result: CaseResult) -> str:
    """A checked case's calls in the HTML case view: matched, missed and extra, escaped."""
    check = result.tool_calls
    if check is None:
        return ""
    who = "decided by the check" if check.decided else "beside the judge's verdict"
    groups = [
        ("matched", check.matched),
        ("missed", check.missed[:LISTED]),
        ("extra", check.extra[:LISTED]),
    ]
    lists = "".join(
        f'<h5>{label} ({len(calls)})</h5><ul class="calls {label}">'
        + "".join(f"<li><code>{esc(call_text(c))}</code>{where(c)}</li>" for c in calls)
        + "</ul>"
        for label, calls in groups
        if calls
    )
    return (
        f'<div class="case-field tool-calls"><h5>tool calls: {esc(findings(check))} '
        f"({who})</h5>{lists}</div>"
    )


def where(call: CheckedCall) -> str:
    """Where a call sits: `call 2 in messages[3]` (the second call made, in the case's
    messages at index 3), `expected_tool_calls[0]`: indexes as in the case's file and
    results.jsonl, the call counted from 1 as a reader counts them.
    """
    bits = []
    if call.call is not None:
        made = f"call {call.call + 1}"
        bits.append(made if call.message is None else f"{made} in messages[{call.message}]")
    if call.expected is not None:
        bits.append(f"expected_tool_calls[{call.expected}]")
    return f' <span class="muted">({esc(", ".join(bits))})</span>' if bits else ""
