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
from collections import Counter
from collections.abc import Sequence
from enum import StrEnum
from typing import NamedTuple

from judgecli.debias import to_winner
from judgecli.report.decision import metric_name
from judgecli.report.escape import XML_ATTRIBUTE, XML_TEXT, escaped
from judgecli.report.stability import repeats_text
from judgecli.result import CaseResult, CaseStatus, Judgement, Winner
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.facts import GateCheck, GateOn, GateResult
from judgecli.summary.run import RunSummary

# XML 1.0 allows only tab, newline, CR, U+0020-U+D7FF, U+E000-U+FFFD and U+10000 up (the
# spec's Char production, section 2.2). Judge replies can hold others (NUL, terminal
# escapes, lone surrogates from JSON "\ud800"), and one of them makes the whole report
# unreadable, so they are removed, not escaped. The class lists the characters left out
# rather than negating the allowed ones: a range up to U+10FFFF takes re ~9 ms to compile.
NOT_XML_CHAR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

# A dot in classname is a package separator to Jenkins and GitLab; a rubric or category
# name keeps its letters, digits, "_" and "-", and anything else becomes "-".
NOT_NAME_CHAR = re.compile(r"[^\w-]+")

ERROR_MESSAGE = "the judge could not grade this case"
OLD_WINS_MESSAGE = "OLD wins: NEW is worse on this case"
XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'

# (minimum, passed) → how the value compared with the threshold.
COMPARISON = {(True, True): ">=", (True, False): "<", (False, True): "<=", (False, False): ">"}


class Outcome(StrEnum):
    """How a testcase ended; the value is its child element's name (none for a pass)."""

    PASSED = "passed"
    FAILURE = "failure"
    ERROR = "error"
    SKIPPED = "skipped"


# NamedTuples rather than frozen dataclasses: one of each is built per case, and a frozen
# dataclass takes about three times as long to build (object.__setattr__ per field).
class Ending(NamedTuple):
    """How a testcase ended, and what a CI's test view shows of it."""

    outcome: Outcome = Outcome.PASSED
    message: str | None = None
    kind: str | None = None
    """The `type` attribute of `<failure>`/`<error>`."""
    text: str | None = None
    """The body of `<failure>`/`<error>`: reasoning, raw replies."""
    out: str | None = None
    """`<system-out>`: the verdict of a case that passed."""


class JunitCase(NamedTuple):
    """One `<testcase>` before it becomes XML."""

    classname: str
    name: str
    time_s: float
    ending: Ending = Ending()


Suite = tuple[str, list[JunitCase]]
"""A `<testsuite>`: its name and its testcases."""


def render_junit(summary: RunSummary, results: Sequence[CaseResult]) -> str:
    """The run as a JUnit XML document (UTF-8 declared; write it as UTF-8)."""
    return junit_document(junit_suites(summary, results))


def junit_suites(summary: RunSummary, results: Sequence[CaseResult]) -> list[Suite]:
    """The run's testsuites: the gate's or the unfinished run's, then the cases'."""
    base = ".".join(["judge", name_part(summary.command), name_part(summary.rubric)])
    suites: list[Suite] = []
    if summary.incomplete is not None:
        suites.append((f"{base}.run", [incomplete_case(base, summary.incomplete)]))
    elif summary.gate is not None:
        suites.append((f"{base}.gate", [gate_case(base, summary.gate)]))
    # Calibrate measures the judge, not the answers: a case is information, not a test.
    informational = isinstance(summary, CalibrateSummary)
    suites.append((base, [case_of(base, r, informational=informational) for r in results]))
    return suites


# The document is written as text, not built as an xml.etree tree: at 2,000 cases building
# and serialising the tree took more than half of render_junit's time. The bytes are those
# ElementTree.indent + tostring wrote (a test compares the two): two spaces of indent per
# level, `<tag attrs />` for an element with nothing in it, and ElementTree's escapes.
def junit_document(suites: Sequence[Suite]) -> str:
    """The testsuites as an indented XML document."""
    every = [c for _, group in suites for c in group]
    lines = [XML_DECLARATION, f"<testsuites{attributes(counts(every, name='judge'))}>"]
    for name, group in suites:
        attrs = attributes(counts(group, name=name, skipped=True))
        if not group:
            lines.append(f"  <testsuite{attrs} />")
            continue
        lines.append(f"  <testsuite{attrs}>")
        lines += [testcase_xml(case) for case in group]
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    return "\n".join(lines) + "\n"


def case_of(base: str, result: CaseResult, *, informational: bool) -> JunitCase:
    """One result as a testcase (see the module docstring for the rules)."""
    classname = f"{base}.{name_part(result.category)}" if result.category else base
    time_s = sum(j.latency_s for j in result.all_judgements)
    if result.status is CaseStatus.FAILED:
        return JunitCase(classname, clean(result.id), time_s, error_ending(result))
    pairwise = result.winner is not None or any(j.order is not None for j in result.judgements)
    if informational:
        ending = Ending(out=calibrate_line(result, pairwise=pairwise))
    elif pairwise:
        ending = pairwise_ending(result)
    else:
        ending = pointwise_ending(result)
    if result.stable is False:
        # Information beside the verdict: the aggregate still decides pass or fail.
        note = unstable_note(result)
        ending = ending._replace(out=f"{ending.out}\n\n{note}" if ending.out else note)
    return JunitCase(classname, clean(result.id), time_s, ending)


