"""The pytest session's numbers as the plugin prints them at the end (its `judge` section of
the terminal summary): a table per rubric, every case then each test module, the gate's
verdict, and why the session cannot be trusted when it cannot (calls the judge could not
grade, a judge that could not be made, an xdist worker lost).
"""

from __future__ import annotations

from judgecli.api.pytest_cases import CallKind
from judgecli.api.pytest_gate import Compared, Graded, SessionOutcome, Table
from judgecli.errors import ExitCode
from judgecli.stats.intervals import Interval
from judgecli.summary.gate_records import GateCheck, GateMetric, GateOn, GateOutcome

Line = tuple[str, str | None]
"""A line of the section, and its colour (a TerminalWriter markup: "red", "green")."""
NONE = "-"
"""An interval cell without one (a footnote below the table says why)."""
SHOWN = 5
"""Calls the judge could not grade listed by name (an outage fails every one)."""
COLOUR = {GateOutcome.PASSED: "green", GateOutcome.FAILED: "red", GateOutcome.UNDECIDED: "red"}


def percent(value: float | None) -> str:
    """A rate as a percentage, one decimal."""
    return "n/a" if value is None else f"{value:.1%}"


def span(ci: Interval, *, rate: bool) -> str:
    """An interval as `[low, high]`, or `-` without one."""
    low, high = ci
    if low is None or high is None:
        return NONE
    return f"[{percent(low)}, {percent(high)}]" if rate else f"[{low:.2f}, {high:.2f}]"


def grid(rows: list[list[str]]) -> list[str]:
    """Rows of cells as aligned lines: the first column to the left, the others right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)
        ).rstrip()
        for row in rows
    ]


def graded_table(table: Table) -> list[str]:
    """A rubric's graded cases: cases, pass rate, its interval, mean score, its interval."""
    scored = table.scale is not None
    head = ["", "cases", "pass rate", "95% CI"] + (["mean", "95% CI"] if scored else [])
    rows = [head]
    notes = []
    for name, numbers in table.rows:
        assert isinstance(numbers, Graded)
        row = [f"  {name}", str(numbers.cases), percent(numbers.pass_rate)]
        row.append(span(numbers.pass_rate_ci, rate=True))
        if scored:
            row.append(NONE if numbers.mean is None else f"{numbers.mean:.2f}")
            row.append(span(numbers.mean_ci, rate=False))
            if numbers.no_interval:
                notes.append(f"  the mean of {name} has no interval: {numbers.no_interval}")
        rows.append(row)
    return grid(rows) + notes


def compared_table(table: Table) -> list[str]:
    """A rubric's compared pairs: pairs, NEW's win rate, its interval, wins, losses, ties."""
    rows = [["", "pairs", "win rate", "95% CI", "won", "lost", "tied"]]
    dropped = []
    for name, numbers in table.rows:
        assert isinstance(numbers, Compared)
        rows.append(
            [
                f"  {name}",
                str(numbers.pairs),
                percent(numbers.win_rate),
                span(numbers.win_rate_ci, rate=True),
                *(str(n) for n in (numbers.wins, numbers.losses, numbers.ties)),
            ]
        )
        if numbers.dropped:
            dropped.append(f"  {name}: {numbers.dropped} pairs dropped (the orders disagreed)")
    return grid(rows) + dropped


def heading(table: Table) -> str:
    """What a table counts: the rubric, how, and by which judge."""
    what = "compared with" if table.kind is CallKind.COMPARE else "graded with"
    scale = ""
    if table.scale is not None:
        scale = f" (scale {table.scale[0]:g}-{table.scale[1]:g})"
    return f"{what} {table.rubric}{scale}, judged by {'; '.join(table.judges)}"


def check_line(made: GateCheck) -> str:
    """One threshold against its number: `pass rate 70.0% >= 60.0%`."""
    rate = made.metric is not GateMetric.MEAN
    name = made.metric.value.replace("_", " ")
    if made.on is GateOn.LOWER_BOUND:
        name = f"{name}'s 95% lower bound"
    if made.value is None:
        return f"{name}: none (threshold {bar(made.threshold, rate=rate)})"
    sign = ">=" if made.passed else "<"
    return f"{name} {bar(made.value, rate=rate)} {sign} {bar(made.threshold, rate=rate)}"


def bar(value: float, *, rate: bool) -> str:
    """A gated number or its threshold."""
    return percent(value) if rate else f"{value:.2f}"


def gate_lines(outcome: SessionOutcome) -> list[Line]:
    """The gate's verdict: each check, and why it cannot decide when it cannot."""
    if outcome.gate is None:
        return []
    checks = "; ".join(check_line(c) for c in outcome.checks)
    words = {
        GateOutcome.PASSED: "passed",
        GateOutcome.FAILED: "FAILED on judged evidence",
        GateOutcome.UNDECIDED: "cannot decide",
    }
    lines: list[Line] = [(f"gate {words[outcome.gate]}: {checks}", COLOUR[outcome.gate])]
    if outcome.gate is GateOutcome.UNDECIDED:
        for why in outcome.undecided:
            lines += [(f"  {why.reason}", "red"), (f"  hint: {why.hint}", None)]
    return lines


def trouble_lines(outcome: SessionOutcome) -> list[Line]:
    """Why the session is incomplete or its judge unusable, when it is."""
    lines: list[Line] = []
    for said in outcome.unmade:
        first, *rest = said.splitlines()
        lines += [(first, "red"), *((line, None) for line in rest)]
    if outcome.ungraded:
        n = len(outcome.ungraded)
        lines.append((f"the judge could not grade {n} judged call{'s' * (n != 1)}:", "red"))
        shown = outcome.ungraded[:SHOWN]
        lines += [(f"  {c.test or c.module}: {c.error}", None) for c in shown]
        if n > SHOWN:
            lines.append((f"  ... and {n - SHOWN} more (the errors above)", None))
    for worker in outcome.lost:
        lines.append((f"xdist worker {worker} went down before sending its judged cases", "red"))
    return lines


def exit_line(outcome: SessionOutcome) -> list[Line]:
    """What the session's exit status became, when the judge changed it."""
    if outcome.exit_code is ExitCode.OK:
        return []
    why = {
        ExitCode.BAD_INPUT: "exit 4 (pytest's usage error): set up the judge, then run again",
        ExitCode.INCOMPLETE: "exit 3: the session cannot be judged on this evidence",
        ExitCode.GATE_FAILED: "exit 1: the judge's gate failed",
    }
    return [(why[outcome.exit_code], "red")]


def summary_lines(outcome: SessionOutcome) -> list[Line]:
    """The whole section."""
    lines: list[Line] = []
    for table in outcome.tables:
        lines.append((heading(table), None))
        body = compared_table(table) if table.kind is CallKind.COMPARE else graded_table(table)
        lines += [(line, None) for line in body]
    graded_tables = [t for t in outcome.tables if t.kind is CallKind.GRADE]
    if len(graded_tables) > 1 and outcome.pooled is not None:
        pooled = outcome.pooled
        lines.append(
            (
                f"every graded case: {pooled.cases}, pass rate {percent(pooled.pass_rate)} "
                f"{span(pooled.pass_rate_ci, rate=True)}",
                None,
            )
        )
    if not (outcome.tables or outcome.unmade or outcome.ungraded):
        lines.append(("no test called llm_judge: nothing was judged", None))
    return lines + trouble_lines(outcome) + gate_lines(outcome) + exit_line(outcome)
