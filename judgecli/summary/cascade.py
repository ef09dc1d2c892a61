"""CaseResults of a --screen run → its CascadeSummary: the share escalated, each tier's calls
and cost, the estimated cost of judging every case with the strong tier, and how often the
screen agreed with the strong judge where both answered.

The estimate prices what the strong tier would have been sent: on an escalated case its
real spend, on a case the screen decided the screen's own token counts (the same prompts,
both orders for pairwise, repair turns included) at each strong judge's price. Tokenizers
differ between models, so it is an estimate; the arithmetic is exact and tested.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from judgecli.result import CaseResult, CaseStatus, Judgement, Tier
from judgecli.rubric import Rubric, RubricKind
from judgecli.settings.config import RunConfig
from judgecli.settings.judges import ModelSettings, Price
from judgecli.stats.interval_rule import proportion_interval
from judgecli.stats.intervals import Interval
from judgecli.summary.facts import CascadeSummary, ScreenAgreement, TierUsage
from judgecli.usage import COST_DIGITS, total

if TYPE_CHECKING:
    from judgecli.grading.cascade import Cascade


def summarize_cascade(
    results: Iterable[CaseResult],
    *,
    screen: str,
    judges: list[str],
    rule: str,
    rubric: Rubric,
    prices: Mapping[str, Price | None],
) -> CascadeSummary:
    """The cascade block of summary.json. `prices` holds each strong judge's price."""
    tiered = [r for r in results if r.tier is not None]
    escalated = [r for r in tiered if r.tier is Tier.STRONG]
    screened = [r for r in tiered if r.tier is Tier.SCREEN]
    tiers = {
        Tier.SCREEN.value: tier_usage(
            len(screened), [j for r in tiered for j in screen_judgements(r)]
        ),
        Tier.STRONG.value: tier_usage(len(escalated), [j for r in escalated for j in r.judgements]),
    }
    cost = total(tiers.values()).cost_usd
    known = [price for name in judges if (price := prices.get(name)) is not None]
    unpriced = [name for name in judges if prices.get(name) is None]
    all_strong = None
    if not unpriced:
        would_cost = sum(
            price.cost(j.prompt_tokens, j.completion_tokens)
            for r in screened
            for j in r.judgements
            for price in known
        )
        all_strong = tiers[Tier.STRONG.value].cost_usd + would_cost
    saved = None if all_strong is None else all_strong - cost
    share, share_ci = proportion(len(escalated), len(tiered))
    return CascadeSummary(
        screen=screen,
        judges=judges,
        rule=rule,
        n_cases=len(tiered),
        escalated=len(escalated),
        escalated_share=share,
        escalated_share_ci=share_ci,
        tiers=tiers,
        cost_usd=round(cost, COST_DIGITS),
        all_strong_cost_usd=None if all_strong is None else round(all_strong, COST_DIGITS),
        saved_usd=None if saved is None else round(saved, COST_DIGITS),
        saved_share=saved / all_strong if saved is not None and all_strong else None,
        unpriced=unpriced,
        agreement=screen_agreement(escalated, rubric),
    )


def screen_judgements(result: CaseResult) -> list[Judgement]:
    """The screen's calls for one case: its result's own, or the kept screen result's."""
    if result.tier is Tier.SCREEN:
        return result.judgements
    return result.screen.judgements if result.screen else []


def tier_usage(decided: int, judgements: list[Judgement]) -> TierUsage:
    """Calls, tokens and cost of one tier's judgements."""
    return TierUsage(
        decided=decided,
        calls=sum(j.attempts for j in judgements),
        **total(judgements).rounded().token_fields(),
    )


def proportion(k: int, n: int) -> tuple[float | None, Interval]:
    """k/n and its Wilson interval (None without cases)."""
    return (k / n if n else None), proportion_interval(k, n)


def agreement_basis(rubric: Rubric) -> str:
    """What "the screen agreed" means for this rubric: the decision a user acts on."""
    if rubric.kind is RubricKind.PAIRWISE:
        return "winner"
    if rubric.kind is RubricKind.BINARY:
        return "choice"
    return "pass/fail" if rubric.pass_at is not None else "score"


def screen_agreement(escalated: list[CaseResult], rubric: Rubric) -> ScreenAgreement:
    """On escalated cases where both tiers gave a verdict: did they give the same one?"""
    on = agreement_basis(rubric)
    both = [
        (r.screen, r)
        for r in escalated
        if r.screen is not None and r.screen.status is CaseStatus.OK and r.status is CaseStatus.OK
    ]
    agreed = sum(1 for screen, strong in both if same_verdict(on, screen, strong))
    rate, rate_ci = proportion(agreed, len(both))
    diffs = [
        abs(screen.score - strong.score)
        for screen, strong in both
        if screen.score is not None and strong.score is not None
    ]
    return ScreenAgreement(
        on=on,
        n=len(both),
        agreed=agreed,
        rate=rate,
        rate_ci=rate_ci,
        mean_abs_score_diff=sum(diffs) / len(diffs) if diffs else None,
    )


def same_verdict(on: str, a: CaseResult, b: CaseResult) -> bool:
    """Do two results give the same verdict, compared on `on` (agreement_basis)?"""
    if on == "winner":
        return a.winner == b.winner
    if on == "choice":
        return a.choice == b.choice
    if on == "pass/fail":
        return a.passed == b.passed
    return a.score == b.score


def summarize_tiers(
    results: list[CaseResult], config: RunConfig, cascade: Cascade | None
) -> CascadeSummary | None:
    """The summary's cascade block (None without --screen), priced per strong judge."""
    if cascade is None:
        return None
    return summarize_cascade(
        results,
        screen=cascade.screen,
        judges=config.model_names,
        rule=cascade.rule.text,
        rubric=cascade.screen_plan.rubric,
        prices=strong_prices(config.models),
    )


def strong_prices(models: list[ModelSettings]) -> dict[str, Price | None]:
    """Each judge's price: --price, else LiteLLM's map (imported only when needed)."""
    if all(m.price is not None for m in models):
        return {m.name: m.price for m in models}
    from judgecli.judge.provider import import_litellm, model_price

    litellm = import_litellm()
    return {m.name: model_price(litellm, m) for m in models}