def unstable_note(result: CaseResult) -> str:
    """`--repeats`: that the case's K verdicts disagreed, and what each one was."""
    repeats = result.repeats or []
    spread = "" if result.spread is None else f"; spread {number(result.spread)}"
    return (
        f"unstable: the judge's {len(repeats)} verdicts on this case disagreed "
        f"({clean(repeats_text(repeats))}{spread}); the case's verdict is their aggregate"
    )


def error_ending(result: CaseResult) -> Ending:
    """A case with no verdict: the reason, then each judge's error and raw reply."""
    parts = [result.error or "no reason recorded"]
    for j in result.judgements:
        if j.verdict is None:
            reply = j.raw if j.raw is not None else "(no reply)"
            parts.append(f"--- {who(j)}: {j.error or 'no verdict'}\nraw reply:\n{reply}")
    return Ending(Outcome.ERROR, ERROR_MESSAGE, "JudgeFailed", "\n\n".join(parts))


def pointwise_ending(result: CaseResult) -> Ending:
    """Score and binary rubrics: the rubric's bar decides."""
    if result.passed is False:
        return Ending(Outcome.FAILURE, below_bar(result), "NotPassed", reasoning(result.judgements))
    if result.passed is None:
        # No pass mark: nothing to fail, but the grade is what the reader came for.
        detail = reasoning(result.judgements)
        return Ending(out=f"{verdict_line(result, pairwise=False)}\n\n{detail}")
    return Ending(out=verdict_line(result, pairwise=False))


def pairwise_ending(result: CaseResult) -> Ending:
    """A/B comparisons: only a loss fails; a tie is not worse."""
    if result.winner is Winner.OLD:
        text = f"{verdict_line(result, pairwise=True)}\n\n{reasoning(result.judgements)}"
        return Ending(Outcome.FAILURE, OLD_WINS_MESSAGE, "OldWins", text)
    if result.winner is None:
        return Ending(
            Outcome.SKIPPED,
            "no verdict: the two orders disagreed and the flip policy drops such cases",
        )
    return Ending(out=verdict_line(result, pairwise=True))


def incomplete_case(base: str, reason: str) -> JunitCase:
    """The run itself as an errored testcase: no verdict could be reached."""
    ending = Ending(
        Outcome.ERROR,
        message=f"INCOMPLETE — {reason}; no verdict",
        kind="RunIncomplete",
        text=f"{reason}. The gate was not evaluated; `judge resume` continues the run.",
    )
    return JunitCase(classname=base, name="run", time_s=0.0, ending=ending)


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
    if gate.passed:
        return JunitCase(base, "gate", 0.0, Ending(out=text))
    failed = "; ".join(check_line(c, status=False) for c in gate.checks if not c.passed)
    ending = Ending(Outcome.FAILURE, f"gate failed: {failed}", "GateFailed", text)
    return JunitCase(base, "gate", 0.0, ending)


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


def counts(cases: Sequence[JunitCase], *, name: str, skipped: bool = False) -> dict[str, str]:
    """A suite's attributes. junit-10.xsd has no `skipped` on `<testsuites>`."""
    outcomes = Counter(c.ending.outcome for c in cases)
    attrs = {
        "name": clean(name),
        "tests": str(len(cases)),
        "failures": str(outcomes[Outcome.FAILURE]),
        "errors": str(outcomes[Outcome.ERROR]),
    }
    if skipped:
        attrs["skipped"] = str(outcomes[Outcome.SKIPPED])
    attrs["time"] = seconds(sum(c.time_s for c in cases))
    return attrs


def testcase_xml(case: JunitCase) -> str:
    """One `<testcase>` and what is in it, indented as a suite's child."""
    head = (
        f'    <testcase classname="{escape_attr(case.classname)}" '
        f'name="{escape_attr(case.name)}" time="{seconds(case.time_s)}"'
    )
    end = case.ending
    children = []
    if end.outcome is not Outcome.PASSED:
        attrs = f' message="{escape_attr(clean(end.message or ""))}"'
        if end.kind is not None:
            attrs += f' type="{escape_attr(end.kind)}"'
        children.append(text_element(end.outcome.value, attrs, clean(end.text or "")))
    if end.out:
        children.append(text_element("system-out", "", clean(end.out)))
    if not children:
        return f"{head} />"
    inside = "\n      ".join(children)
    return f"{head}>\n      {inside}\n    </testcase>"


def text_element(tag: str, attrs: str, text: str) -> str:
    """An element holding only text (no text: written as empty); `attrs` is escaped."""
    return f"<{tag}{attrs}>{escape_text(text)}</{tag}>" if text else f"<{tag}{attrs} />"


def attributes(attrs: dict[str, str]) -> str:
    """Attributes in the order given, each after a space."""
    return "".join(f' {name}="{escape_attr(value)}"' for name, value in attrs.items())


def escape_text(text: str) -> str:
    """Character data escaped as ElementTree escapes it."""
    return escaped(text, XML_TEXT)


def escape_attr(value: str) -> str:
    """An attribute value escaped as ElementTree escapes it."""
    return escaped(value, XML_ATTRIBUTE)


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
