from __future__ import annotations

import pytest

from judgecli.deciding.outcomes import OUTCOME
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.result import CaseResult, CaseStatus, Judgement, Order, Winner
from judgecli.stats.pairwise import win_rate_bootstrap_interval
from judgecli.summary.pairwise import summarize_pairwise
from judgecli.verdict import Position, Verdict

RUBRIC = parse_rubric(
    "name: pw\nkind: pairwise\nprompt:\n  user: '{input} {output_a} {output_b}'\n", source="pw"
)


def case(i, winner, slots, *, category="c", lengths=(10, 20), model="m", consistent=None):
    """A case judged by one judge; `slots` = the positions picked in (old-new, new-old)."""
    judgements = [
        Judgement(
            model=model,
            order=order,
            verdict=Verdict(reasoning="r", winner=Position(s)),
            attempts=1,
            prompt_tokens=10,
            completion_tokens=2,
            cost_usd=0.01,
        )
        for order, s in zip((Order.OLD_NEW, Order.NEW_OLD), slots, strict=True)
    ]
    agree = (
        consistent
        if consistent is not None
        else winner is not Winner.TIE or slots == ("tie", "tie")
    )
    return CaseResult(
        id=str(i),
        status=CaseStatus.OK,
        winner=winner,
        consistent=agree,
        judge_winners={model: winner},
        lengths={"old": lengths[0], "new": lengths[1]},
        category=category,
        judgements=judgements,
        rubric_hash=RUBRIC.content_hash,
    )


def summarize(results, **kw):
    return summarize_pairwise(
        results, rubric=RUBRIC, models=["m"], flip=True, flip_policy="tie", **kw
    )


# 6 wins (B then A), 2 losses (A then B), 1 consistent tie, 1 position-flipped tie (A, A).
RESULTS = (
    [case(i, Winner.NEW, ("B", "A")) for i in range(6)]
    + [
        case(6, Winner.OLD, ("A", "B"), lengths=(30, 5)),
        case(7, Winner.OLD, ("A", "B"), lengths=(30, 5)),
    ]
    + [case(8, Winner.TIE, ("tie", "tie")), case(9, Winner.TIE, ("A", "A"), consistent=False)]
)


def test_win_rate_counts_ties_half():
    s = summarize(RESULTS)
    assert (s.wins, s.losses, s.ties) == (6, 2, 2)
    assert s.win_rate == pytest.approx(7 / 10)
    assert s.win_rate_no_ties == pytest.approx(6 / 8)
    assert s.loss_rate == pytest.approx(0.2)


def test_consistency_and_first_position_preference():
    s = summarize(RESULTS)
    assert s.consistency == pytest.approx(9 / 10)
    # Picks of a side: 6×(B, A) + 2×(A, B) + (A, A) = 18 picks, of which A: 6 + 2 + 2 = 10.
    assert s.first_position_rate == pytest.approx(10 / 18)


def test_length_table_counts_decided_cases():
    s = summarize(RESULTS)
    # Winners: 6 new answers of 20 chars (old 10) and 2 old of 30 (new 5): the longer won all 8.
    assert s.length.longer_wins_rate == 1.0
    assert s.length.mean_length_winner == pytest.approx((6 * 20 + 2 * 30) / 8)
    assert s.length.mean_length_loser == pytest.approx((6 * 10 + 2 * 5) / 8)


def test_intervals_are_seeded_and_contain_the_estimate():
    a, b = summarize(RESULTS, seed=1), summarize(RESULTS, seed=1)
    assert a.win_rate_ci == b.win_rate_ci
    assert a.win_rate_ci[0] <= a.win_rate <= a.win_rate_ci[1]
    assert a.win_rate_ci_wilson[0] <= a.win_rate <= a.win_rate_ci_wilson[1]


def test_failed_and_dropped_cases_stay_out_of_the_win_rate():
    failed = CaseResult(id="f", status=CaseStatus.FAILED, error="boom", rubric_hash="h")
    dropped = case(99, None, ("A", "A"), consistent=False)
    s = summarize([*RESULTS, failed, dropped])
    assert (s.n_cases, s.n_ok, s.n_failed, s.dropped) == (12, 11, 1, 1)
    assert s.win_rate == pytest.approx(7 / 10)
    assert s.failures[0].id == "f"


