"""An arena run as JUnit XML, like every other run (junit.py has the format). Pure, no I/O.

What is under test in an arena is the gated system (`--for`, by default the last file's)
against the gate: so, as in a pairwise run where NEW is the candidate, there is

* one testcase per comparison, classname `judge.arena.<rubric>.<A>-vs-<B>` and the
  comparison's id as its name. A comparison the gated system lost → `<failure>` with every
  judge's reasoning in every order; one it won or tied → a pass; one the flip policy "drop"
  left without a winner → `<skipped>`. A comparison between two other systems is
  information, not a test (they are not under test): a pass carrying its verdict in
  `<system-out>`. Without a gate no system is under test, and every comparison is such
  information. A comparison the judge could not grade → `<error>`, whoever it involves.
* when the run had a gate, a suite holding one testcase named "gate": its checks (`beats`,
  `min_rank`) in the text, a `<failure>` naming the unmet ones, or an `<error>` when the
  gate is undecided (a judge below the position-consistency floor).
* a run the judge could not finish has a testcase "run" in `<error>` instead of the gate,
  as every incomplete run does: an outage is not a regression.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from judgecli.report.arena import check_text
from judgecli.report.junit import error_ending, incomplete_case, reasoning, undecided_gate_case
from judgecli.report.junit_xml import (
    Ending,
    JunitCase,
    Outcome,
    Suite,
    clean,
    junit_document,
    name_part,
)
from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.summary.arena import ArenaGate, ArenaSummary

Systems = Mapping[str, tuple[str, str]]
"""Each comparison's two systems by comparison id: (OLD's, NEW's), i.e. (first, second)."""


def render_arena_junit(
    summary: ArenaSummary, results: Sequence[CaseResult], systems: Systems
) -> str:
    """The arena run as a JUnit XML document (UTF-8 declared; write it as UTF-8)."""
    return junit_document(arena_suites(summary, results, systems))


def arena_suites(
    summary: ArenaSummary, results: Sequence[CaseResult], systems: Systems
) -> list[Suite]:
    """The run's testsuites: the gate's or the unfinished run's, then the comparisons'."""
    base = f"judge.arena.{name_part(summary.rubric)}"
    suites: list[Suite] = []
    if summary.incomplete is not None:
        suites.append((f"{base}.run", [incomplete_case(base, summary.incomplete)]))
    elif summary.gate is not None:
        suites.append((f"{base}.gate", [arena_gate_case(base, summary.gate)]))
    gated = summary.gate.system if summary.gate is not None else None
    cases = [comparison_case(base, r, systems.get(r.id, ("old", "new")), gated) for r in results]
    suites.append((base, cases))
    return suites


def comparison_case(
    base: str, result: CaseResult, pair: tuple[str, str], gated: str | None
) -> JunitCase:
    """One comparison as a testcase (see the module docstring for the rules)."""
    old, new = pair
    classname = f"{base}.{name_part(old)}-vs-{name_part(new)}"
    time_s = sum(j.latency_s for j in result.all_judgements)
    name = clean(result.id)
    if result.status is CaseStatus.FAILED:
        return JunitCase(classname, name, time_s, error_ending(result))
    said = comparison_line(result, pair)
    if gated not in pair:
        return JunitCase(classname, name, time_s, Ending(out=said))
    if result.winner is None:
        why = "no verdict: the two orders disagreed and the flip policy drops such comparisons"
        return JunitCase(classname, name, time_s, Ending(Outcome.SKIPPED, why))
    other = new if gated == old else old
    lost = result.winner is (Winner.NEW if gated == old else Winner.OLD)
    if not lost:
        return JunitCase(classname, name, time_s, Ending(out=said))
    text = f"{said}\n\n{reasoning(result.judgements)}"
    message = f"{gated} loses to {other} on this case"
    return JunitCase(classname, name, time_s, Ending(Outcome.FAILURE, message, "Loses", text))


def comparison_line(result: CaseResult, pair: tuple[str, str]) -> str:
    """`v2 vs v3: v3 wins (orders agree)`, a tie, or no winner."""
    old, new = pair
    winner = {Winner.OLD: f"{old} wins", Winner.NEW: f"{new} wins", Winner.TIE: "a tie"}
    said = "no winner (dropped)" if result.winner is None else winner[result.winner]
    if result.winner is not None and result.consistent is not None:
        said += " (orders agree)" if result.consistent else " (orders disagree)"
    return f"{old} vs {new}: {said}"


def arena_gate_case(base: str, gate: ArenaGate) -> JunitCase:
    """The gate as one testcase: every check in the text, the unmet ones in the message;
    an undecided gate is an error with why and what to do.
    """
    lines = [
        f"{'PASS' if c.passed else 'FAIL' if c.decided else 'UNDECIDED'} {gate.system} "
        + check_text(c.check, c.against, c.value, c.threshold)
        for c in gate.checks
    ]
    text = "\n".join([*lines, f"({gate.leaderboard} leaderboard)"])
    if gate.passed:
        return JunitCase(base, "gate", 0.0, Ending(out=text))
    if not gate.decided:
        return undecided_gate_case(base, gate.undecided, gate.hint, text)
    unmet = "; ".join(
        check_text(c.check, c.against, c.value, c.threshold) for c in gate.checks if not c.passed
    )
    message = f"gate failed: {gate.system} {unmet}"
    return JunitCase(base, "gate", 0.0, Ending(Outcome.FAILURE, message, "GateFailed", text))
