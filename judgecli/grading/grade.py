"""Grading one case: prompts → judge calls (`asking`) → verdicts → the panel's verdict.

A case with any failed judgement is a failed case: dropping one judge of a panel would
quietly turn it into a different panel (or one ask of --repeats, a different K).
"""

from __future__ import annotations

import hashlib
from typing import Any

from judgecli.grading.asking import GradingPlan, Spend, ask_judge, settle_all
from judgecli.grading.checklist import grade_checklist
from judgecli.grading.debias import (
    FlipVerdict,
    PanelVerdict,
    combine_panel,
    combine_winners,
    reconcile_flip,
    to_winner,
)
from judgecli.grading.elision import TrajectoryTooLongError
from judgecli.grading.logprobs import (
    graded_verdict,
    mean_probabilities,
)
from judgecli.grading.prompt import (
    build_pair_messages,
    case_values,
    compared_length,
    compared_steps,
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
from judgecli.grading.steps import Graded, graded_parts, part_records
from judgecli.grading.tool_calls import checked_first
from judgecli.grading.turns import aggregate_turns
from judgecli.inputs.dataset import Case
from judgecli.inputs.pairs import Pair
from judgecli.judge.protocol import JudgeClient
from judgecli.result import CaseResult, CaseStatus, Judgement, Order, RepeatVerdict
from judgecli.rubric import Rubric, RubricKind

__all__ = [
    "GradingPlan",
    "Spend",
    "ask_judge",
    "grade_pairwise",
    "grade_pointwise",
    "settle_all",
    "single_order",
]


async def grade_pointwise(client: JudgeClient, plan: GradingPlan, case: Case) -> CaseResult:
    """Grade one case with a pointwise or binary rubric: its tool calls checked first when
    the rubric has a `tool_calls` check (`grading.tool_calls`: the check decides the cases
    it can), the judges for the rest (`judge_pointwise`). A checklist rubric grades the
    case's own items (`grading.checklist`).
    """
    if plan.rubric.kind is RubricKind.CHECKLIST:
        return await grade_checklist(client, plan, case)
    return await checked_first(plan.rubric, case, lambda: judge_pointwise(client, plan, case))


async def judge_pointwise(client: JudgeClient, plan: GradingPlan, case: Case) -> CaseResult:
    """Grade one case with a pointwise or binary rubric, by every judge of the panel (each
    asked K times with --repeats).

    A conversation under `turns: each` is graded turn by turn (every assistant turn, with
    the turns before it), an agent's run under `steps: each` call by call (each in its
    context: `grading.steps`), and their verdicts make the case's by the rubric's
    `aggregate`; with --repeats, each repeat aggregates its own verdicts. A run that does not
    fit --elide-at even with its middle left out fails, with the reason.
    """
    rubric = plan.rubric
    graded = graded_parts(rubric, case)
    views, each = graded.views, graded.each
    values = []
    for at, view in enumerate(views):
        try:
            values.append(case_values(rubric, view, budget=plan.elide_at))
        except TrajectoryTooLongError as err:
            return CaseResult(
                status=CaseStatus.FAILED,
                error=f"{graded.label(at)}{err}",
                id=case.id,
                category=case.category,
                rubric_hash=rubric.content_hash,
            )
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
        # The last view shows the most: a conversation whole, a run up to its last call.
        "case": values[-1],
    }
    failed = [
        (turn, j) for (turn, _, _), j in zip(asks, judgements, strict=True) if j.verdict is None
    ]
    if failed:
        error = "; ".join(f"{graded.label(turn)}{j.model}: {j.error}" for turn, j in failed)
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
        probabilities=weighed(judgements),
        **common,
        **repeated,
        **graded_records(plan, graded, case, panels),
    )


def graded_records(
    plan: GradingPlan,
    graded: Graded,
    case: Case,
    panels: dict[tuple[int, int | None], PanelVerdict],
) -> dict[str, Any]:
    """`turns: each` or `steps: each`: every graded part's verdict (over its repeats, with
    --repeats), as the result's `turns` or `steps`.
    """
    verdicts = []
    for view in range(len(graded.views)):
        said = [panels[view, repeat] for repeat in plan.repeat_indices]
        verdicts.append(said[0] if plan.repeats == 1 else combine_panel(plan.rubric, said))
    return part_records(graded, case, verdicts)


def repeat_fields(verdicts: list[RepeatVerdict], compared: str) -> dict[str, Any]:
    """A repeated case's `repeats`, `stable` and `spread`."""
    agreed = agreement(verdicts, compared)
    return {"repeats": verdicts, "stable": agreed.stable, "spread": agreed.spread}


def pair_text(rubric: Rubric, pair: Pair, budget: int | None = None) -> dict[str, str]:
    """The pair's text as the judge saw it, with the answers (or conversations) named old
    and new.
    """
    return case_values(rubric, pair.old, budget=budget) | {
        "output_old": compared_text(pair.old, budget=budget),
        "output_new": compared_text(pair.new, budget=budget),
    }


def pair_lengths(pair: Pair) -> dict[str, int]:
    """The result's `lengths`: characters of each side (`compared_length`), and of agents'
    runs the tool calls each made (`old_steps`, `new_steps`).
    """
    lengths = {"old": compared_length(pair.old), "new": compared_length(pair.new)}
    old_steps, new_steps = compared_steps(pair.old), compared_steps(pair.new)
    if old_steps is not None and new_steps is not None:
        lengths |= {"old_steps": old_steps, "new_steps": new_steps}
    return lengths


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
    try:
        messages = {
            order: build_pair_messages(
                plan.rubric,
                pair.old,
                pair.new,
                old_first=order is Order.OLD_NEW,
                budget=plan.elide_at,
            )
            for order in orders
        }
    except TrajectoryTooLongError as err:
        return CaseResult(
            status=CaseStatus.FAILED,
            error=str(err),
            id=pair.id,
            category=pair.old.category or pair.new.category,
            rubric_hash=plan.rubric.content_hash,
        )
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
        "case": pair_text(plan.rubric, pair, plan.elide_at),
        "lengths": pair_lengths(pair),
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
