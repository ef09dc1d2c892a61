"""A run as JUnit XML, the test-report format CI systems read. Pure, no I/O.

One `<testcase>` per case, so a CI's test view lists the cases NEW lost or that failed a
rubric's bar, with the judge's reasoning as the failure text:

* score/binary: `passed` True → pass; False → `<failure>`; None (no pass mark) → pass, the
  verdict in `<system-out>`.
* pairwise: NEW wins or ties → pass; OLD wins → `<failure>` with every judge's reasoning in
  every order; no verdict (the flip policy "drop" left it out of the win rate) → `<skipped>`.
* calibrate: the answers are not under test, the judge is, and one disagreement with a
  human is not a failure of the judge (its agreement over all cases is). So a graded case
  is a pass carrying its verdict, the human labels and whether they agree in
  `<system-out>`, and the calibrate gate (κ, accuracy) is what fails.
* a case the judge could not grade → `<error>` with the reason and every raw reply.
* --repeats K: a case whose K verdicts disagreed (`stable` false) says so in `<system-out>`,
  with each repeat's verdict; its outcome is its aggregated verdict's, as above.

When the run had a gate, a separate suite holds one testcase named "gate" that fails with
the failed checks as its message. A run the judge could not finish (summary.incomplete)
has no verdict: a suite of its own then holds one testcase named "run" in `<error>`, not a pass
or a failure, since an outage is not a regression.

Element and attribute names follow the Jenkins xunit plugin's junit-10.xsd, which GitLab,
GitHub reporters and Jenkins all read. No timestamp is written, so the same results always
give the same bytes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from judgecli.debias import to_winner
from judgecli.report.decision import metric_name
from judgecli.report.stability import repeats_text
from judgecli.result import CaseResult, CaseStatus, Judgement, Winner
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.facts import GateCheck, GateOn, GateResult
from judgecli.summary.run import RunSummary

# XML 1.0 allows only these characters (the spec's Char production, section 2.2). Judge
# replies can hold others (NUL, terminal escapes, lone surrogates from JSON "\ud800"), and
# one of them makes the whole report unreadable, so they are removed, not escaped.
NOT_XML_CHAR = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

# A dot in classname is a package separator to Jenkins and GitLab; a rubric or category
# name keeps its letters, digits, "_" and "-", and anything else becomes "-".
NOT_NAME_CHAR = re.compile(r"[^\w-]+")

ERROR_MESSAGE = "the judge could not grade this case"
OLD_WINS_MESSAGE = "OLD wins: NEW is worse on this case"

# (minimum, passed) → how the value compared with the threshold.
COMPARISON = {(True, True): ">=", (True, False): "<", (False, True): "<=", (False, False): ">"}


class Outcome(StrEnum):
    """How a testcase ended; the value is its child element's name (none for a pass)."""

    PASSED = "passed"
    FAILURE = "failure"
    ERROR = "error"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class JunitCase:
    """One `<testcase>` before it becomes XML."""

    classname: str
    name: str
    time_s: float
    outcome: Outcome = Outcome.PASSED
    message: str | None = None
    kind: str | None = None
    """The `type` attribute of `<failure>`/`<error>`."""
    text: str | None = None
    """The body of `<failure>`/`<error>`: reasoning, raw replies."""
    out: str | None = None
    """`<system-out>`: the verdict of a case that passed."""


def render_junit(summary: RunSummary, results: Sequence[CaseResult]) -> str:
    """The run as a JUnit XML document (UTF-8 declared; write it as UTF-8)."""
    base = ".".join(["judge", name_part(summary.command), name_part(summary.rubric)])
    suites: list[tuple[str, list[JunitCase]]] = []
    if summary.incomplete is not None:
        suites.append((f"{base}.run", [incomplete_case(base, summary.incomplete)]))
    elif summary.gate is not None:
        suites.append((f"{base}.gate", [gate_case(base, summary.gate)]))
    # Calibrate measures the judge, not the answers: a case is information, not a test.
    informational = isinstance(summary, CalibrateSummary)
    cases = [case_of(base, r, informational=informational) for r in results]
    suites.append((base, cases))

    every = [c for _, group in suites for c in group]
    root = ET.Element("testsuites", counts(every, name="judge", skipped=False))
    for name, group in suites:
        suite = ET.SubElement(root, "testsuite", counts(group, name=name, skipped=True))
        for case in group:
            add_testcase(suite, case)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def case_of(base: str, result: CaseResult, *, informational: bool) -> JunitCase:
    """One result as a testcase (see the module docstring for the rules)."""
    classname = f"{base}.{name_part(result.category)}" if result.category else base
    case = JunitCase(
        classname=classname,
        name=clean(result.id),
        time_s=sum(j.latency_s for j in result.all_judgements),
    )
    if result.status is CaseStatus.FAILED:
        return error_case(case, result)
    pairwise = result.winner is not None or any(j.order is not None for j in result.judgements)
    if informational:
        case = replace(case, out=calibrate_line(result, pairwise=pairwise))
    elif pairwise:
        case = pairwise_case(case, result)
    else:
        case = pointwise_case(case, result)
    if result.stable is False:
        # Information beside the verdict: the aggregate still decides pass or fail.
        note = unstable_note(result)
        case = replace(case, out=f"{case.out}\n\n{note}" if case.out else note)
    return case


