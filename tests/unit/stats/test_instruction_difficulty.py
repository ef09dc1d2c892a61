"""The joint length-controlled fit with AlpacaEval 2's instruction-difficulty term
(judgecli/stats/instruction_difficulty.py; issue 29): each step against an independent
optimiser of the same objective, and the bias it removes, by simulation.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from judgecli.stats.instruction_difficulty import (
    PRIOR,
    RIDGE,
    Contests,
    fit_difficulty,
    fit_systems,
    joint_length_control,
    scaled_lengths,
)
from judgecli.stats.length_control import MIN_CASES, length_controlled_win_rate
from judgecli.stats.special import expit


def simulated(seed: int, *, systems: int, cases: int, verdicts: bool, link: float = 0.4):
    """Systems against a baseline: case difficulty γ ~ N(0, 1.5²); the baseline writes longer
    answers on the cases that are hard for the systems (`link`); a judge that rewards length
    (φ = 1.5). Returns the contests and each system's true rate at equal length.
    """
    rng = np.random.default_rng(seed)
    gamma = rng.normal(0.0, 1.5, cases)
    base = np.exp(6.5 - link * gamma + rng.normal(0.0, 0.4, cases))
    theta = np.linspace(-1.0, 0.5, systems)
    system, case, y, d, truth = [], [], [], [], []
    for m in range(systems):
        length = base * rng.uniform(0.6, 1.8) * rng.lognormal(0.0, 0.3, cases)
        diff = length - base
        p = expit(theta[m] + 1.5 * np.tanh(diff / np.std(diff, ddof=1)) + gamma)
        system += [m] * cases
        case += list(range(cases))
        y += list((rng.random(cases) < p).astype(float) if verdicts else p)
        d += list(diff)
        truth.append(float(np.mean(expit(theta[m] + gamma))))
    c = Contests.of(system, case, y, d, n_systems=systems, n_cases=cases)
    return c, np.array(truth)


def one(c: Contests):
    """Weights of the full data: one resample of every contest and case."""
    w = np.ones((1, c.outcome.size))
    wcase = np.zeros((1, c.n_cases))
    wcase[:, c.case] = 1.0
    return w, wcase


def test_step_one_is_the_maximum_likelihood_fit_with_the_baseline_tying_itself_per_case():
    c, _ = simulated(1, systems=3, cases=25, verdicts=False)
    w, wcase = one(c)
    x, spread = scaled_lengths(c, w)
    theta, phi, gamma = fit_difficulty(c, x, w, wcase, spread)
    k = c.n_systems

    def negative(v):
        t, f, g = v[:k], v[k : 2 * k], v[2 * k :]
        eta = t[c.system] + f[c.system] * x[0] + g[c.case]
        ll = np.sum(c.outcome * eta - np.logaddexp(0, eta))
        ll += np.sum(0.5 * g - np.logaddexp(0, g))
        return -(ll - RIDGE / 2 * (t @ t + f @ f))

    best = minimize(negative, np.zeros(2 * k + c.n_cases), method="BFGS", options={"gtol": 1e-9})
    assert np.concatenate([theta[0], phi[0], gamma[0]]) == pytest.approx(best.x, abs=1e-4)
    assert negative(np.concatenate([theta[0], phi[0], gamma[0]])) <= best.fun + 1e-9


def test_step_two_is_each_systems_own_fit_with_gamma_as_a_covariate_near_the_joint_fit():
    c, _ = simulated(2, systems=3, cases=40, verdicts=True)
    w, wcase = one(c)
    x, spread = scaled_lengths(c, w)
    joint = fit_difficulty(c, x, w, wcase, spread)
    fits = fit_systems(c, x, joint, w, [True] * 3)
    for m in range(3):
        rows = c.system == m
        z = np.stack([np.ones(rows.sum()), x[0, rows], joint[2][0, c.case[rows]]], axis=1)
        center = np.array([joint[0][0, m], joint[1][0, m], 1.0])

        def negative(b, z=z, y=c.outcome[rows], center=center):
            eta = z @ b
            return -(np.sum(y * eta - np.logaddexp(0, eta)) - PRIOR / 2 * np.sum((b - center) ** 2))

        best = minimize(negative, center, method="BFGS", options={"gtol": 1e-10}).x
        got = [fits.theta[0, m], fits.phi[0, m], fits.psi[0, m]]
        assert got == pytest.approx(best, abs=1e-4)


def test_the_rate_is_the_mean_prediction_at_equal_length_over_the_systems_cases():
    c, _ = simulated(3, systems=3, cases=60, verdicts=False)
    fit = joint_length_control(c, resamples=1)
    for m in range(3):
        cases = c.case[c.system == m]
        expected = np.mean(expit(fit.intercept[m] + fit.loading[m] * fit.difficulty[cases]))
        assert fit.win_rate[m] == pytest.approx(expected, abs=1e-12)
    matrix = fit.matrix()
    # Against the baseline (the last row and column) it is each system's rate, and P(a
    # beats b) + P(b beats a) = 1 (AlpacaEval's _predicted_winrate_matrix).
    assert matrix[:3, 3] == pytest.approx(fit.win_rate, abs=1e-12)
    assert matrix + matrix.T == pytest.approx(np.ones((4, 4)), abs=1e-12)


def test_the_instruction_term_removes_the_bias_of_difficulty_that_goes_with_length():
    """Hard cases have long baseline answers: the two-system fit credits the systems' losses
    there to length and over-rates them (as on AlpacaEval: 37.8% against 22.6%). Over 20
    arenas of 5 systems on 200 cases, written verdicts.
    """
    joint_errors, two_system_errors = [], []
    for seed in range(20):
        c, truth = simulated(seed, systems=5, cases=200, verdicts=True)
        fit = joint_length_control(c, resamples=1)
        joint_errors += [r - t for r, t in zip(fit.win_rate, truth, strict=True)]
        for m in range(5):
            rows = c.system == m
            two = length_controlled_win_rate(c.outcome[rows], c.difference[rows], resamples=1)
            two_system_errors.append(two.win_rate - truth[m])
    assert abs(np.mean(joint_errors)) < 0.02
    assert np.mean(two_system_errors) > 0.07


def test_with_two_systems_on_few_cases_every_system_still_has_a_rate():
    """Without the prior of step 2 half these fits were separated (γ carries much of the
    system's own verdicts when only two systems share it)."""
    for seed in range(10):
        c, _ = simulated(seed, systems=2, cases=40, verdicts=True)
        assert None not in joint_length_control(c, resamples=1).win_rate


def test_a_system_that_won_everything_or_met_the_baseline_too_rarely_has_no_rate():
    c, _ = simulated(4, systems=3, cases=30, verdicts=True)
    y = c.outcome.copy()
    y[c.system == 0] = 1.0
    keep = (c.system != 2) | (c.case < MIN_CASES - 1)
    d = Contests.of(
        c.system[keep], c.case[keep], y[keep], c.difference[keep], n_systems=3, n_cases=30
    )
    fit = joint_length_control(d, resamples=20)
    assert fit.win_rate[0] is None
    assert fit.win_rate_ci[0] == (None, None)
    assert fit.win_rate[1] is not None
    assert fit.win_rate[2] is None
    assert not fit.fitted[2]
    assert fit.n[2] == MIN_CASES - 1


def test_the_intervals_resample_cases_and_are_deterministic_for_a_seed():
    c, _ = simulated(5, systems=3, cases=50, verdicts=True)
    a = joint_length_control(c, resamples=200, seed=7)
    b = joint_length_control(c, resamples=200, seed=7)
    assert a.win_rate_ci == b.win_rate_ci
    for rate, (low, high) in zip(a.win_rate, a.win_rate_ci, strict=True):
        assert low < rate < high
    assert joint_length_control(c, resamples=200, seed=8).win_rate_ci != a.win_rate_ci


def test_contests_are_checked():
    with pytest.raises(ValueError, match="same length"):
        Contests.of([0], [0, 1], [1.0], [0.0], n_systems=1, n_cases=2)
    with pytest.raises(ValueError, match="out of range"):
        Contests.of([1], [0], [1.0], [0.0], n_systems=1, n_cases=1)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        Contests.of([0], [0], [1.5], [0.0], n_systems=1, n_cases=1)
