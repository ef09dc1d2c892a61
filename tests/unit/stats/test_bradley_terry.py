"""stats/bradley_terry.py against a published table (Agresti 2002, §10.6, the 1987 American
League East), two independent implementations written here (Hunter's MM algorithm and
scikit-learn's logistic regression), and a simulation of the bootstrap's coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from judgecli.stats.bradley_terry import (
    ELO_PER_LOGIT,
    RIDGE,
    Comparisons,
    DisconnectedError,
    bootstrap_bradley_terry,
    check_connected,
    components,
    elo_scores,
    fit_bradley_terry,
    ranks,
    scaled_columns,
    score_intervals,
    share_above,
    win_table,
)
from judgecli.stats.resampling import clusters_of

# Home team, away team (by index in TEAMS), home wins, away wins: Agresti (2002),
# "Categorical Data Analysis", 2nd ed., Table 10.10, as R's BradleyTerry2 package ships it
# (data/baseball.csv).
TEAMS = ["Milwaukee", "Detroit", "Toronto", "New York", "Boston", "Cleveland", "Baltimore"]
BASEBALL_TABLE = """
0 1 4 3  0 2 4 2  0 3 4 3  0 4 6 1  0 5 4 2  0 6 6 0
1 0 3 3  1 2 4 2  1 3 4 3  1 4 6 0  1 5 6 1  1 6 4 3
2 0 2 5  2 1 4 3  2 3 2 4  2 4 4 3  2 5 4 2  2 6 6 0
3 0 3 3  3 1 5 1  3 2 2 5  3 4 4 3  3 5 4 2  3 6 6 1
4 0 5 1  4 1 2 5  4 2 3 3  4 3 4 2  4 5 5 2  4 6 6 0
5 0 2 5  5 1 3 3  5 2 3 4  5 3 4 3  5 4 4 2  5 6 2 4
6 0 2 5  6 1 1 5  6 2 1 6  6 3 2 4  6 4 1 6  6 5 3 4
"""
NUMBERS = [int(n) for n in BASEBALL_TABLE.split()]
BASEBALL = [tuple(NUMBERS[k : k + 4]) for k in range(0, len(NUMBERS), 4)]
BALTIMORE = TEAMS.index("Baltimore")


def baseball(*, home: bool = False) -> Comparisons:
    """One row per game, the home team first; with `home`, a covariate of 1 (at home)."""
    first, second, outcome = [], [], []
    for h, a, home_wins, away_wins in BASEBALL:
        first += [h] * (home_wins + away_wins)
        second += [a] * (home_wins + away_wins)
        outcome += [1.0] * home_wins + [0.0] * away_wins
    covariates = np.ones((len(first), 1)) if home else None
    return Comparisons.of(first, second, outcome, n_systems=len(TEAMS), covariates=covariates)


def mm_strengths(c: Comparisons, *, sweeps: int = 20000) -> np.ndarray:
    """Hunter (2004) MM iteration for the plain Bradley–Terry MLE, ties half a win each way:
    γ_i ← W_i / Σ_j n_ij / (γ_i + γ_j). Returns log γ, mean 0."""
    table = win_table(c)
    wins, played = table.won.sum(axis=1), table.played
    gamma = np.ones(c.n_systems)
    for _ in range(sweeps):
        new = wins / (played / (gamma[:, None] + gamma[None, :])).sum(axis=1)
        new /= np.exp(np.log(new).mean())
        if np.max(np.abs(new - gamma)) < 1e-15:
            break
        gamma = new
    theta = np.log(gamma)
    return theta - theta.mean()


def sklearn_fit(c: Comparisons, ridge: float) -> np.ndarray:
    """The penalised fit as scikit-learn's logistic regression without intercept on ±1
    design rows (its objective is ½|w|² + C·Σ loss, so C = 1/λ); a tie is two rows of
    weight ½, one won and one lost. Every other row is written from the second system's
    side (−x, 1 − y: the same comparison), so a clean sweep still has both labels.
    Returns (strengths, mean 0) + coefficients."""
    sign = np.where(np.arange(c.rows) % 2 == 0, 1.0, -1.0)
    x = c.design * sign[:, None]
    y = np.where(sign > 0, c.outcome, 1.0 - c.outcome)
    rows = np.concatenate([x, x])
    labels = np.concatenate([np.ones(c.rows), np.zeros(c.rows)])
    weights = np.concatenate([y, 1.0 - y])
    keep = weights > 0
    model = LogisticRegression(
        C=1.0 / ridge, fit_intercept=False, solver="newton-cholesky", tol=1e-14, max_iter=1000
    )
    model.fit(rows[keep], labels[keep], sample_weight=weights[keep])
    w = model.coef_[0]
    return np.concatenate([w[: c.n_systems] - w[: c.n_systems].mean(), w[c.n_systems :]])


def test_the_published_baseball_fit_is_reproduced():
    # Agresti (2002) Table 10.11: the abilities relative to Baltimore, and standard errors
    # of about 0.3 (the checks R's BradleyTerry2 runs on the same data).
    fit = fit_bradley_terry(baseball(), ridge=0.0)
    relative = fit.strengths - fit.strengths[BALTIMORE]
    others = [i for i in range(len(TEAMS)) if i != BALTIMORE]
    assert sorted(np.round(relative[others], 2)) == [0.68, 1.11, 1.25, 1.29, 1.44, 1.58]
    cov = fit.covariance
    se = [math.sqrt(cov[i, i] + cov[BALTIMORE, BALTIMORE] - 2 * cov[i, BALTIMORE]) for i in others]
    assert np.round(se, 1).tolist() == [0.3] * 6


def test_a_covariate_reproduces_the_published_home_advantage():
    # Agresti (2002) Table 10.11 column 5 and the home-field coefficient 0.302.
    fit = fit_bradley_terry(baseball(home=True), ridge=0.0)
    abilities = np.exp(fit.strengths) / np.exp(fit.strengths).sum()
    assert sorted(np.round(abilities, 3)) == [0.044, 0.088, 0.137, 0.157, 0.164, 0.190, 0.220]
    assert round(float(fit.coefficients[0]), 3) == 0.302


def test_the_unpenalised_fit_agrees_with_hunters_mm_algorithm():
    c = baseball()
    ours = fit_bradley_terry(c, ridge=0.0).strengths
    np.testing.assert_allclose(ours, mm_strengths(c), atol=1e-6)


def test_ties_agree_with_the_mm_algorithm_counting_them_half():
    rng = np.random.default_rng(4)
    pairs = [(a, b) for a in range(4) for b in range(4) if a != b]
    first = [a for a, _ in pairs for _ in range(5)]
    second = [b for _, b in pairs for _ in range(5)]
    outcome = rng.choice([0.0, 0.5, 1.0], size=len(first), p=[0.4, 0.2, 0.4])
    c = Comparisons.of(first, second, outcome, n_systems=4)
    np.testing.assert_allclose(
        fit_bradley_terry(c, ridge=0.0).strengths, mm_strengths(c), atol=1e-6
    )


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: baseball(), id="baseball"),
        pytest.param(lambda: baseball(home=True), id="baseball-home-covariate"),
        pytest.param(
            lambda: Comparisons.of(
                [0, 0, 1, 2, 2, 3, 1, 0],
                [1, 2, 2, 3, 0, 1, 3, 3],
                [1.0, 0.5, 0.0, 1.0, 0.5, 0.5, 1.0, 0.0],
                n_systems=4,
                covariates=[[0.3, 1.0], [-0.2, 0.0], [0.9, -1.0], [0.1, 2.0]] * 2,
            ),
            id="ties-and-two-covariates",
        ),
        pytest.param(
            lambda: Comparisons.of([0, 0, 1, 0], [1, 2, 2, 1], [1.0, 1.0, 1.0, 1.0], n_systems=3),
            id="a-system-that-won-everything",
        ),
    ],
)
def test_the_ridge_fit_agrees_with_sklearn_logistic_regression(make):
    c = make()
    fit = fit_bradley_terry(c, ridge=RIDGE)
    ours = np.concatenate([fit.strengths, fit.coefficients])
    np.testing.assert_allclose(ours, sklearn_fit(c, RIDGE), atol=1e-6)


def test_a_tie_counts_as_half_a_win_each_way():
    # Three wins and two ties carry the same evidence as four wins and a loss.
    tied = Comparisons.of([0] * 5, [1] * 5, [1, 1, 1, 0.5, 0.5], n_systems=2)
    decided = Comparisons.of([0] * 5, [1] * 5, [1, 1, 1, 1, 0], n_systems=2)
    np.testing.assert_allclose(
        fit_bradley_terry(tied).strengths, fit_bradley_terry(decided).strengths, atol=1e-9
    )
    all_ties = Comparisons.of([0, 1, 0], [1, 0, 1], [0.5, 0.5, 0.5], n_systems=2)
    np.testing.assert_allclose(fit_bradley_terry(all_ties).strengths, [0.0, 0.0], atol=1e-12)


def test_400_points_are_odds_of_ten_to_one():
    c = Comparisons.of([0] * 11, [1] * 11, [1.0] * 10 + [0.0], n_systems=2)
    scores = elo_scores(fit_bradley_terry(c, ridge=0.0).strengths)
    assert scores[0] - scores[1] == pytest.approx(400.0, abs=1e-6)
    assert scores.mean() == pytest.approx(1000.0)
    assert ELO_PER_LOGIT * math.log(10) == pytest.approx(400.0)


def test_scores_can_be_anchored_at_a_baseline():
    strengths = np.array([[0.5, -0.25, -0.25], [0.0, 1.0, -1.0]])
    anchored = elo_scores(strengths, anchor=1)
    assert anchored[:, 1].tolist() == [1000.0, 1000.0]
    assert anchored[0, 0] - anchored[0, 1] == pytest.approx(0.75 * ELO_PER_LOGIT)


def test_a_clean_sweep_stays_finite_under_the_ridge():
    c = Comparisons.of([0, 0, 0, 1, 1, 2], [1, 2, 1, 2, 2, 1], [1, 1, 1, 1, 0, 1], n_systems=3)
    fit = fit_bradley_terry(c)
    assert np.all(np.isfinite(fit.strengths))
    assert fit.strengths[0] == max(fit.strengths)
    assert fit.strengths.sum() == pytest.approx(0.0, abs=1e-9)


def test_identical_comparisons_collapse_without_changing_the_fit():
    # With a covariate column of zeros nothing is collapsed; the fit must be the same.
    c = baseball()
    with_zeros = Comparisons.of(
        c.first, c.second, c.outcome, n_systems=c.n_systems, covariates=np.zeros((c.rows, 1))
    )
    np.testing.assert_allclose(
        fit_bradley_terry(c).strengths, fit_bradley_terry(with_zeros).strengths, atol=1e-9
    )


def test_a_disconnected_comparison_graph_is_refused():
    c = Comparisons.of([0, 2, 0], [1, 3, 1], [1.0, 0.0, 0.5], n_systems=5)
    assert components(c) == [[0, 1], [2, 3], [4]]
    with pytest.raises(DisconnectedError) as caught:
        check_connected(c)
    assert caught.value.groups == [[0, 1], [2, 3], [4]]
    check_connected(Comparisons.of([0, 1], [1, 2], [1.0, 1.0], n_systems=3))


@pytest.mark.parametrize(
    ("scores", "intervals", "expected"),
    [
        pytest.param(
            [1200, 1100, 1000, 700],
            [(1150, 1250), (1050, 1160), (950, 1160), (650, 750)],
            [1, 1, 1, 4],
            id="overlapping-share-a-rank",
        ),
        pytest.param(
            [1100, 1000, 900],
            [(1000, 1200), (990, 1010), (800, 995)],
            [1, 1, 2],
            id="overlap-is-not-transitive",
        ),
        pytest.param([1000, 990], [(None, None), (None, None)], [1, 2], id="no-intervals"),
    ],
)
def test_rank_is_one_plus_the_systems_wholly_above(scores, intervals, expected):
    assert ranks(scores, intervals) == expected


def test_win_table_counts_row_against_column_with_ties_half():
    table = win_table(Comparisons.of([0, 1, 0], [1, 0, 1], [1.0, 1.0, 0.5], n_systems=3))
    assert table.rate(0, 1) == pytest.approx(1.5 / 3)
    assert table.rate(1, 0) == pytest.approx(1.5 / 3)
    assert table.rate(0, 2) is None
    assert table.played[0, 1] == 3


def test_the_covariate_scale_does_not_depend_on_which_system_is_listed_first():
    z = np.array([[0.5, 2.0], [-0.2, 0.0], [0.9, -1.0]])
    flipped = z * np.array([[1.0], [-1.0], [-1.0]])
    np.testing.assert_allclose(scaled_columns(z)[1], scaled_columns(flipped)[1])
    assert scaled_columns(np.zeros((3, 1)))[1].tolist() == [1.0]


def test_the_bootstrap_is_seeded_and_needs_two_cases():
    c = baseball()
    clusters = clusters_of(range(c.rows))
    a = bootstrap_bradley_terry(c, clusters, resamples=50, seed=3)
    b = bootstrap_bradley_terry(c, clusters, resamples=50, seed=3)
    np.testing.assert_array_equal(a.strengths, b.strengths)
    assert a.strengths.shape == (50, len(TEAMS))
    one = bootstrap_bradley_terry(c, [list(range(c.rows))], resamples=50, seed=3)
    assert one.strengths.shape == (0, len(TEAMS))
    assert score_intervals(elo_scores(one.strengths)) == [(None, None)] * len(TEAMS)
    assert share_above(one.strengths, 0, 1) is None


def test_bootstrap_intervals_cover_the_true_scores_near_the_nominal_rate():
    # 4 systems, 80 cases, every pair compared once per case (a case is a cluster: its
    # comparisons share a per-case shift of the first system's odds, as answers to one
    # question do). Over 120 simulated arenas × 4 systems, the 95% intervals should
    # cover the true mean-anchored scores about 95% of the time.
    truth = np.array([-0.6, -0.1, 0.2, 0.5])
    true_scores = elo_scores(truth)
    pairs = [(a, b) for a in range(4) for b in range(a + 1, 4)]
    covered, total = 0, 0
    for seed in range(120):
        rng = np.random.default_rng(seed)
        first, second, outcome, cases = [], [], [], []
        for case in range(80):
            shift = rng.normal(0.0, 0.3)
            for a, b in pairs:
                p = 1 / (1 + math.exp(-(truth[a] - truth[b] + shift)))
                first.append(a)
                second.append(b)
                outcome.append(float(rng.random() < p))
                cases.append(case)
        c = Comparisons.of(first, second, outcome, n_systems=4)
        boot = bootstrap_bradley_terry(c, clusters_of(cases), resamples=300, seed=seed)
        for i, (low, high) in enumerate(score_intervals(elo_scores(boot.strengths))):
            covered += low <= true_scores[i] <= high
            total += 1
    rate = covered / total
    # Binomial sd at 95% over 480 checks is ~1%; the clustering makes it larger.
    assert 0.90 <= rate <= 0.99, rate


def test_bad_comparisons_are_refused():
    with pytest.raises(ValueError, match="itself"):
        Comparisons.of([0], [0], [1.0], n_systems=2)
    with pytest.raises(ValueError, match="indices"):
        Comparisons.of([0], [2], [1.0], n_systems=2)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        Comparisons.of([0], [1], [2.0], n_systems=2)
    with pytest.raises(ValueError, match="at least 2"):
        Comparisons.of([], [], [], n_systems=1)
