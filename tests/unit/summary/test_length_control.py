"""The length-controlled win rate (issue 18): the GLM fit against statsmodels, when there is
no fit, simulations of a judge swayed by length and of one that is not, and how the summary,
its warning and the reports carry it.
"""

from __future__ import annotations

import io
import statistics

import numpy as np
import pytest
import statsmodels.api as sm
from rich.console import Console

from judgecli.commands.pairwise import length_warnings
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.report.cells import SHORT_CELL
from judgecli.report.length_control import LABEL
from judgecli.report.markdown import render_markdown, sections, terminal_tables
from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.stats.length_control import (
    MIN_CASES,
    Unfit,
    fit_length_glm,
    length_controlled_win_rate,
    length_feature,
    length_sigma,
)
from judgecli.summary.pairwise import summarize_pairwise
from judgecli.summary.run import parse_summary, summary_json

# 24 cases: NEW's outcome (1 win, 0.5 tie, 0 loss) and len_new − len_old in characters.
OUTCOMES = [1, 1, 0.5, 1, 0, 1, 1, 0.5, 0, 1, 1, 0, 1, 0.5, 1, 0, 1, 1, 0, 0.5, 1, 0, 1, 0]
DIFFERENCES = [420, 310, 35, 150, -80, 600, 95, -20, -300, 240, 15, 60]
DIFFERENCES += [510, 0, 180, -150, 330, -40, -220, 120, 75, 200, -10, -410]


def statsmodels_fit(y, x, weights=None):
    """θ, φ of statsmodels' binomial GLM (IRLS) with fractional outcomes: the reference."""
    model = sm.GLM(
        np.asarray(y, dtype=float),
        sm.add_constant(np.asarray(x)),
        family=sm.families.Binomial(),
        freq_weights=None if weights is None else np.asarray(weights, dtype=float),
    )
    return model.fit(tol=1e-13, maxiter=200).params


def test_sigma_is_the_sample_standard_deviation_of_the_length_differences():
    # As pandas' Series.std() (ddof=1) in AlpacaEval's glm_winrate.py.
    assert length_sigma(DIFFERENCES) == pytest.approx(statistics.stdev(DIFFERENCES), rel=1e-12)
    assert length_sigma([5]) is None


def test_the_fit_equals_statsmodels_binomial_glm():
    x = length_feature(DIFFERENCES, length_sigma(DIFFERENCES))
    theta, phi = fit_length_glm(np.asarray(OUTCOMES, float), x, np.ones((1, len(OUTCOMES))))
    reference = statsmodels_fit(OUTCOMES, x)
    assert theta[0] == pytest.approx(reference[0], abs=1e-6)
    assert phi[0] == pytest.approx(reference[1], abs=1e-6)


def test_the_length_controlled_win_rate_is_the_sigmoid_of_the_intercept():
    fit = length_controlled_win_rate(OUTCOMES, DIFFERENCES)
    theta, phi = statsmodels_fit(OUTCOMES, length_feature(DIFFERENCES, fit.sigma))
    assert fit.win_rate == pytest.approx(1 / (1 + np.exp(-theta)), abs=1e-9)
    assert fit.coefficient == pytest.approx(phi, abs=1e-6)
    assert fit.n == len(OUTCOMES)
    assert fit.reason is None


def test_a_weighted_fit_equals_statsmodels_with_frequency_weights():
    # The bootstrap fits resamples as case counts: the same as repeating the cases.
    counts = np.asarray([[2, 0, 1, 3, 1, 0, 1, 1, 2, 0, 1, 1, 0, 2, 1, 1, 0, 1, 2, 1, 0, 1, 1, 1]])
    x = length_feature(DIFFERENCES, length_sigma(DIFFERENCES))
    theta, phi = fit_length_glm(np.asarray(OUTCOMES, float), x, counts.astype(float))
    reference = statsmodels_fit(OUTCOMES, x, weights=counts[0])
    assert (theta[0], phi[0]) == pytest.approx(tuple(reference), abs=1e-6)