def unstable_note(result: CaseResult) -> str:
    """`--repeats`: that the case's K verdicts disagreed, and what each one was."""
    repeats = result.repeats or []
    spread = "" if result.spread is None else f"; spread {number(result.spread)}"
    return (
        f"unstable: the judge's {len(repeats)} verdicts on this case disagreed "
        f"({clean(repeats_text(repeats))}{spread}); the case's verdict is their aggregate"
    )


def error_case(case: JunitCase, result: CaseResult) -> JunitCase:
    """A case with no verdict: the reason, then each judge's error and raw reply."""
    parts = [result.error or "no reason recorded"]
    for j in result.judgements:
        if j.verdict is None:
            reply = j.raw if j.raw is not None else "(no reply)"
            parts.append(f"--- {who(j)}: {j.error or 'no verdict'}\nraw reply:\n{reply}")
    return replace(
        case,
        outcome=Outcome.ERROR,
        message=ERROR_MESSAGE,
        kind="JudgeFailed",
        text="\n\n".join(parts),
    )


def pointwise_case(case: JunitCase, result: CaseResult) -> JunitCase:
    """Score and binary rubrics: the rubric's bar decides."""
    if result.passed is False:
        return replace(
            case,
            outcome=Outcome.FAILURE,
            message=below_bar(result),
            kind="NotPassed",
            text=reasoning(result.judgements),
        )
    if result.passed is None:
        # No pass mark: nothing to fail, but the grade is what the reader came for.
        detail = reasoning(result.judgements)
        return replace(case, out=f"{verdict_line(result, pairwise=False)}\n\n{detail}")
    return replace(case, out=verdict_line(result, pairwise=False))


def pairwise_case(case: JunitCase, result: CaseResult) -> JunitCase:
    """A/B comparisons: only a loss fails; a tie is not worse."""
    if result.winner is Winner.OLD:
        return replace(
            case,
            outcome=Outcome.FAILURE,
            message=OLD_WINS_MESSAGE,
            kind="OldWins",
            text=f"{verdict_line(result, pairwise=True)}\n\n{reasoning(result.judgements)}",
        )
    if result.winner is None:
        return replace(
            case,
            outcome=Outcome.SKIPPED,
            message="no verdict: the two orders disagreed and the flip policy drops such cases",
        )
    return replace(case, out=verdict_line(result, pairwise=True))


def incomplete_case(base: str, reason: str) -> JunitCase:
    """The run itself as an errored testcase: no verdict could be reached."""
    return JunitCase(
        classname=base,
        name="run",
        time_s=0.0,
        outcome=Outcome.ERROR,
        message=f"INCOMPLETE — {reason}; no verdict",
        kind="RunIncomplete",
        text=f"{reason}. The gate was not evaluated; `judge resume` continues the run.",
    )


def calibrate_line(result: CaseResult, *, pairwise: bool) -> str:
    """A calibrate case's verdict, then the human labels and whether the judge agrees."""
    line = verdict_line(result, pairwise=pairwise)
    if result.human_labels is None:
        return line
    labels = ", ".join(v if isinstance(v, str) else number(v) for v in result.human_labels)
    agrees = {True: "agrees", False: "disagrees", None: "agreement unknown"}[result.agrees]
    return f"{line}\nhuman: {clean(labels)} (the judge {agrees})"


def gate_case(base: str, gate: GateResult) -> JunitCase:
    """The gate as one testcase: every check in the text, the failed ones in the message."""
    lines = [check_line(c) for c in gate.checks]
    if gate.cases_needed is not None:
        lines.append(
            f"about {gate.cases_needed} cases in all (at the observed rate) would make the "
            "lower bound pass"
        )
    text = "\n".join(lines)
    case = JunitCase(classname=base, name="gate", time_s=0.0)
    if gate.passed:
        return replace(case, out=text)
    failed = "; ".join(check_line(c, status=False) for c in gate.checks if not c.passed)
    return replace(
        case,
        outcome=Outcome.FAILURE,
        message=f"gate failed: {failed}",
        kind="GateFailed",
        text=text,
    )


