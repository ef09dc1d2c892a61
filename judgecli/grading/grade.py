"""Grading one case: prompts → judge calls (`asking`) → verdicts → the panel's verdict.

A case with any failed judgement is a failed case: dropping one judge of a panel would
quietly turn it into a different panel (or one ask of --repeats, a different K).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar, cast

from judgecli.grading.asking import GradingPlan, Spend, ask_judge
from judgecli.grading.debias import (
    FlipVerdict,
    PanelVerdict,
    combine_panel,
    combine_winners,
    reconcile_flip,
    to_winner,
)
from judgecli.grading.logprobs import (
    graded_verdict,
    mean_probabilities,
)
from judgecli.grading.prompt import (
    build_pair_messages,
    case_values,
    compared_length,
    compared_text,
    messages_from,
)
from judgecli.grading.repeats import (
    Compared,
    agreement,
    compared_for,
    majority_winner,
    repeat_verdict,
)
from judgecli.grading.turns import aggregate_turns, turn_record
from judgecli.inputs.conversation import answer_positions
from judgecli.inputs.dataset import Case
from judgecli.inputs.pairs import Pair
from judgecli.judge.protocol import JudgeClient
from judgecli.result import CaseResult, CaseStatus, Judgement, Order, RepeatVerdict
from judgecli.rubric import Rubric, Turns

__all__ = [
    "GradingPlan",
    "Spend",
    "ask_judge",
    "grade_pairwise",
    "grade_pointwise",
    "settle_all",
    "single_order",
]

T = TypeVar("T")


async def settle_all(calls: Iterable[Awaitable[T]]) -> list[T]:
    """Await every call, and only then raise the first error among them: when one call
    stops the run (the budget), its siblings' replies are already paid for, so they are
    awaited and cached instead of cancelled mid-flight.
    """
    pending = list(calls)
    if len(pending) == 1:
        # One call (one judge, no repeats): nothing beside it to wait for, and no task.
        return [await pending[0]]
    outcomes = await asyncio.gather(*pending, return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    return cast(list[T], outcomes)


async def grade_pointwise(client: JudgeClient, plan: GradingPlan, case: Case) -> CaseResult:
    """Grade one case with a pointwise or binary rubric, by every judge of the panel (each
    asked K times with --repeats).

    A conversation under `turns: each` is graded turn by turn (every assistant turn, with
    the turns before it), and its turns' verdicts make the case's by the rubric's
    `aggregate`; with --repeats, each repeat aggregates its own turns' verdicts.
    """
    rubric = plan.rubric
    each = rubric.turns is Turns.EACH and case.messages is not None
    views = case.answer_turns() if each else [case]
    values = [case_values(rubric, view) for view in views]
    prompts = [messages_from(rubric, v) for v in values]
    asks = [
        (turn, model, repeat)
        for turn in range(len(views))
        for repeat in plan.repeat_indices
        for model in plan.models
    ]
    judgements = await settle_all(
        ask_judge(client, plan, model, prompts[turn], repeat=repeat) for turn, model, repeat in asks
    )
    common = {
        "id": case.id,
        "category": case.category,
        "rubric_hash": rubric.content_hash,
        # The last turn's view shows the whole conversation.
        "case": values[-1],
    }
    failed = [
        (turn, j) for (turn, _, _), j in zip(asks, judgements, strict=True) if j.verdict is None
    ]
    if failed:
        error = "; ".join(
            f"{f'turn {turn + 1}: ' if each else ''}{j.model}: {j.error}" for turn, j in failed
        )
        return CaseResult(status=CaseStatus.FAILED, error=error, judgements=judgements, **common)
    panels = {
        (turn, repeat): combine_panel(
            rubric,
            [
                verdict
                for (t, _, r), j in zip(asks, judgements, strict=True)
                if (t, r) == (turn, repeat) and (verdict := graded_verdict(j))
            ],
        )
        for turn in range(len(views))
        for repeat in plan.repeat_indices
    }
    by_repeat = [
        aggregate_turns(rubric, [panels[turn, repeat] for turn in range(len(views))])
        if each
        else panels[0, repeat]
        for repeat in plan.repeat_indices
    ]
    if plan.repeats == 1:
        panel, repeated = by_repeat[0], {}
    else:
        panel = combine_panel(rubric, by_repeat)
        verdicts = [repeat_verdict(repeat, p) for repeat, p in enumerate(by_repeat)]
        repeated = repeat_fields(verdicts, compared_for(rubric))
    return CaseResult(
        status=CaseStatus.OK,
        score=panel.score,
        criteria=panel.criteria,
        choice=panel.choice,
        passed=panel.passed,
        judgements=judgements,
        turns=graded_turns(plan, case, panels) if each else None,
        probabilities=weighed(judgements),
        **common,
        **repeated,
    )


def graded_turns(
    plan: GradingPlan, case: Case, panels: dict[tuple[int, int | None], PanelVerdict]
) -> list[dict[str, Any]]:
    """`turns: each`: every graded turn's verdict (over its repeats, with --repeats)."""
    assert case.messages is not None
    records = []
    for turn, message in enumerate(answer_positions(case.messages)):
        said = [panels[turn, repeat] for repeat in plan.repeat_indices]
        verdict = said[0] if plan.repeats == 1 else combine_panel(plan.rubric, said)
        records.append(turn_record(turn + 1, message, verdict))
    return records


