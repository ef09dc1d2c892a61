"""The sequential gate's glue: the order, the prefix it advances along, the summary, the
gate's sequential and corrected checks, and the runner's stop once a run has decided."""

from __future__ import annotations

import asyncio

import pytest

from judgecli.deciding.decision import plan_sequential
from judgecli.deciding.gate import GateOn, GateSpec, evaluate_gate
from judgecli.deciding.measured import check_gate_mode
from judgecli.deciding.outcomes import human_means, label_value
from judgecli.deciding.sequential import SequentialGate, follow, sequential_summary, shuffled
from judgecli.errors import ConfigError, InputError
from judgecli.inputs.labels import Label, LabelSpace
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.rubric import RubricKind
from judgecli.running.fan_out import run_cases
from judgecli.stats.sequential import Decision, run_sequential
from judgecli.summary.gate_records import GateMetric
from judgecli.summary.pairwise import summarize_pairwise

PAIRWISE = parse_rubric(
    "name: pw\nkind: pairwise\nprompt:\n  user: '{input} {output_a} {output_b}'\n", source="pw"
)
POINTWISE = parse_rubric(
    "name: pt\nkind: pointwise\nscale: {min: 1, max: 5}\npass_at: 4\n"
    "prompt:\n  user: '{input} {output}'\n",
    source="pt",
)
GATE = SequentialGate(metric=GateMetric.WIN_RATE, threshold=0.55)


def won(case_id: str, winner: Winner = Winner.NEW) -> CaseResult:
    # Both orders agreed: a run judged with flip below the consistency floor decides no
    # gate (issue 29), and these cases stand for a judge that can tell answers apart.
    return CaseResult(
        id=case_id, status=CaseStatus.OK, winner=winner, consistent=True, rubric_hash="h"
    )


def failed(case_id: str) -> CaseResult:
    return CaseResult(id=case_id, status=CaseStatus.FAILED, error="boom", rubric_hash="h")


def test_the_order_is_fixed_by_the_seed_alone():
    items = list(range(50))
    assert shuffled(items, 3) == shuffled(items, 3)
    assert shuffled(items, 3) != shuffled(items, 4)
    assert sorted(shuffled(items, 3)) == items


def test_the_sequence_waits_for_the_cases_before_it():
    order = [f"c{i}" for i in range(100)]
    follower = follow(GATE, order, [])
    # Case c1 finishes before c0: it is not taken until c0 is in.
    follower.record(won("c1"))
    assert follower.advance() is Decision.UNDECIDED
    assert follower.position == 0
    follower.record(won("c0"))
    follower.advance()
    assert follower.position == 2
    assert follower.cs.n == 2


def test_failed_cases_add_no_observation_but_are_passed_over():
    order = ["a", "b", "c"]
    follower = follow(GATE, order, [won("a"), failed("b"), won("c")])
    assert follower.position == 3
    assert follower.cs.n == 2


def test_the_decision_matches_the_pure_sequential_run():
    order = [f"c{i}" for i in range(300)]
    winners = [Winner.NEW if i % 10 < 8 else Winner.OLD for i in range(300)]
    results = [won(i, w) for i, w in zip(order, winners, strict=True)]
    follower = follow(GATE, order, reversed(results))  # arrival order does not matter
    pure = run_sequential([1.0 if w is Winner.NEW else 0.0 for w in winners], 0.55)
    assert follower.decision is pure.decision is Decision.PASS
    assert follower.position == pure.decided_after
    summary = sequential_summary(follower, judged=300, cost_usd=3.0)
    assert summary.decided_after == pure.decided_after
    assert summary.bound == pytest.approx(pure.bound)
    # The order of 300 cases was all judged: nothing saved.
    assert summary.saved_cases == 0
    stopped = sequential_summary(follower, judged=100, cost_usd=1.0)
    assert stopped.saved_cases == 200
    assert stopped.saved_usd == pytest.approx(2.0)


def test_a_mean_is_followed_on_the_rubric_scale():
    gate = SequentialGate(metric=GateMetric.MEAN, threshold=3.0, scale=(1.0, 5.0))
    assert gate.to_unit(3.0) == 0.5
    assert gate.from_unit(0.25) == 2.0
    scored = CaseResult(id="a", status=CaseStatus.OK, score=5.0, rubric_hash="h")
    assert gate.value(scored) == 1.0