def check_line(check: GateCheck, *, status: bool = True) -> str:
    """`FAIL win_rate 0.48 < 0.55 (point estimate)`."""
    which = "point estimate" if check.on is GateOn.POINT else "pessimistic end of the 95% CI"
    name = metric_name(check.metric)
    if check.value is None:
        compared = f"{name} n/a (no data), needs {'>=' if check.minimum else '<='} "
    else:
        op = COMPARISON[(check.minimum, check.passed)]
        compared = f"{name} {number(check.value)} {op} "
    line = f"{compared}{number(check.threshold)} ({which})"
    return f"{'PASS' if check.passed else 'FAIL'} {line}" if status else line


def below_bar(result: CaseResult) -> str:
    """The failure message of a case that did not pass: `score 2 below pass_at`."""
    if result.choice is not None:
        return f"choice {clean(result.choice)}"
    if result.score is not None:
        return f"score {number(result.score)} below pass_at"
    return "did not pass"


def verdict_line(result: CaseResult, *, pairwise: bool) -> str:
    """The case's aggregated verdict in one line."""
    if pairwise:
        if result.winner is None:
            return "winner: none (dropped)"
        line = f"winner: {result.winner.value}"
        if result.consistent is not None:
            line += " (orders agree)" if result.consistent else " (orders disagree)"
        return line
    parts = []
    if result.score is not None:
        parts.append(f"score {number(result.score)}")
    if result.choice is not None:
        parts.append(f"choice {clean(result.choice)}")
    if result.passed is not None:
        parts.append("passed" if result.passed else "not passed")
    return ", ".join(parts) or "no panel verdict"


def reasoning(judgements: Sequence[Judgement]) -> str:
    """Each judge's verdict and reasoning (and feedback), one block per judgement."""
    blocks = []
    for j in judgements:
        v = j.verdict
        if v is None:
            continue
        if v.winner is not None and j.order is not None:
            said = f"{v.winner.value} → {to_winner(v.winner, j.order).value}"
        elif v.choice is not None:
            said = f"choice {v.choice}"
        elif v.score is not None:
            said = f"score {number(v.score)}"
        else:
            said = "verdict"
        block = f"--- {who(j)}: {said}\n{v.reasoning}"
        if v.feedback:
            block += f"\nfeedback: {v.feedback}"
        blocks.append(block)
    return "\n\n".join(blocks)


def who(j: Judgement) -> str:
    """`openai/gpt-4o (old-new)`: the judge, and the order it saw for pairwise."""
    return f"{j.model} ({j.order.value})" if j.order is not None else j.model


def counts(cases: Sequence[JunitCase], *, name: str, skipped: bool) -> dict[str, str]:
    """A suite's attributes. junit-10.xsd has no `skipped` on `<testsuites>`."""
    attrs = {
        "name": clean(name),
        "tests": str(len(cases)),
        "failures": str(sum(c.outcome is Outcome.FAILURE for c in cases)),
        "errors": str(sum(c.outcome is Outcome.ERROR for c in cases)),
    }
    if skipped:
        attrs["skipped"] = str(sum(c.outcome is Outcome.SKIPPED for c in cases))
    attrs["time"] = seconds(sum(c.time_s for c in cases))
    return attrs


def add_testcase(suite: ET.Element, case: JunitCase) -> None:
    """Append one `<testcase>` (text is cleaned here; ElementTree escapes it)."""
    element = ET.SubElement(
        suite,
        "testcase",
        {"classname": case.classname, "name": case.name, "time": seconds(case.time_s)},
    )
    if case.outcome is not Outcome.PASSED:
        attrs = {"message": clean(case.message or "")}
        if case.kind is not None:
            attrs["type"] = case.kind
        child = ET.SubElement(element, case.outcome.value, attrs)
        if case.text:
            child.text = clean(case.text)
    if case.out:
        ET.SubElement(element, "system-out").text = clean(case.out)


def clean(text: str) -> str:
    """Text with the characters XML 1.0 cannot hold removed."""
    return NOT_XML_CHAR.sub("", text)


def name_part(text: str | None) -> str:
    """A rubric, command or category name as one dot-free segment of a classname."""
    return NOT_NAME_CHAR.sub("-", clean(text or "")).strip("-") or "unnamed"


def number(value: float) -> str:
    """A score or rate, short: 2 not 2.0, 0.55 not 0.550000."""
    return f"{value:.4g}"


def seconds(value: float) -> str:
    """A duration as junit-10.xsd's time pattern accepts it (no exponent, no sign)."""
    return f"{max(value, 0.0):.3f}"