def test_the_intervals_are_seeded_and_contain_the_estimates():
    a = length_controlled_win_rate(OUTCOMES, DIFFERENCES, seed=3)
    b = length_controlled_win_rate(OUTCOMES, DIFFERENCES, seed=3)
    assert a == b
    assert a.win_rate_ci[0] <= a.win_rate <= a.win_rate_ci[1]
    assert a.coefficient_ci[0] <= a.coefficient <= a.coefficient_ci[1]
    assert a != length_controlled_win_rate(OUTCOMES, DIFFERENCES, seed=4)


@pytest.mark.parametrize(
    ("outcomes", "differences", "reason"),
    [
        pytest.param([1, 0] * 4, [10, -10] * 4, Unfit.TOO_FEW, id="eight-cases"),
        pytest.param([1, 0, 0.5] * 4, [25] * 12, Unfit.NO_SPREAD, id="equal-differences"),
        pytest.param([1] * 12, list(range(12)), Unfit.SEPARATED, id="all-wins"),
        pytest.param(
            [1] * 6 + [0] * 6,
            list(range(1, 7)) + list(range(-6, 0)),
            Unfit.SEPARATED,
            id="every-win-longer-than-every-loss",
        ),
        pytest.param(
            # A finite maximum exists, at θ ≈ 150, φ ≈ −150: a "100%" win rate at equal length.
            [1] * 9 + [0.5] * 3,
            list(range(12)),
            Unfit.SEPARATED,
            id="nearly-separated-wins-and-three-ties",
        ),
        pytest.param(
            [1] * 6 + [0.5] + [0] * 6,
            [*range(1, 7), 0, *range(-6, 0)],
            Unfit.SEPARATED,
            id="separated-touching-at-a-tie",
        ),
    ],
)
def test_no_fit_without_enough_or_with_separated_data(outcomes, differences, reason):
    fit = length_controlled_win_rate(outcomes, differences)
    assert (fit.win_rate, fit.coefficient, fit.reason) == (None, None, reason)
    assert fit.win_rate_ci == fit.coefficient_ci == (None, None)


def test_one_case_on_the_wrong_side_makes_the_fit_finite():
    outcomes = [1] * 6 + [0] * 6
    differences = [*range(1, 6), -3, *range(-6, 0)]  # a win shorter than some losses
    fit = length_controlled_win_rate(outcomes, differences)
    assert fit.reason is None
    assert fit.coefficient > 0


@pytest.mark.parametrize(
    ("outcomes", "differences", "message"),
    [
        pytest.param([1, 0], [1], "2 outcomes but 1", id="lengths-differ"),
        pytest.param([2] * 10, list(range(10)), "in [0, 1]", id="outcome-out-of-range"),
    ],
)
def test_bad_input_is_a_value_error(outcomes, differences, message):
    with pytest.raises(ValueError, match=message):
        length_controlled_win_rate(outcomes, differences)


def simulated(seed, *, n, intercept, slope):
    """NEW's outcomes when E[outcome] = sigmoid(intercept + slope·tanh(d/sd)), NEW's answers
    longer on average. Each outcome is the mean of two draws (two verdicts: win, tie ½ or
    loss), so E[outcome | d] is exactly that logistic curve.
    """
    rng = np.random.default_rng(seed)
    d = np.round(rng.normal(250, 300, n))
    p = 1 / (1 + np.exp(-(intercept + slope * np.tanh(d / 300))))
    y = (rng.random(n) < p).astype(float) / 2 + (rng.random(n) < p).astype(float) / 2
    return y, d


SEEDS = range(100)


def test_a_judge_swayed_only_by_length_has_a_length_controlled_win_rate_near_half():
    # True quality equal (intercept 0); the judge prefers the longer answer (slope 3), and
    # NEW's answers are longer: the raw win rate is far above 50%, the controlled one is not.
    raw, controlled, covered, slope_found = [], [], 0, 0
    for seed in SEEDS:
        y, d = simulated(seed, n=200, intercept=0.0, slope=3.0)
        fit = length_controlled_win_rate(y, d, resamples=400, seed=seed)
        raw.append(y.mean())
        controlled.append(fit.win_rate)
        covered += fit.win_rate_ci[0] <= 0.5 <= fit.win_rate_ci[1]
        slope_found += fit.coefficient_ci[0] > 0
    assert min(raw) > 0.6
    assert np.mean(raw) > 0.7
    assert np.mean(controlled) == pytest.approx(0.5, abs=0.01)
    # A 95% interval, over 100 runs: 91 here; 94–97% over 300 runs (statistics.md).
    assert covered >= 88
    assert slope_found == len(SEEDS)


