"""The cascade block of the summary: escalation share, cost per tier, the all-strong estimate
(worked by hand from token counts and prices), screen-strong agreement, and its report.
"""

from __future__ import annotations

import pytest

from judgecli.inputs.rubric_file import parse_rubric
from judgecli.report.markdown import render_markdown
from judgecli.result import CaseResult, CaseStatus, Judgement, Tier, Winner
from judgecli.rubric import Rubric
from judgecli.settings.judges import Price
from judgecli.stats.intervals import wilson_interval
from judgecli.summary.cascade import summarize_cascade
from judgecli.summary.score import summarize_score

STRONG = Price(input_per_mtok=10.0, output_per_mtok=30.0)
OTHER = Price(input_per_mtok=2.0, output_per_mtok=8.0)


def call(model: str, tokens_in: int, tokens_out: int, cost: float) -> Judgement:
    return Judgement(
        model=model,
        prompt_tokens=tokens_in,
        completion_tokens=tokens_out,
        cost_usd=cost,
        attempts=1,
    )


def screened(case_id: str, score: float, tokens: tuple[int, int], cost: float) -> CaseResult:
    return CaseResult(
        id=case_id,
        status=CaseStatus.OK,
        rubric_hash="h",
        score=score,
        passed=score >= 3,
        tier=Tier.SCREEN,
        judgements=[call("cheap", *tokens, cost)],
    )


def escalated(case_id: str, screen_score: float, strong_score: float) -> CaseResult:
    screen = screened(case_id, screen_score, (150, 15), 0.0001).model_copy(update={"tier": None})
    return CaseResult(
        id=case_id,
        status=CaseStatus.OK,
        rubric_hash="h",
        score=strong_score,
        passed=strong_score >= 3,
        tier=Tier.STRONG,
        screen=screen,
        judgements=[call("strong", 160, 12, 0.5)],
    )


@pytest.fixture
def results() -> list[CaseResult]:
    return [
        screened("a", 1, (100, 10), 0.0002),
        screened("b", 4, (200, 20), 0.0003),
        escalated("c", 2, 3),  # screen fail, strong pass: disagree on pass/fail
        escalated("d", 3, 3),  # agree
    ]


def summarize(results: list[CaseResult], rubric: Rubric, **prices: Price | None):
    return summarize_cascade(
        results, screen="cheap", judges=list(prices), rule="failed", rubric=rubric, prices=prices
    )


def test_all_strong_estimate_is_the_token_arithmetic(results, pointwise_rubric):
    s = summarize(results, pointwise_rubric, strong=STRONG)
    # Screen-decided a and b at the strong price: (300 in * 10 + 30 out * 30) / 1e6.
    would_cost = (300 * 10 + 30 * 30) / 1e6
    assert s.all_strong_cost_usd == pytest.approx(2 * 0.5 + would_cost)
    paid = 0.0002 + 0.0003 + 2 * 0.0001 + 2 * 0.5
    assert s.cost_usd == pytest.approx(paid)
    assert s.saved_usd == pytest.approx(2 * 0.5 + would_cost - paid)
    assert s.saved_share == pytest.approx(s.saved_usd / s.all_strong_cost_usd)


def test_a_strong_panel_prices_every_judge(results, pointwise_rubric):
    s = summarize(results, pointwise_rubric, strong=STRONG, other=OTHER)
    would_cost = (300 * 10 + 30 * 30) / 1e6 + (300 * 2 + 30 * 8) / 1e6
    assert s.all_strong_cost_usd == pytest.approx(2 * 0.5 + would_cost)


def test_an_unpriced_strong_judge_gives_no_estimate(results, pointwise_rubric):
    s = summarize(results, pointwise_rubric, strong=None)
    assert (s.all_strong_cost_usd, s.saved_usd, s.saved_share) == (None, None, None)
    assert s.unpriced == ["strong"]
    assert "no price for strong" in cascade_report(results, pointwise_rubric, s)


def test_tiers_count_cases_calls_and_tokens(results, pointwise_rubric):
    s = summarize(results, pointwise_rubric, strong=STRONG)
    screen, strong = s.tiers["screen"], s.tiers["strong"]
    assert (screen.decided, screen.calls, screen.prompt_tokens, screen.completion_tokens) == (
        2,
        4,
        100 + 200 + 150 + 150,
        10 + 20 + 15 + 15,
    )
    assert (strong.decided, strong.calls, strong.prompt_tokens) == (2, 2, 320)
    assert (s.n_cases, s.escalated, s.escalated_share) == (4, 2, 0.5)
    assert s.escalated_share_ci == pytest.approx(wilson_interval(2, 4))


def test_agreement_is_on_pass_fail_where_the_rubric_has_a_pass_line(results, pointwise_rubric):
    a = summarize(results, pointwise_rubric, strong=STRONG).agreement
    assert (a.on, a.n, a.agreed, a.rate) == ("pass/fail", 2, 1, 0.5)
    assert a.mean_abs_score_diff == pytest.approx(0.5)


def test_agreement_leaves_out_escalated_cases_where_a_tier_failed(results, pointwise_rubric):
    broken = results[3].model_copy(update={"status": CaseStatus.FAILED, "score": None})
    a = summarize([*results[:3], broken], pointwise_rubric, strong=STRONG).agreement
    assert (a.n, a.agreed) == (1, 0)


def test_pairwise_agreement_is_on_the_winner():
    rubric = parse_rubric(
        "name: pw\nkind: pairwise\nprompt:\n  user: '{output_a} {output_b}'\n", source="pw.yaml"
    )

    def pair(case_id: str, screen: Winner, strong: Winner) -> CaseResult:
        first = CaseResult(id=case_id, status=CaseStatus.OK, rubric_hash="h", winner=screen)
        return CaseResult(
            id=case_id,
            status=CaseStatus.OK,
            rubric_hash="h",
            winner=strong,
            tier=Tier.STRONG,
            screen=first,
        )

    rows = [pair("x", Winner.TIE, Winner.NEW), pair("y", Winner.NEW, Winner.NEW)]
    a = summarize(rows, rubric, strong=STRONG).agreement
    assert (a.on, a.n, a.agreed) == ("winner", 2, 1)


def cascade_report(results: list[CaseResult], rubric: Rubric, cascade) -> str:
    summary = summarize_score(results, rubric=rubric, models=["strong"])
    summary.cascade = cascade
    return render_markdown(summary)


def test_the_report_shows_escalation_cost_per_tier_and_savings(results, pointwise_rubric):
    s = summarize(results, pointwise_rubric, strong=STRONG)
    text = cascade_report(results, pointwise_rubric, s)
    assert "## Cascade" in text
    assert "## Cost per tier" in text
    assert "| escalated | 2 of 4 (50.0%) |" in text
    assert "1 of 2 (50.0%)" in text  # agreement
    assert f"${s.saved_usd:.4f} ({s.saved_share:.1%})" in text


def test_a_run_without_screen_has_no_cascade_tables(results, pointwise_rubric):
    text = cascade_report(results, pointwise_rubric, None)
    assert "Cascade" not in text
