"""A qualify run's reports: report.md (one row per set), report.html (the same table) and
results.junit.xml (one testcase per set: a failure when its agreement's lower bound is
below --min-agreement; the run itself in error when it is incomplete). Pure, no I/O.
"""

from __future__ import annotations

from judgecli.report.escape import esc
from judgecli.report.junit import incomplete_case, undecided_gate_case
from judgecli.report.junit_xml import Ending, JunitCase, Outcome, junit_document, name_part
from judgecli.stats.intervals import Interval
from judgecli.summary.qualify import QualifySummary, SetQualification

COLUMNS = ("set", "n", "agreement", "κ", "position consistency", "longer wins", "floor")


def share(value: float | None, ci: Interval | None = None) -> str:
    """`81.0% [74.9%, 86.0%]`, `81.0%` without an interval, `–` without a value."""
    if value is None:
        return "–"
    if ci is None or ci[0] is None or ci[1] is None:
        return f"{value:.1%}"
    return f"{value:.1%} [{ci[0]:.1%}, {ci[1]:.1%}]"


def number(value: float | None, ci: Interval | None = None) -> str:
    """`0.62 [0.51, 0.72]`, as `share` for a number that is not a share."""
    if value is None:
        return "–"
    if ci is None or ci[0] is None or ci[1] is None:
        return f"{value:.2f}"
    return f"{value:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"


def floor_cell(s: SetQualification) -> str:
    """Whether the set's lower bound reaches the floor."""
    return {True: "pass", False: "FAIL", None: "–"}[s.passed]


def row(s: SetQualification) -> list[str]:
    """A set's cells, in COLUMNS' order."""
    return [
        s.name,
        str(s.n),
        share(s.agreement, s.agreement_ci),
        number(s.kappa, s.kappa_ci),
        share(s.position_consistency, s.position_consistency_ci),
        share(s.longer_wins_rate, s.longer_wins_rate_ci),
        floor_cell(s),
    ]


def qualify_headline(summary: QualifySummary) -> str:
    """One line: what was qualified, and the verdict."""
    judge = ", ".join(summary.models)
    what = f"judge {judge} with rubric {summary.rubric!r} on {len(summary.sets)} set(s)"
    if summary.incomplete:
        return f"INCOMPLETE — {what}: {summary.incomplete}"
    gate = summary.gate
    if gate is None:
        return f"MEASURED — {what} (no --min-agreement: no verdict)"
    if not gate.decided:
        return f"UNDECIDED — {what}: {gate.undecided}"
    if gate.passed:
        return f"QUALIFIED — {what}: every agreement lower bound ≥ {gate.min_agreement:g}"
    return (
        f"NOT QUALIFIED — {what}: agreement lower bound below {gate.min_agreement:g} on "
        f"{', '.join(gate.failed_sets)}"
    )


def render_qualify_md(summary: QualifySummary) -> str:
    """report.md: the headline, the table of sets, the warnings."""
    lines = [f"# judge qualify: {summary.rubric}", "", qualify_headline(summary), ""]
    lines += ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row(s)) + " |" for s in summary.sets]
    lines += ["", "Intervals are 95%; the gate reads the agreement's lower bound.", ""]
    lines += [f"- warning: {w}" for w in summary.warnings]
    return "\n".join(lines).rstrip() + "\n"


def render_qualify_html(summary: QualifySummary) -> str:
    """report.html: the same, as a standalone page."""
    head = "".join(f"<th>{esc(c)}</th>" for c in COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in row(s)) + "</tr>" for s in summary.sets
    )
    warnings = "".join(f"<li>{esc(w)}</li>" for w in summary.warnings)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>judge qualify: {esc(summary.rubric)}</title></head><body>"
        f"<h1>judge qualify: {esc(summary.rubric)}</h1><p>{esc(qualify_headline(summary))}</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        "<p>Intervals are 95%; the gate reads the agreement's lower bound.</p>"
        + (f"<ul>{warnings}</ul>" if warnings else "")
        + "</body></html>\n"
    )


def set_case(base: str, s: SetQualification) -> JunitCase:
    """One set as a testcase: failed below the floor, passed otherwise."""
    text = " | ".join(f"{c}: {v}" for c, v in zip(COLUMNS, row(s), strict=True))
    if s.passed is False:
        ending = Ending(
            Outcome.FAILURE, "agreement lower bound below the floor", "Unqualified", text
        )
    else:
        ending = Ending(out=text)
    return JunitCase(base, s.name, 0.0, ending)


def render_qualify_junit(summary: QualifySummary) -> str:
    """results.junit.xml: a testcase per set, or the run in error when it is incomplete."""
    base = f"judge.qualify.{name_part(summary.rubric)}"
    if summary.incomplete:
        cases = [incomplete_case(base, summary.incomplete)]
    elif summary.gate is not None and not summary.gate.decided:
        cases = [undecided_gate_case(base, summary.gate.undecided, summary.gate.hint, "")]
    else:
        cases = [set_case(base, s) for s in summary.sets]
    return junit_document([("qualify", cases)])