def test_without_a_length_effect_the_length_controlled_win_rate_is_the_raw_one():
    gaps, covered = [], 0
    for seed in SEEDS:
        y, d = simulated(seed, n=200, intercept=0.6, slope=0.0)
        fit = length_controlled_win_rate(y, d, resamples=400, seed=seed)
        gaps.append(fit.win_rate - y.mean())
        covered += fit.coefficient_ci[0] <= 0 <= fit.coefficient_ci[1]
    assert abs(np.mean(gaps)) < 0.005
    assert np.mean(np.abs(gaps)) < 0.025
    assert covered >= 88


RUBRIC = parse_rubric(
    "name: pw\nkind: pairwise\nprompt:\n  user: '{input} {output_a} {output_b}'\n", source="pw"
)
WINNERS = {1: Winner.NEW, 0.5: Winner.TIE, 0: Winner.OLD}


def results(outcomes, differences, *, old_length=500):
    return [
        CaseResult(
            id=str(i),
            status=CaseStatus.OK,
            winner=WINNERS[y],
            consistent=True,
            judge_winners={"m": WINNERS[y]},
            lengths={"old": old_length, "new": old_length + int(d)},
            rubric_hash=RUBRIC.content_hash,
        )
        for i, (y, d) in enumerate(zip(outcomes, differences, strict=True))
    ]


def summarize(rows):
    return summarize_pairwise(rows, rubric=RUBRIC, models=["m"], flip=True, flip_policy="tie")


def length_swayed(n=120, seed=0):
    y, d = simulated(seed, n=n, intercept=0.0, slope=3.0)
    return summarize(results([float(v) for v in y], d))


def test_the_summary_has_the_length_controlled_win_rate_and_its_fit():
    s = summarize(results(OUTCOMES, DIFFERENCES))
    fit = length_controlled_win_rate(OUTCOMES, DIFFERENCES)
    assert s.win_rate_length_controlled == fit.win_rate
    assert s.win_rate_length_controlled_ci == fit.win_rate_ci
    lc = s.length_control
    assert (lc.coefficient, lc.coefficient_ci, lc.sigma, lc.n) == (
        fit.coefficient,
        fit.coefficient_ci,
        fit.sigma,
        len(OUTCOMES),
    )
    assert "tanh" in lc.method
    assert lc.reason is None
    written = summary_json(s)
    assert set(written["length_control"]) == {
        "coefficient",
        "coefficient_ci",
        "sigma",
        "n",
        "method",
        "reason",
        "outcome",
    }
    assert written["length_control"]["outcome"] == "verdict"
    assert parse_summary(s.model_dump_json(exclude_none=True)) == s


def test_cases_without_lengths_or_a_verdict_stay_out_of_the_fit():
    rows = results(OUTCOMES, DIFFERENCES)
    no_lengths = rows[0].model_copy(update={"id": "x", "lengths": {}})
    dropped = rows[1].model_copy(update={"id": "y", "winner": None})
    s = summarize([*rows, no_lengths, dropped])
    assert s.length_control.n == len(OUTCOMES)
    assert s.win_rate_length_controlled == summarize(rows).win_rate_length_controlled


def test_too_few_cases_give_no_length_controlled_win_rate_and_say_why():
    s = summarize(results(OUTCOMES[: MIN_CASES - 1], DIFFERENCES[: MIN_CASES - 1]))
    assert s.win_rate_length_controlled is None
    assert s.win_rate_length_controlled_ci is None
    assert s.length_control.reason == Unfit.TOO_FEW.value
    assert "win_rate_length_controlled" not in summary_json(s)
    assert summary_json(s)["length_control"]["coefficient"] is None
    row = next(r for r in sections(s)[0].rows if r[0] == LABEL)
    assert row[1] == f"n/a: {Unfit.TOO_FEW.value}"


