"""An arena run's JUnit file (report/junit_arena.py): the gated system's lost comparisons
fail, comparisons of other systems are information, a failed comparison is an error, a
dropped one skipped, and the gate (or the unfinished run) has a testcase of its own.

Issue 29 (review 2026-11-27, finding 19): an arena run wrote no JUnit file.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from judgecli.commands.arena.gate import ArenaGateSpec, evaluate_arena_gate
from judgecli.report.junit_arena import render_arena_junit
from judgecli.result import Winner
from judgecli.summary.arena import ArenaGate, GateCheck
from judgecli.summary.arena_length import Matched
from tests.unit.commands.test_arena import NAMES, result, summarize, synthetic


def parsed(xml: str) -> dict[str, dict[str, ET.Element]]:
    """suite name → testcase name → testcase."""
    root = ET.fromstring(xml.encode("utf-8"))
    return {s.get("name", ""): {c.get("name", ""): c for c in s.iter("testcase")} for s in root}


def outcome(case: ET.Element) -> str:
    found = [c.tag for c in case if c.tag in {"failure", "error", "skipped"}]
    return found[0] if found else "passed"


def pairs(matched: dict[str, Matched]) -> dict[str, tuple[str, str]]:
    return {key: (m.old, m.new) for key, m in matched.items()}


def gated(spec: ArenaGateSpec, results, matched):
    s = summarize(results, matched)
    return s.model_copy(update={"gate": evaluate_arena_gate(s, spec.checked(NAMES))})


def test_the_gated_systems_losses_fail_and_other_systems_comparisons_are_information():
    results, matched = synthetic(cases=6)
    # mid is gated: lost when base (OLD of "base vs mid") or top (NEW of "mid vs top") wins.
    summary = gated(ArenaGateSpec(system="mid", beats=("base",)), results, matched)
    suites = parsed(render_arena_junit(summary, results, pairs(matched)))
    cases = suites["judge.arena.pairwise"]
    assert len(cases) == len(results) == 18
    for r in results:
        case = cases[r.id]
        old, new = matched[r.id].old, matched[r.id].new
        assert case.get("classname") == f"judge.arena.pairwise.{old}-vs-{new}"
        if (old, new, r.winner) in {("base", "mid", Winner.OLD), ("mid", "top", Winner.NEW)}:
            other = "base" if old == "base" else "top"
            assert outcome(case) == "failure"
            assert case.find("failure").get("message") == f"mid loses to {other} on this case"
        else:
            assert outcome(case) == "passed"
    top_vs_base = cases["q00::base::top"].find("system-out").text
    assert top_vs_base == "base vs top: top wins (orders agree)"


def test_a_failed_comparison_is_an_error_and_a_dropped_one_is_skipped():
    results, matched = synthetic(cases=6)
    failed = result("q99", "base", "top", None, error="boom")
    dropped = result("q98", "base", "top", None)
    for extra in (failed, dropped):
        matched[extra.id] = Matched(*extra.id.split("::"))
    results = [*results, failed, dropped]
    summary = gated(ArenaGateSpec(beats=("base",)), results, matched)  # top is gated
    cases = parsed(render_arena_junit(summary, results, pairs(matched)))["judge.arena.pairwise"]
    assert outcome(cases[failed.id]) == "error"
    assert "boom" in cases[failed.id].find("error").text
    assert outcome(cases[dropped.id]) == "skipped"


def test_the_gate_is_one_testcase_that_passes_fails_or_errs_when_undecided():
    results, matched = synthetic(cases=6)
    systems = pairs(matched)
    won = gated(ArenaGateSpec(beats=("base",)), results, matched)
    (gate,) = parsed(render_arena_junit(won, results, systems))[
        "judge.arena.pairwise.gate"
    ].values()
    assert (gate.get("name"), outcome(gate)) == ("gate", "passed")
    assert gate.find("system-out").text.startswith("PASS top beats base (")

    lost = gated(ArenaGateSpec(system="base", beats=("top",)), results, matched)
    (gate,) = parsed(render_arena_junit(lost, results, systems))[
        "judge.arena.pairwise.gate"
    ].values()
    assert outcome(gate) == "failure"
    assert gate.find("failure").get("message").startswith("gate failed: base beats top (")

    check = GateCheck(check="beats", against="base", value=0.99, threshold=0.95, passed=False)
    undecided = won.model_copy(
        update={
            "gate": ArenaGate(
                passed=False,
                system="top",
                leaderboard="raw",
                checks=[check.model_copy(update={"decided": False})],
                decided=False,
                undecided="position consistency 20% is below the floor 50%",
                hint="use a stronger judge",
            )
        }
    )
    (gate,) = parsed(render_arena_junit(undecided, results, systems))[
        "judge.arena.pairwise.gate"
    ].values()
    assert outcome(gate) == "error"
    assert gate.find("error").get("type") == "GateUndecided"
    assert "what to do: use a stronger judge" in gate.find("error").text


def test_an_unfinished_arena_has_a_run_testcase_in_error_and_no_gate():
    results, matched = synthetic(cases=6)
    summary = gated(ArenaGateSpec(beats=("base",)), results, matched).model_copy(
        update={"incomplete": "the judge could not grade 9 of 18 comparisons", "gate": None}
    )
    suites = parsed(render_arena_junit(summary, results, pairs(matched)))
    assert set(suites) == {"judge.arena.pairwise.run", "judge.arena.pairwise"}
    (run,) = suites["judge.arena.pairwise.run"].values()
    assert (run.get("name"), outcome(run)) == ("run", "error")
    # No gate, no system under test: every comparison is information.
    assert {outcome(c) for c in suites["judge.arena.pairwise"].values()} == {"passed"}
