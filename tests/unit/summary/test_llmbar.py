"""judge's pairwise statistics reproduce the published LLMBar numbers exactly.

The LLMBar authors (Zeng et al., ICLR 2024) report, per evaluator and set, positional
agreement "Agr." (`statistics.json` `equal`) and accuracy "Acc." (`correct_average`, the
mean of the per-order accuracies `correct_False` and `correct_True`). Their replies are
replayed here as judge's own results.jsonl lines (tests/llmbar.py) and run through
`summarize_pairwise` and judge's agreement statistics.

How the authors count an unparsed reply (null winner), inferred by recomputing every
result.json upstream keeps against its statistics.json (all 59 match; the 19 here are
checked below, tests/data/llmbar/SOURCE.md): the denominator is every instance; a null is
never correct; and `equal` compares the two raw winners, so an
instance null in BOTH orders counts as "equal" (None == None) while one null in one order
does not. judge instead makes any instance with a null a failed case (never guess a
verdict) and leaves it out of `consistency`. So, exactly:
    authors' equal = judge's consistent cases + cases failed in both orders, and
    authors' n     = judge's n_ok + n_failed.
"""

from __future__ import annotations

from functools import cache

import pytest

from judgecli.grading.debias import to_winner
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.result import CaseResult, CaseStatus, Order, Winner
from judgecli.stats.agreement import percent_agreement
from judgecli.stats.scores import mean
from judgecli.summary.pairwise import judge_consistency, summarize_pairwise
from judgecli.verdict import Position
from tests.llmbar import (
    RUBRIC_HASH,
    Replay,
    Statistics,
    case_result,
    load_replay,
    mapped_back,
    position_of,
    read_statistics,
    run_dir,
)

RUBRIC = parse_rubric(
    """\
name: llmbar
kind: pairwise
description: LLMBar's comparison of two outputs for one instruction (replayed verdicts).
prompt:
  user: |
    Instruction: {input}
    Output (a): {output_a}
    Output (b): {output_b}
""",
    source="llmbar.yaml",
)

ADVERSARIAL = ["Neighbor", "GPTInst", "GPTOut", "Manual"]

RUNS = [
    pytest.param("LLMBar/Natural", "GPT-4", "Vanilla", id="gpt4-vanilla-natural"),
    pytest.param("LLMBar/Natural", "ChatGPT", "Vanilla", id="chatgpt-vanilla-natural"),
    # One reply null in one order: a failed case that is not "equal" for the authors either.
    pytest.param("LLMBar/Natural", "ChatGPT", "CoT", id="chatgpt-cot-natural-one-null"),
    pytest.param("Processed/MT-Bench", "GPT-4", "Vanilla_NoRules", id="gpt4-norules-mtbench"),
    *(
        pytest.param(
            f"LLMBar/Adversarial/{subset}",
            "GPT-4",
            "Metrics_Reference",
            id=f"gpt4-metrics-reference-{subset.lower()}",
        )
        for subset in ADVERSARIAL
    ),
    # 7 null replies, 3 instances null in both orders (content filter).
    pytest.param(
        "Processed/LLMEval^2", "GPT-4", "Metrics_Reference", id="gpt4-metrics-ref-llmeval2"
    ),
    # 11 null replies, 5 instances null in both orders.
    pytest.param(
        "Processed/LLMEval^2", "ChatGPT", "Vanilla_NoRules", id="chatgpt-norules-llmeval2"
    ),
]


@cache
def replayed(subset: str, evaluator: str, strategy: str) -> tuple[Replay, Statistics]:
    directory = run_dir(subset, evaluator, strategy)
    return load_replay(directory, model=evaluator), read_statistics(directory)


def order_winners(results: tuple[CaseResult, ...], order: Order) -> list[Winner | None]:
    """Each case's verdict in one presentation order, mapped back; None when it failed."""
    return [mapped_back(next(j for j in r.judgements if j.order is order)) for r in results]


def accuracy(results: tuple[CaseResult, ...], gold: tuple[Winner, ...], order: Order) -> float:
    share = percent_agreement(order_winners(results, order), gold)
    assert share is not None
    return share