def test_a_judge_swayed_by_length_is_warned_about():
    s = length_swayed()
    assert s.win_rate - s.win_rate_length_controlled > 0.05
    assert s.length_control.coefficient_ci[0] > 0
    [warning] = length_warnings(s)
    assert "answer length sways the judge" in warning
    assert f"{s.win_rate_length_controlled:.1%}" in warning
    assert "win_rate_length_controlled" in warning
    assert "rubric" in warning


@pytest.mark.parametrize(
    "update",
    [
        pytest.param({"coefficient_ci": (-0.1, 3.0)}, id="coefficient-interval-holds-0"),
        pytest.param({"coefficient": None, "coefficient_ci": (None, None)}, id="no-fit"),
    ],
)
def test_no_warning_when_length_does_not_clearly_matter(update):
    s = length_swayed()
    fit = s.length_control.model_copy(update=update)
    assert length_warnings(s.model_copy(update={"length_control": fit})) == []


def test_no_warning_when_the_rates_are_less_than_five_points_apart():
    s = length_swayed()
    close = s.model_copy(update={"win_rate_length_controlled": s.win_rate - 0.04})
    assert length_warnings(close) == []


def test_the_reports_show_the_length_controlled_win_rate_and_the_coefficient():
    s = length_swayed()
    result, biases = sections(s)[0], sections(s)[1]
    row = next(r for r in result.rows if r[0] == LABEL)
    assert row[1] == f"{s.win_rate_length_controlled:.1%}"
    assert row[2].startswith("[")
    assert row[2].endswith("%]")
    coefficient = dict(biases.rows)["length coefficient (log-odds)"]
    assert coefficient.startswith(f"{s.length_control.coefficient:+.2f} [")
    text = render_markdown(s)
    assert f"| {LABEL} |" in text
    assert "length coefficient" in text


@pytest.mark.parametrize(
    "summary",
    [
        pytest.param(length_swayed, id="fitted"),
        pytest.param(lambda: summarize(results(OUTCOMES[:5], DIFFERENCES[:5])), id="too-few"),
    ],
)
def test_the_rows_fit_80_columns_without_cutting(summary):
    s = summary()
    console = Console(width=80, record=True, file=io.StringIO())
    for table in terminal_tables(s):
        console.print(table)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text
    for section in sections(s)[:2]:
        for row in section.rows:
            for i, cell in enumerate(row):
                if i == 0 or len(cell) <= SHORT_CELL:
                    assert cell in text, cell


def test_with_the_judges_probabilities_the_fit_is_of_the_probabilities_not_the_verdicts():
    # Issue 29: in --score-mode logprob the fit took the written verdicts; AlpacaEval fits
    # its annotator's probability (P(new) + ½ P(tie), as win_rate_weighted counts it).
    rows = results(OUTCOMES, DIFFERENCES)
    rng = np.random.default_rng(3)
    weighed = []
    for r in rows:
        p_new = float(
            np.clip(0.5 + (1 if r.winner is Winner.NEW else -1) * rng.uniform(0, 0.45), 0, 1)
        )
        tie = 0.1 * (1 - p_new)
        probabilities = {"new": p_new, "old": 1 - p_new - tie, "tie": tie}
        weighed.append(r.model_copy(update={"probabilities": probabilities}))
    # A case the drop policy left without a winner still has the judge's probabilities.
    weighed.append(weighed[0].model_copy(update={"id": "dropped", "winner": None}))
    s = summarize(weighed)
    y = [p["new"] + 0.5 * p["tie"] for p in (r.probabilities for r in weighed)]
    d = [float(r.lengths["new"] - r.lengths["old"]) for r in weighed]
    fit = length_controlled_win_rate(y, d)
    assert s.length_control.outcome == "probability"
    assert s.length_control.n == len(OUTCOMES) + 1
    assert s.win_rate_length_controlled == fit.win_rate
    assert s.win_rate_length_controlled != summarize(rows).win_rate_length_controlled
    assert summarize(rows).length_control.outcome == "verdict"
    text = render_markdown(s)
    assert "outcome fitted | the judge's probabilities |" in text
