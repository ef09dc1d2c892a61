"""A run as JUnit XML, the test-report format CI systems read. Pure, no I/O.

One `<testcase>` per case, so a CI's test view lists the cases NEW lost or that failed a
rubric's bar, with the judge's reasoning as the failure text:

* score/binary: `passed` True → pass; False → `<failure>`; None (no pass mark) → pass, the
  verdict in `<system-out>`. A checklist case below its rubric's pass_at fails the same
  way, its items (met or not, each with the judge's reasoning) as the failure's text. A case
  whose tool calls were checked (a rubric's `tool_calls`) lists its missed and extra calls
  first; when the check decided it, a miss or an extra call fails it
  (`tool calls: 1 missed, 1 extra`), as the judge's verdict would.
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
the failed checks as its message, or is in `<error>` when its evidence cannot decide
(undecided). A run the judge could not finish (summary.incomplete) has no verdict: a suite
of its own then holds one testcase named "run" in `<error>`, not a pass or a failure, since
an outage is not a regression.

Element and attribute names follow the Jenkins xunit plugin's junit-10.xsd, which GitLab,
GitHub reporters and Jenkins all read. No timestamp is written, so the same results always
give the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgecli.grading.debias import to_winner
from judgecli.report.checklist import items_text
from judgecli.report.decision import metric_name
from judgecli.report.junit_xml import (
    Ending,
    JunitCase,
    Outcome,
    Suite,
    clean,
    junit_document,
    name_part,
    number,
)
from judgecli.report.stability import repeats_text
from judgecli.report.tool_calls import junit_message, junit_text
from judgecli.result import CaseResult, CaseStatus, Judgement, Winner
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.gate_records import GateCheck, GateOn, GateResult
from judgecli.summary.run import RunSummary

ERROR_MESSAGE = "the judge could not grade this case"
OLD_WINS_MESSAGE = "OLD wins: NEW is worse on this case"

# (minimum, passed) → how the value compared with the threshold.
COMPARISON = {(True, True): ">=", (True, False): "<", (False, True): "<=", (False, False): ">"}


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
    # A checklist's verdicts are its items: each met or not, with its reasoning.
    detail = items_text(result) if result.items is not None else reasoning(result.judgements)
    # A checked case's calls (matched, missed, extra) come first: what decided it, or what
    # stands beside the judge's verdict.
    calls = junit_text(result)
    if calls is not None:
        detail = f"{calls}\n\n{detail}" if detail else calls
    if result.passed is False:
        message = junit_message(result) or below_bar(result)
        return Ending(Outcome.FAILURE, message, "NotPassed", detail)
    if result.passed is None:
        # No pass mark: nothing to fail, but the grade is what the reader came for.
        return Ending(out=f"{verdict_line(result, pairwise=False)}\n\n{detail}")
    line = verdict_line(result, pairwise=False)
    return Ending(out=line if calls is None else f"{line}\n\n{calls}")


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
    """The gate as one testcase: every check in the text, the failed ones in the message;
    an undecided gate is an error with why and what to do.
    """
    lines = [check_line(c) for c in gate.checks]
    if gate.cases_needed is not None:
        lines.append(
            f"about {gate.cases_needed} cases in all (at the observed rate) would make the "
            "lower bound pass"
        )
    text = "\n".join(lines)
    if gate.passed:
        return JunitCase(base, "gate", 0.0, Ending(out=text))
    if not gate.decided:
        return undecided_gate_case(base, gate.undecided, gate.hint, text)
    failed = "; ".join(check_line(c, status=False) for c in gate.checks if not c.passed)
    ending = Ending(Outcome.FAILURE, f"gate failed: {failed}", "GateFailed", text)
    return JunitCase(base, "gate", 0.0, ending)


def undecided_gate_case(base: str, why: str | None, hint: str | None, text: str) -> JunitCase:
    """An undecided gate (pairwise, calibrate, arena) as an errored testcase: why, what to
    do, and the checks' `text`.
    """
    # Issue 29: evidence that cannot decide is an error, as an unfinished run is, not a
    # failure of the candidate.
    message = f"gate undecided: {why}; no verdict"
    ending = Ending(Outcome.ERROR, message, "GateUndecided", f"{text}\nwhat to do: {hint}")
    return JunitCase(base, "gate", 0.0, ending)


def check_line(check: GateCheck, *, status: bool = True) -> str:
    """`FAIL win_rate 0.48 < 0.55 (point estimate)`."""
    which = "point estimate" if check.on is GateOn.POINT else "pessimistic end of the 95% CI"
    name = metric_name(check.metric)
    if check.value is None:
        compared = f"{name} n/a (no data), needs {'>=' if check.minimum else '<='} "
    elif not check.decided:
        compared = f"{name} {number(check.value)}, needs {'>=' if check.minimum else '<='} "
    else:
        op = COMPARISON[(check.minimum, check.passed)]
        compared = f"{name} {number(check.value)} {op} "
    line = f"{compared}{number(check.threshold)} ({which})"
    if not check.decided:
        line += f": {check.undecided}"
    word = "PASS" if check.passed else ("FAIL" if check.decided else "UNDECIDED")
    return f"{word} {line}" if status else line


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