def repeat_fields(verdicts: list[RepeatVerdict], compared: str) -> dict[str, Any]:
    """A repeated case's `repeats`, `stable` and `spread`."""
    agreed = agreement(verdicts, compared)
    return {"repeats": verdicts, "stable": agreed.stable, "spread": agreed.spread}


def pair_text(rubric: Rubric, pair: Pair) -> dict[str, str]:
    """The pair's text as the judge saw it, with the answers (or conversations) named old
    and new.
    """
    return case_values(rubric, pair.old) | {
        "output_old": compared_text(pair.old),
        "output_new": compared_text(pair.new),
    }


def single_order(case_id: str, seed: int) -> Order:
    """Without --flip, each case gets one order drawn from (seed, id): position bias then
    averages out over cases instead of always favouring the same side, and a re-run or
    resume draws the same order.
    """
    byte = hashlib.sha256(f"{seed}:{case_id}".encode()).digest()[0]
    return Order.OLD_NEW if byte % 2 == 0 else Order.NEW_OLD


async def grade_pairwise(client: JudgeClient, plan: GradingPlan, pair: Pair) -> CaseResult:
    """Compare OLD and NEW for one id: every judge, both orders, reconciled and combined."""
    orders = [Order.OLD_NEW, Order.NEW_OLD] if plan.flip else [single_order(pair.id, plan.seed)]
    messages = {
        order: build_pair_messages(
            plan.rubric, pair.old, pair.new, old_first=order is Order.OLD_NEW
        )
        for order in orders
    }
    asks = [
        (model, order, repeat)
        for repeat in plan.repeat_indices
        for model in plan.models
        for order in orders
    ]
    judgements = await settle_all(
        ask_judge(client, plan, model, messages[order], order=order, repeat=repeat)
        for model, order, repeat in asks
    )
    common = {
        "id": pair.id,
        "category": pair.old.category or pair.new.category,
        "rubric_hash": plan.rubric.content_hash,
        "case": pair_text(plan.rubric, pair),
        "lengths": {"old": compared_length(pair.old), "new": compared_length(pair.new)},
        "judgements": judgements,
    }
    failed = [j for j in judgements if j.verdict is None]
    if failed:
        error = "; ".join(f"{j.model} ({j.order}): {j.error}" for j in failed)
        return CaseResult(status=CaseStatus.FAILED, error=error, **common)
    # Each judge's verdict in each repeat, its orders reconciled.
    verdicts = {
        (model, repeat): reconcile_judge(
            plan, [j for j in judgements if j.model == model and j.repeat == repeat]
        )
        for repeat in plan.repeat_indices
        for model in plan.models
    }
    winners = [
        combine_winners(
            [v.winner for (_, r), v in verdicts.items() if r == repeat and v.winner is not None]
        )
        for repeat in plan.repeat_indices
    ]
    judge_winners = {
        model: majority_winner([v.winner for (m, _), v in verdicts.items() if m == model])
        for model in plan.models
    }
    repeated: dict[str, Any] = {}
    if plan.repeats > 1:
        said = [RepeatVerdict(repeat=r, winner=w) for r, w in enumerate(winners)]
        repeated = repeat_fields(said, Compared.WINNER)
    return CaseResult(
        status=CaseStatus.OK,
        winner=majority_winner(winners) if plan.repeats > 1 else winners[0],
        consistent=all(v.consistent for v in verdicts.values()) if plan.flip else None,
        judge_winners=judge_winners,
        probabilities=weighed(judgements),
        **common,
        **repeated,
    )


def weighed(judgements: list[Judgement]) -> dict[str, float] | None:
    """--score-mode logprob: the case's probability of each value (pairwise: of old, new
    and tie, both orders mapped back), the mean over its judgements; None without.
    """
    judged = [j.probabilities for j in judgements if j.probabilities]
    return mean_probabilities(judged) if judged else None


def reconcile_judge(plan: GradingPlan, judgements: list[Judgement]) -> FlipVerdict:
    """One judge's verdict on a pair from its one or two orders."""
    winners = []
    for j in judgements:
        assert j.verdict is not None
        assert j.verdict.winner is not None
        assert j.order is not None
        winners.append(to_winner(j.verdict.winner, j.order))
    if len(winners) == 1:
        return FlipVerdict(winner=winners[0], consistent=True)
    return reconcile_flip(winners[0], winners[1], plan.flip_policy)