def test_the_gate_takes_the_sequence_decision():
    order = [f"c{i}" for i in range(200)]
    results = [won(i) for i in order]
    follower = follow(GATE, order, results)
    summary = summarize_pairwise(
        results, rubric=PAIRWISE, models=["m"], flip=True, flip_policy="tie"
    )
    summary.sequential = sequential_summary(follower, judged=200, cost_usd=0.0)
    spec = GateSpec(min_win_rate=0.55, on=GateOn.SEQUENTIAL)
    result = evaluate_gate(summary, spec)
    assert result is not None
    assert result.passed
    assert result.checks[0].value == summary.sequential.interval[0]
    # Another bar: the interval at the stop is compared with it.
    high = evaluate_gate(summary, GateSpec(min_win_rate=0.999, on=GateOn.SEQUENTIAL))
    assert high is not None
    assert not high.passed


def test_gate_mode_errors_when_the_run_lacks_the_numbers(tmp_path):
    summary = summarize_pairwise(
        [won("a")], rubric=PAIRWISE, models=["m"], flip=True, flip_policy="tie"
    )
    with pytest.raises(InputError, match="was not --sequential"):
        check_gate_mode(summary, GateSpec(min_win_rate=0.5, on=GateOn.SEQUENTIAL), tmp_path)
    with pytest.raises(InputError, match="no human-corrected win_rate"):
        check_gate_mode(summary, GateSpec(min_win_rate=0.5, on=GateOn.CORRECTED), tmp_path)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (GateSpec(), "stops on one number"),
        # Issue 29: --min-consistency is the floor the verdicts stand on, which a
        # sequential run may set; another threshold is still refused.
        (GateSpec(min_win_rate=0.5, max_loss_rate=0.2), "stops on one number"),
        (GateSpec(min_win_rate=0.5, on=GateOn.LOWER_BOUND), "--on lower-bound"),
        (GateSpec(min_win_rate=0.0), "leaves nothing to decide"),
    ],
)
def test_plan_sequential_refuses_what_it_cannot_follow(spec, message):
    with pytest.raises(ConfigError, match=message):
        plan_sequential(spec, PAIRWISE, seed=0)


def test_plan_sequential_takes_a_consistency_floor():
    # Issue 29: the floor is not a number to stop on; the run follows its one bar.
    gate = plan_sequential(GateSpec(min_win_rate=0.55, min_consistency=0.6), PAIRWISE, seed=0)
    assert (gate.metric, gate.threshold) == (GateMetric.WIN_RATE, 0.55)


def test_plan_sequential_on_a_mean_uses_the_scale():
    gate = plan_sequential(GateSpec(min_mean=3.5), POINTWISE, seed=7)
    assert (gate.metric, gate.scale, gate.seed) == (GateMetric.MEAN, (1.0, 5.0), 7)
    with pytest.raises(ConfigError, match="leaves nothing"):
        plan_sequential(GateSpec(min_mean=5), POINTWISE, seed=0)


def test_labels_become_values_on_the_judges_scale():
    pairwise = LabelSpace(kind=RubricKind.PAIRWISE)
    assert label_value(Label("a", "new", None, 1), GateMetric.WIN_RATE, pairwise, None) == 1.0
    assert label_value(Label("a", "tie", None, 1), GateMetric.WIN_RATE, pairwise, None) == 0.5
    scores = LabelSpace(kind=RubricKind.POINTWISE, scale=(1, 5))
    three = Label("a", 3.0, "r1", 1)
    assert label_value(three, GateMetric.PASS_RATE, scores, 4.0) == 0.0
    assert label_value(three, GateMetric.PASS_RATE, scores, None) is None
    binary = LabelSpace(kind=RubricKind.BINARY, choices=["yes", "no"], passing="yes")
    assert label_value(Label("a", "yes", None, 1), GateMetric.PASS_RATE, binary, None) == 1.0
    # Two raters of one case are averaged.
    labels = [Label("a", 3.0, "r1", 1), Label("a", 5.0, "r2", 2), Label("b", 4.0, "r1", 3)]
    assert human_means(labels, GateMetric.MEAN, scores, 4.0) == {"a": 4.0, "b": 4.0}
    assert human_means(labels, GateMetric.PASS_RATE, scores, 4.0) == {"a": 0.5, "b": 1.0}


class Sink:
    def __init__(self):
        self.results: list[CaseResult] = []

    def append_result(self, result: CaseResult) -> None:
        self.results.append(result)


class Quiet:
    def case_done(self, result: CaseResult) -> None:
        pass


def test_the_runner_stops_taking_cases_once_done_and_finishes_those_in_flight():
    sink = Sink()
    started: list[int] = []

    async def grade(i: int) -> CaseResult:
        started.append(i)
        await asyncio.sleep(0)
        return won(str(i))

    def done() -> bool:
        return len(sink.results) >= 10

    asyncio.run(run_cases(range(1000), grade, concurrency=4, sink=sink, events=Quiet(), done=done))
    # Every case that started finished and was kept; no new case started after the stop.
    assert len(sink.results) == len(started)
    assert 10 <= len(started) <= 10 + 4