def failed_in_both_orders(results: tuple[CaseResult, ...]) -> int:
    return sum(all(j.verdict is None for j in r.judgements) for r in results)


# Float equality below is exact on purpose: k / n is correctly rounded in Python and in
# numpy alike, and distinct counts over one n give distinct floats, so equal floats
# mean equal integer counts.


@pytest.mark.parametrize(("subset", "evaluator", "strategy"), RUNS)
def test_position_consistency_is_the_authors_agreement_without_unparsed_cases(
    subset, evaluator, strategy
):
    run, stats = replayed(subset, evaluator, strategy)
    summary = summarize_pairwise(
        run.results, rubric=RUBRIC, models=[evaluator], flip=True, flip_policy="tie"
    )
    both_null = failed_in_both_orders(run.results)
    assert summary.n_ok + summary.n_failed == stats.n
    assert summary.consistency == (stats.equal - both_null) / summary.n_ok
    # The per-judge figure (read from the slots, not the reconciled flag) agrees.
    ok = [r for r in run.results if r.status is CaseStatus.OK]
    assert judge_consistency(ok, evaluator) == summary.consistency


@pytest.mark.parametrize(("subset", "evaluator", "strategy"), RUNS)
def test_accuracy_in_each_order_is_the_authors_correct_false_and_true(subset, evaluator, strategy):
    run, stats = replayed(subset, evaluator, strategy)
    by_order = {
        order: accuracy(run.results, run.gold, order) for order in (Order.OLD_NEW, Order.NEW_OLD)
    }
    assert by_order == {
        Order.OLD_NEW: stats.correct_false / stats.n,
        Order.NEW_OLD: stats.correct_true / stats.n,
    }


@pytest.mark.parametrize(("subset", "evaluator", "strategy"), RUNS)
def test_both_orders_correct_is_the_accuracy_of_the_tie_reconciled_verdict(
    subset, evaluator, strategy
):
    # Under FlipPolicy.TIE a case's winner is the gold answer only when both orders named it
    # (disagreement becomes a tie, which is never gold); a failed case has no winner.
    run, stats = replayed(subset, evaluator, strategy)
    winners = [r.winner for r in run.results]
    assert percent_agreement(winners, run.gold) == stats.correct_both / stats.n


@pytest.mark.parametrize(("subset", "evaluator", "strategy"), RUNS)
def test_mean_accuracy_is_the_authors_correct_average_to_the_last_bit(subset, evaluator, strategy):
    # The authors print (correct_False + correct_True) / (2n) * 100; that is the share of
    # all 2n single-order verdicts that are correct.
    run, stats = replayed(subset, evaluator, strategy)
    verdicts = order_winners(run.results, Order.OLD_NEW) + order_winners(run.results, Order.NEW_OLD)
    share = percent_agreement(verdicts, run.gold * 2)
    assert share is not None
    assert share * 100 == stats.correct_average


def test_gpt4_metrics_reference_mean_accuracy_over_the_adversarial_sets_is_82_8():
    per_set = []
    for subset in ADVERSARIAL:
        run, _ = replayed(f"LLMBar/Adversarial/{subset}", "GPT-4", "Metrics_Reference")
        orders = [accuracy(run.results, run.gold, o) for o in (Order.OLD_NEW, Order.NEW_OLD)]
        per_set.append(mean(orders))
    overall = mean(per_set)
    assert overall is not None
    assert round(overall * 100, 1) == 82.8


@pytest.mark.parametrize(("subset", "evaluator", "strategy"), RUNS)
def test_every_replayed_case_round_trips_through_a_results_jsonl_line(subset, evaluator, strategy):
    run, _ = replayed(subset, evaluator, strategy)
    for result in run.results:
        line = result.model_dump_json(exclude_none=True)
        assert "\n" not in line
        assert CaseResult.model_validate_json(line) == result


