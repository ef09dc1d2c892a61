"""`judge probe`'s plan and gate: which pairs are rewritten, what the ceilings compare, and
the flags refused before anything is judged (exit 2).
"""

from __future__ import annotations

import pytest

from judgecli.commands.probe import ProbeAsked, ProbeRounds, probe_gate
from judgecli.errors import ConfigError
from judgecli.grading.perturb import Probe, pad, restate
from judgecli.inputs.dataset import Case
from judgecli.inputs.pairs import Pair
from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.summary.facts import Usage
from judgecli.summary.gate_records import GateOn
from judgecli.summary.probe import ProbeResult, ProbeSummary


def pair(i: int) -> Pair:
    return Pair(
        old=Case(id=f"p{i}", input="q", output=f"old {i}"),
        new=Case(id=f"p{i}", input="q", output=f"new {i}"),
    )


def result(case_id: str, winner: Winner | None, status: CaseStatus = CaseStatus.OK) -> CaseResult:
    return CaseResult(status=status, id=case_id, winner=winner, rubric_hash="h")


def test_the_second_round_rewrites_the_loser_of_each_decided_pair_once() -> None:
    rounds = ProbeRounds(
        [pair(1), pair(2), pair(3), pair(4)], (Probe.POSITION, Probe.LENGTH, Probe.VERBOSITY)
    )
    batch = rounds.next_round(
        [
            result("p1", Winner.NEW),
            result("p2", Winner.TIE),
            result("p3", None, CaseStatus.FAILED),
            result("p4", Winner.OLD),
        ]
    )
    made = {p.id: p for p in batch}
    assert sorted(made) == ["p1~length", "p1~verbosity", "p4~length", "p4~verbosity"]
    assert made["p1~length"].old.output == pad("old 1")
    assert made["p1~length"].new.output == "new 1"
    assert made["p4~verbosity"].new.output == restate("new 4")
    assert len(rounds.planned) == 8
    assert rounds.next_round([]) == []


def test_a_position_only_probe_plans_no_second_round() -> None:
    rounds = ProbeRounds([pair(1)], (Probe.POSITION,))
    assert rounds.next_round([result("p1", Winner.NEW)]) == []


def summary_with(flips: int, n: int) -> ProbeSummary:
    probe = ProbeResult(
        name=Probe.LENGTH,
        flip_rate=flips / n if n else None,
        flip_rate_ci=(0.05, 0.4) if n else (None, None),
        n=n,
        flips=flips,
        floor=0.2,
    )
    return ProbeSummary(
        rubric="pairwise",
        rubric_version=1,
        rubric_hash="h",
        models=["sim"],
        n_cases=n,
        n_ok=n,
        n_failed=0,
        usage=Usage(),
        probes=[probe],
    )


def test_the_ceiling_compares_the_point_or_the_pessimistic_bound() -> None:
    asked = ProbeAsked(probes=(Probe.LENGTH,), ceilings={Probe.LENGTH: 0.2})
    gate = probe_gate(summary_with(3, 20), asked)
    assert gate is not None
    assert gate.passed
    assert gate.checks[0].value == 0.15
    bound = ProbeAsked(probes=(Probe.LENGTH,), ceilings={Probe.LENGTH: 0.2}, on=GateOn.LOWER_BOUND)
    gate = probe_gate(summary_with(3, 20), bound)
    assert gate is not None
    assert not gate.passed
    assert gate.decided
    assert gate.checks[0].value == 0.4


def test_no_pair_probed_leaves_the_gate_undecided_and_no_ceiling_no_gate() -> None:
    asked = ProbeAsked(probes=(Probe.LENGTH,), ceilings={Probe.LENGTH: 0.2})
    gate = probe_gate(summary_with(0, 0), asked)
    assert gate is not None
    assert not gate.decided
    assert not gate.passed
    assert probe_gate(summary_with(3, 20), ProbeAsked(probes=(Probe.LENGTH,))) is None


@pytest.mark.parametrize(
    "asked",
    [
        ProbeAsked(probes=()),
        ProbeAsked(probes=(Probe.POSITION,), ceilings={Probe.LENGTH: 0.1}),
        ProbeAsked(on=GateOn.CORRECTED),
        ProbeAsked(power=0.8),
        ProbeAsked(power=0.8, effect=0.99),
    ],
)
def test_flags_that_do_not_go_together_are_refused(asked: ProbeAsked) -> None:
    with pytest.raises(ConfigError):
        asked.check()


def test_the_sizing_takes_the_largest_need_of_the_probes() -> None:
    asked = ProbeAsked(
        probes=(Probe.POSITION, Probe.LENGTH), ceilings={Probe.LENGTH: 0.1}, power=0.8, effect=0.1
    )
    # Floors 0.05 (default) and 0.1: the higher floor needs more pairs.
    assert asked.needed(Probe.POSITION) == 53
    sizing = asked.sizing()
    assert sizing is not None
    assert sizing.n_pairs == asked.needed(Probe.LENGTH) > 53