def test_per_category_win_rates():
    mixed = [case(i, Winner.NEW, ("B", "A"), category="x") for i in range(3)] + [
        case(10 + i, Winner.OLD, ("A", "B"), category="y") for i in range(2)
    ]
    s = summarize(mixed)
    assert s.by_category["x"].win_rate == 1.0
    assert s.by_category["y"].win_rate == 0.0
    assert s.by_category["y"].n == 2


# Regression (review 2026-11-23, finding 9): "health", 5 wins of 5, read
# "100.0% [100.0%, 100.0%]" from a bootstrap that can only ever resample 5 of 5. Pinned from
# statsmodels proportion_confint(wins + ties / 2, n, method="wilson").
@pytest.mark.parametrize(
    ("winners", "expected"),
    [
        pytest.param([Winner.NEW] * 5, (0.5655175352168252, 1.0), id="five-of-five"),
        pytest.param(
            [Winner.NEW] * 3 + [Winner.TIE, Winner.OLD],
            (0.29879105407239326, 0.9274159600143366),
            id="3-wins-1-tie-1-loss",
        ),
    ],
)
def test_a_category_win_rate_gets_a_wilson_interval_on_ties_counted_half(winners, expected):
    slots = {Winner.NEW: ("B", "A"), Winner.OLD: ("A", "B"), Winner.TIE: ("tie", "tie")}
    health = [case(i, w, slots[w], category="health") for i, w in enumerate(winners)]
    other = [case(100 + i, Winner.OLD, ("A", "B"), category="other") for i in range(20)]
    s = summarize(health + other)
    assert s.by_category["health"].win_rate_ci == pytest.approx(expected, rel=1e-12)
    # The overall interval the gate reads is still the seeded bootstrap.
    outcomes = [OUTCOME[r.winner] for r in health + other]
    assert s.win_rate_ci == win_rate_bootstrap_interval(outcomes, seed=0)


def test_usage_sums_every_judgement():
    s = summarize(RESULTS)
    assert s.usage.calls == 20
    assert s.usage.cost_usd == pytest.approx(0.2)


def test_panel_summary_reports_each_judge_and_their_agreement():
    def panel_case(i, w1, w2):
        c = case(i, w1, ("B", "A"))
        return c.model_copy(update={"judge_winners": {"m1": w1, "m2": w2}})

    rows = [panel_case(i, Winner.NEW, Winner.NEW) for i in range(4)] + [
        panel_case(4, Winner.NEW, Winner.OLD),
        panel_case(5, Winner.OLD, Winner.OLD),
    ]
    s = summarize_pairwise(rows, rubric=RUBRIC, models=["m1", "m2"], flip=True, flip_policy="tie")
    assert s.judges["m1"].win_rate == pytest.approx(5 / 6)
    assert s.judges["m2"].win_rate == pytest.approx(4 / 6)
    assert s.inter_judge.percent_agreement == pytest.approx(5 / 6)
    assert set(s.inter_judge.cohen_kappa) == {"m1~m2"}
    assert s.inter_judge.fleiss_kappa is not None


def test_a_summary_with_empty_statistics_reads_back_from_summary_json():
    # Regression: summary.json is written without nulls, so every optional field must have a
    # default, or `judge report` / `judge gate` cannot read a run whose statistics are empty.
    ties = [case(i, Winner.TIE, ("tie", "tie"), lengths=(5, 5)) for i in range(3)]
    panel = [
        t.model_copy(update={"judge_winners": {"m1": Winner.TIE, "m2": Winner.TIE}}) for t in ties
    ]
    s = summarize_pairwise(panel, rubric=RUBRIC, models=["m1", "m2"], flip=True, flip_policy="tie")
    text = s.model_dump_json(exclude_none=True)
    again = type(s).model_validate_json(text)
    assert again.length.longer_wins_rate is None
    assert again.win_rate == 0.5
