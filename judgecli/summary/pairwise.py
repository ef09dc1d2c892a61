"""CaseResults of a `pairwise` run → its PairwiseSummary: win rate with intervals, flip
consistency, position and length preference (with the length-controlled win rate), per
category and per judge.

Outcomes are NEW's: a win 1, a tie 0.5, a loss 0. A failed case (no verdict) and a case
the "drop" flip policy left undecided are outside the win rate; both are counted.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Literal

from pydantic import Field

from judgecli.result import OUTCOME, CaseResult, CaseStatus, Order, Winner
from judgecli.rubric import Rubric
from judgecli.stats.agreement import fleiss_kappa, pairwise_cohen_kappas, percent_agreement
from judgecli.stats.group_tests import proportion_test
from judgecli.stats.interval_rule import proportion_interval
from judgecli.stats.intervals import Interval
from judgecli.stats.multiplicity import Correction, category_calls
from judgecli.stats.paired import sign_test
from judgecli.stats.pairwise import (
    consistency_rate,
    first_position_rate,
    length_preference,
    mean_length,
    win_rate,
    win_rate_bootstrap_interval,
    win_rate_no_ties,
)
from judgecli.stats.scores import NO_CATEGORY
from judgecli.summary.facts import (
    CategoryCalls,
    CategorySummary,
    Command,
    CorrectedEstimate,
    CriterionSummary,
    LabelDesign,
    SummaryHead,
    SummaryTail,
    calls_summary,
)
from judgecli.summary.head import run_facts
from judgecli.summary.length_control import LengthControlSummary, length_control_fields
from judgecli.summary.parts import Part
from judgecli.summary.weighted import win_rate_weighted
from judgecli.verdict import Position

WINNER_LABELS = [Winner.OLD, Winner.NEW, Winner.TIE]


class JudgeSummary(Part):
    """One judge of a pairwise panel on its own."""

    win_rate: float | None = None
    win_rate_ci: Interval = (None, None)
    wins: int
    losses: int
    ties: int
    consistency: float | None = None
    first_position_rate: float | None = None


class LengthSummary(Part):
    """Does the judge reward length? (Answers' lengths in characters.)."""

    longer_wins_rate: float | None = None
    """Among decided cases whose answers differ in length: how often the longer one won."""
    mean_length_winner: float | None = None
    mean_length_loser: float | None = None
    mean_length_old: float | None = None
    mean_length_new: float | None = None
    more_steps_wins_rate: float | None = None
    """Agents' runs: among decided cases whose runs made different numbers of tool calls,
    how often the run with more calls won."""
    mean_steps_winner: float | None = None
    """Agents' runs: the mean tool calls of the winning run (of the losing one below)."""
    mean_steps_loser: float | None = None
    mean_steps_old: float | None = None
    mean_steps_new: float | None = None


class InterJudgeSummary(Part):
    """How much the judges of a panel agree (on their flip-reconciled verdicts)."""

    fleiss_kappa: float | None = None
    cohen_kappa: dict[str, float | None]
    percent_agreement: float | None = None


class PairwiseNumbers(SummaryHead):
    """NEW against OLD, before the tail."""

    criteria: dict[str, CriterionSummary] = Field(default_factory=dict)
    """Always empty: every summary has written the key since there was one model for all."""
    by_category: dict[str, CategorySummary] = Field(default_factory=dict)
    win_rate: float | None = None
    win_rate_ci: Interval | None = None
    """Seeded percentile bootstrap over cases (the interval the gate's lower bound uses)."""
    win_rate_ci_wilson: Interval | None = None
    """Wilson interval on wins + ties/2 (an approximation; reported beside the bootstrap)."""
    win_rate_no_ties: float | None = None
    wins: int
    losses: int
    ties: int
    dropped: int
    """Cases the flip policy "drop" left without a verdict."""
    loss_rate: float | None = None
    loss_rate_ci: Interval | None = None
    flip: bool
    flip_policy: str
    consistency: float | None = None
    consistency_ci: Interval | None = None
    first_position_rate: float | None = None
    length: LengthSummary | None = None
    judges: dict[str, JudgeSummary] | None = None
    """A panel: each judge on its own."""
    inter_judge: InterJudgeSummary | None = None


class PairwiseSummary(SummaryTail, PairwiseNumbers):
    """summary.json of `judge pairwise`."""

    command: Literal[Command.PAIRWISE] = Command.PAIRWISE
    sign_test_p: float | None = None
    """Exact two-sided sign test of wins against losses (ties left out, counted above)."""
    category_calls: CategoryCalls | None = None
    win_rate_corrected: float | None = None
    """Human-corrected win rate (PPI++ with --labels)."""
    win_rate_corrected_ci: Interval | None = None
    corrections: dict[str, CorrectedEstimate | LabelDesign] | None = None
    """How each corrected number was made (--labels), and under `design` the plan that drew
    the labels when they carry inclusion probabilities."""
    win_rate_length_controlled: float | None = None
    """NEW's win rate predicted at equal answer length: AlpacaEval 2's length-controlled GLM
    without its instruction-difficulty term (`length_control.outcome` says what was fitted)."""
    win_rate_length_controlled_ci: Interval | None = None
    """Seeded percentile bootstrap over cases, 95%."""
    length_control: LengthControlSummary | None = None
    win_rate_weighted: float | None = None
    """--score-mode logprob: the mean over cases of P(new) + ½ P(tie)."""
    win_rate_weighted_ci: Interval | None = None
    ask_consistency: float | None = None
    """--repeats K: the share of asks (one judge, one repeat, a pair in both orders) whose
    two orders agreed; `consistency` counts a pair only when every ask on it agreed. The
    position-consistency floor of a one-judge run reads this one (issue 29)."""


def outcomes(winners: list[Winner]) -> list[float]:
    """NEW's outcome per decided case."""
    return [OUTCOME[w] for w in winners]


def tally(winners: list[Winner]) -> tuple[int, int, int]:
    """(wins, losses, ties) of NEW."""
    return (winners.count(Winner.NEW), winners.count(Winner.OLD), winners.count(Winner.TIE))


def first_position_wins(results: list[CaseResult], model: str | None = None) -> list[bool]:
    """For every single-order verdict that picked a side: did position A win?"""
    picks = []
    for r in results:
        for j in r.judgements:
            if model is not None and j.model != model:
                continue
            if j.verdict is not None and j.verdict.winner in (Position.A, Position.B):
                picks.append(j.verdict.winner is Position.A)
    return picks


def order_agreements(results: list[CaseResult], model: str | None = None) -> list[bool]:
    """For each ask of a judge (`model`, else every judge) on a pair, one per --repeats
    repeat, with both orders judged: did its two orders agree?
    """
    flags = []
    for r in results:
        asks: dict[tuple[str, int | None], dict[Order | None, Position | None]] = {}
        for j in r.judgements:
            if j.verdict is not None and model in (None, j.model):
                asks.setdefault((j.model, j.repeat), {})[j.order] = j.verdict.winner
        for by_order in asks.values():
            if set(by_order) == {Order.OLD_NEW, Order.NEW_OLD} and None not in by_order.values():
                old_new, new_old = by_order[Order.OLD_NEW], by_order[Order.NEW_OLD]
                # Consistent when the slot flips with the order (A then B) or both say tie.
                flags.append(
                    old_new == new_old == Position.TIE
                    or {old_new, new_old} == {Position.A, Position.B}
                )
    return flags


def judge_consistency(results: list[CaseResult], model: str) -> float | None:
    """Share of this judge's asks (a pair, in each --repeats repeat) whose two orders gave
    the same verdict.
    """
    return consistency_rate(order_agreements(results, model))


def ask_consistency(ok: list[CaseResult]) -> float | None:
    """--repeats K: the share of every judge's asks whose two orders agreed; None without
    repeats (then it is `consistency`, or a panel's per-judge numbers).
    """
    if not any(j.repeat for r in ok for j in r.judgements):
        return None
    return consistency_rate(order_agreements(ok))


def length_summary(decided: list[CaseResult]) -> LengthSummary:
    """How answer length (and, of agents' runs, the number of tool calls) relates to
    winning.
    """
    chars = length_preferences(decided, "old", "new")
    runs = [r for r in decided if {"old_steps", "new_steps"} <= r.lengths.keys()]
    steps = length_preferences(runs, "old_steps", "new_steps")
    return LengthSummary(
        longer_wins_rate=chars[0],
        mean_length_winner=chars[1],
        mean_length_loser=chars[2],
        mean_length_old=mean_length([r.lengths.get("old", 0) for r in decided]),
        mean_length_new=mean_length([r.lengths.get("new", 0) for r in decided]),
        **(
            {
                "more_steps_wins_rate": steps[0],
                "mean_steps_winner": steps[1],
                "mean_steps_loser": steps[2],
                "mean_steps_old": mean_length([r.lengths["old_steps"] for r in runs]),
                "mean_steps_new": mean_length([r.lengths["new_steps"] for r in runs]),
            }
            if runs
            else {}
        ),
    )


def length_preferences(
    decided: list[CaseResult], old_key: str, new_key: str
) -> tuple[float | None, float | None, float | None]:
    """(how often the longer side won among decided cases whose sides differ, the mean
    length of winners, of losers), lengths read from each result's `lengths` keys.
    """
    longer_won, winners, losers = [], [], []
    for r in decided:
        old, new = r.lengths.get(old_key, 0), r.lengths.get(new_key, 0)
        if r.winner in (Winner.OLD, Winner.NEW):
            won, lost = (new, old) if r.winner is Winner.NEW else (old, new)
            winners.append(won)
            losers.append(lost)
            if old != new:
                longer_won.append(won > lost)
    return length_preference(longer_won), mean_length(winners), mean_length(losers)


def judge_summaries(ok: list[CaseResult], models: list[str], seed: int) -> dict[str, JudgeSummary]:
    """Each judge's own win rate, consistency and first-position preference."""
    summaries = {}
    for model in models:
        verdicts = [w for r in ok if (w := r.judge_winners.get(model)) is not None]
        wins, losses, ties = tally(verdicts)
        summaries[model] = JudgeSummary(
            win_rate=win_rate(wins, losses, ties),
            win_rate_ci=win_rate_bootstrap_interval(outcomes(verdicts), seed=seed),
            wins=wins,
            losses=losses,
            ties=ties,
            consistency=judge_consistency(ok, model),
            first_position_rate=first_position_rate(first_position_wins(ok, model)),
        )
    return summaries


def inter_judge(ok: list[CaseResult], models: list[str]) -> InterJudgeSummary:
    """Agreement between the judges, on cases where every judge has a verdict."""
    rows = [
        [r.judge_winners[m] for m in models]
        for r in ok
        if all(r.judge_winners.get(m) is not None for m in models)
    ]
    columns: dict[str, Sequence[Hashable]] = {
        m: [row[i] for row in rows] for i, m in enumerate(models)
    }
    pairs = [percent_agreement(columns[a], columns[b]) for a in models for b in models if a < b]
    agreed = [p for p in pairs if p is not None]
    return InterJudgeSummary(
        fleiss_kappa=fleiss_kappa(rows, labels=WINNER_LABELS),
        cohen_kappa=pairwise_cohen_kappas(columns, labels=WINNER_LABELS),
        percent_agreement=sum(agreed) / len(agreed) if agreed else None,
    )


PROPORTION_TEST = "score test of each rate (the Wilson interval's dual)"


def category_summaries(
    decided: list[CaseResult], *, reference: float, correction: Correction
) -> tuple[dict[str, CategorySummary], CategoryCalls | None]:
    """Win rate per category, with a Wilson interval on wins + ties / 2, and whether it is
    above or below `reference` (the gate's bar, else 50%) after adjusting for the number of
    categories tested.

    Not the bootstrap the overall rate uses: a category is often a handful of cases, and
    resampling 5 wins out of 5 can only ever give 5 of 5, the zero-width [100%, 100%] that
    a chart then draws as certain. Wilson gives [56.6%, 100%] there. Counting a tie as half
    a success is an approximation (see ``wilson_interval``), but one that stays inside
    [0, 1] and widens as it should when n is small; the test that marks a category is the
    Wilson interval's dual, conservative with ties. Six categories each tested at 5% would
    mark one by chance in a quarter of runs: the marks come from Holm-adjusted p-values
    (Benjamini–Hochberg with --fdr).
    """
    groups: dict[str, list[Winner]] = {}
    for r in decided:
        assert r.winner is not None
        groups.setdefault(r.category or NO_CATEGORY, []).append(r.winner)
    if len(groups) < 2:
        return {}, None
    tallies = {name: tally(groups[name]) for name in sorted(groups)}
    tests = {
        name: (
            win_rate(wins, losses, ties),
            wins + losses + ties,
            proportion_test(wins + ties / 2, wins + losses + ties, reference),
        )
        for name, (wins, losses, ties) in tallies.items()
    }
    calls = category_calls(tests, reference, correction=correction)
    summaries = {}
    for name, (wins, losses, ties) in tallies.items():
        n = wins + losses + ties
        summaries[name] = CategorySummary(
            n=n,
            win_rate=win_rate(wins, losses, ties),
            win_rate_ci=proportion_interval(wins + ties / 2, n),
            wins=wins,
            losses=losses,
            ties=ties,
            p_value=calls[name].p_value,
            p_adjusted=calls[name].p_adjusted,
            mark=calls[name].mark.value,
        )
    return summaries, calls_summary(PROPORTION_TEST, reference, correction, calls)


def summarize_pairwise(
    results: Iterable[CaseResult],
    *,
    rubric: Rubric,
    models: list[str],
    flip: bool,
    flip_policy: str,
    seed: int = 0,
    reference: float = 0.5,
    correction: Correction = Correction.HOLM,
) -> PairwiseSummary:
    """The summary of a `pairwise` run; categories are marked against `reference` (the
    gate's bar, else 50%).
    """
    rows = list(results)
    ok = [r for r in rows if r.status is CaseStatus.OK]
    decided = [r for r in ok if r.winner is not None]
    winners = [r.winner for r in decided if r.winner is not None]
    wins, losses, ties = tally(winners)
    n = len(winners)
    consistent = [r.consistent for r in ok if r.consistent is not None]
    categories, calls = category_summaries(decided, reference=reference, correction=correction)
    return PairwiseSummary(
        **run_facts(rows, rubric=rubric, models=models),
        win_rate=win_rate(wins, losses, ties),
        win_rate_ci=win_rate_bootstrap_interval(outcomes(winners), seed=seed),
        win_rate_ci_wilson=proportion_interval(wins + ties / 2, n),
        win_rate_no_ties=win_rate_no_ties(wins, losses),
        wins=wins,
        losses=losses,
        ties=ties,
        dropped=len(ok) - len(decided),
        loss_rate=losses / n if n else None,
        loss_rate_ci=proportion_interval(losses, n),
        flip=flip,
        flip_policy=flip_policy,
        consistency=consistency_rate(consistent),
        consistency_ci=proportion_interval(sum(consistent), len(consistent)),
        first_position_rate=first_position_rate(first_position_wins(ok)),
        length=length_summary(decided),
        by_category=categories,
        judges=judge_summaries(ok, models, seed) if len(models) > 1 else None,
        inter_judge=inter_judge(ok, models) if len(models) > 1 else None,
        sign_test_p=sign_test(wins, losses),
        category_calls=calls,
        **length_control_fields(ok, seed=seed),
        **win_rate_weighted(ok),
        ask_consistency=ask_consistency(ok),
    )