@pytest.mark.parametrize(
    ("which", "case_id", "failed_orders"),
    [
        pytest.param(("LLMBar/Natural", "ChatGPT", "CoT"), "17", [Order.OLD_NEW], id="one-order"),
        pytest.param(
            ("Processed/LLMEval^2", "GPT-4", "Metrics_Reference"),
            "15",
            [Order.OLD_NEW, Order.NEW_OLD],
            id="both-orders-content-filtered",
        ),
    ],
)
def test_an_unparsed_llmbar_reply_is_a_failed_case_with_its_text_kept(
    which, case_id, failed_orders
):
    run, _ = replayed(*which)
    result = next(r for r in run.results if r.id == case_id)
    assert result.status is CaseStatus.FAILED
    assert (result.winner, result.consistent, result.judge_winners) == (None, None, {})
    assert [j.order for j in result.judgements if j.verdict is None] == failed_orders
    assert all(j.raw is not None and j.error for j in result.judgements if j.verdict is None)


# Every run above but CoT answers with a bare "Output (a)" or "Output (b)": the judges' own
# words check the order mapping.
BARE_RUNS = [param for param in RUNS if "cot" not in str(param.id)]


@pytest.mark.parametrize(("subset", "evaluator", "strategy"), BARE_RUNS)
def test_the_slot_a_judge_wrote_is_the_slot_the_replay_records(subset, evaluator, strategy):
    run, _ = replayed(subset, evaluator, strategy)
    written = {"Output (a)": Position.A, "Output (b)": Position.B}
    parsed = [j for r in run.results for j in r.judgements if j.verdict is not None]
    assert parsed
    assert all(written[j.raw.strip()] is j.verdict.winner for j in parsed)


@pytest.mark.parametrize(
    ("winner", "order", "slot"),
    [
        pytest.param(Winner.OLD, Order.OLD_NEW, Position.A, id="output-1-unswapped-is-a"),
        pytest.param(Winner.NEW, Order.OLD_NEW, Position.B, id="output-2-unswapped-is-b"),
        pytest.param(Winner.OLD, Order.NEW_OLD, Position.B, id="output-1-swapped-is-b"),
        pytest.param(Winner.NEW, Order.NEW_OLD, Position.A, id="output-2-swapped-is-a"),
    ],
)
def test_the_slot_a_judge_named_maps_back_to_the_answer_llmbar_recorded(winner, order, slot):
    assert position_of(winner, order) is slot
    assert to_winner(slot, order) is winner


def instance(false_winner: str | None, true_winner: str | None) -> dict:
    # The slot each answer sat in: output_1 is (a) unswapped and (b) swapped.
    unswapped = {"1": "Output (a)", "2": "Output (b)", None: ""}
    swapped = {"1": "Output (b)", "2": "Output (a)", None: ""}
    return {
        "output_1": "old",
        "output_2": "newer",
        "label": 2,
        "results": [
            {
                "swap = False": {
                    "completion": [unswapped[false_winner], "stop"],
                    "winner": false_winner,
                },
                "swap = True": {
                    "completion": [swapped[true_winner], "stop"],
                    "winner": true_winner,
                },
            }
        ],
    }


@pytest.mark.parametrize(
    ("false_winner", "true_winner", "status", "winner", "consistent", "judge_winners"),
    [
        pytest.param(
            "2",
            "2",
            CaseStatus.OK,
            Winner.NEW,
            True,
            {"GPT-4": Winner.NEW},
            id="same-answer-both-orders",
        ),
        pytest.param(
            "1", "2", CaseStatus.OK, Winner.TIE, False, {"GPT-4": Winner.TIE}, id="flipped-is-a-tie"
        ),
        pytest.param(None, "2", CaseStatus.FAILED, None, None, {}, id="null-is-failed-not-a-loss"),
        pytest.param(None, None, CaseStatus.FAILED, None, None, {}, id="null-twice-is-failed"),
    ],
)
def test_an_instance_converts_as_grade_pairwise_would_build_it(
    false_winner, true_winner, status, winner, consistent, judge_winners
):
    result = case_result("7", instance(false_winner, true_winner), model="GPT-4")
    assert (result.status, result.winner, result.consistent) == (status, winner, consistent)
    assert result.judge_winners == judge_winners
    assert result.lengths == {"old": 3, "new": 5}
    assert result.rubric_hash == RUBRIC_HASH
    assert [j.order for j in result.judgements] == [Order.OLD_NEW, Order.NEW_OLD]
