"""Length-controlled win rates of several systems against one baseline, with AlpacaEval 2's
instruction-difficulty term fitted jointly over the systems.

Y. Dubois, B. Galambosi, P. Liang and T. Hashimoto, "Length-Controlled AlpacaEval: A
Simple Way to Debias Automatic Evaluators" (2024), as alpaca_eval's code does it
(``notebooks/instruction_difficulty.ipynb``, then ``metrics/glm_winrate.py``), in two steps.
System m's outcome against the baseline on case x is y ∈ [0, 1] (a win 1, a tie ½, or
the judge's probability), Δ = len_m − len_baseline, σ_m the sample sd of m's Δ (ddof 1):

1. **Joint fit** over every system compared with the baseline: one term γ_x per case,
   shared by all systems,

       logit E[y] = θ_m + φ_m · tanh(Δ / σ_m) + γ_x.

   γ_x says how much better than usual the systems do against the baseline on case x
   (AlpacaEval's ``instruction_difficulty``; high: an easy case for the systems). As in
   AlpacaEval, whose joint fit includes the baseline's own annotations (every one a tie),
   the baseline meets itself once per case, a tie with logit γ_x: this pins the terms'
   common level (θ_baseline = 0) and keeps γ_x finite where every system won or lost.
2. **Per system**, γ held fixed as a covariate with its own weight ψ_m:

       logit E[y] = θ_m + φ_m · tanh(Δ / σ_m) + ψ_m · γ_x,

   and the length-controlled win rate is the mean over m's cases of
   sigmoid(θ_m + ψ_m · γ_x): its predicted win rate at Δ = 0.

Against the baseline each system's rate depends only on its own fit; between two systems a
and b, AlpacaEval's ``_predicted_winrate_matrix`` gives mean_x sigmoid(θ_a − θ_b + (ψ_a −
ψ_b)·γ_x) over every case with a γ.

What AlpacaEval does besides, and this does not: an L1 penalty whose strength is chosen by
5-fold cross-validation (scikit-learn's liblinear) in both steps, and, in its published
leaderboard, rows of two "gamed" baselines (GPT-4 Turbo asked to be verbose, or concise)
added at weight 0.1 each to every system's fit, which pull φ_m towards the length effect
alone. Here both steps are plain maximum likelihood, with a ridge of RIDGE on θ and φ that
only keeps a fit finite; a fit beyond ±MAX_LOGIT counts as none (separated outcomes).

Cost: step 1 is Newton's method on (systems × 2 + cases) parameters, solved through the
Schur complement of the cases' diagonal block: O(rows + systems² × cases) per iteration,
batched over bootstrap resamples in blocks of at most BLOCK_WORDS floats.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judgecli.stats.intervals import FloatArray, Interval, check_confidence
from judgecli.stats.length_control import MAX_LOGIT, MIN_CASES, kept_interval
from judgecli.stats.logistic import fit_logistic
from judgecli.stats.resampling import resampled_counts, totals_by_code
from judgecli.stats.special import expit

IntArray = npt.NDArray[np.intp]

RIDGE = 1e-6
"""Step 1: λ/2·(Σθ² + Σφ²) off the log-likelihood. A fit that exists moves by nothing
visible; separated outcomes stop at a large finite value that MAX_LOGIT then rejects."""
PRIOR = 0.1
"""Step 2: the precision of a normal prior on (θ, φ, ψ) centred on the joint fit's (θ, φ, 1),
an sd of 3.2 log-odds. With few systems γ carries much of a system's own outcomes, and its
own fit is often separated without it (half the fits of 2 systems on 40 cases); with it,
over 30 simulated arenas its bias is within a point of the fits that do exist (statistics.md).
On AlpacaEval's 805 cases it moves a rate by at most 0.05 points."""
MAX_ITERATIONS = 100
MAX_HALVINGS = 40
TOLERANCE = 1e-9
"""Newton stops once no parameter moves by more than this."""
BLOCK_WORDS = 2**22
"""Floats one block of resamples may hold in its (resamples, 2 × systems, cases) array."""


@dataclass(frozen=True)
class Contests:
    """Each row: system `system[r]` against the baseline on case `case[r]`, its outcome
    `outcome[r]` in [0, 1] and `difference[r]` = its answer's length − the baseline's.
    """

    system: IntArray
    case: IntArray
    outcome: FloatArray
    difference: FloatArray
    n_systems: int
    n_cases: int

    @classmethod
    def of(
        cls,
        system: Sequence[int] | IntArray,
        case: Sequence[int] | IntArray,
        outcome: Sequence[float] | FloatArray,
        difference: Sequence[float] | FloatArray,
        *,
        n_systems: int,
        n_cases: int,
    ) -> Contests:
        """Checked contests (ValueError on lengths that differ, an index out of range, or
        an outcome outside [0, 1]).
        """
        s = np.asarray(system, dtype=np.intp).reshape(-1)
        c = np.asarray(case, dtype=np.intp).reshape(-1)
        y = np.asarray(outcome, dtype=np.float64).reshape(-1)
        d = np.asarray(difference, dtype=np.float64).reshape(-1)
        if not s.size == c.size == y.size == d.size:
            raise ValueError("system, case, outcome and difference must have the same length")
        if s.size and (s.min() < 0 or s.max() >= n_systems or c.min() < 0 or c.max() >= n_cases):
            raise ValueError("a system or case index is out of range")
        if np.any((y < 0) | (y > 1)) or not np.all(np.isfinite(d)):
            raise ValueError("outcomes must be in [0, 1] and length differences finite")
        return cls(s, c, y, d, n_systems, n_cases)


@dataclass(frozen=True)
class SystemFits:
    """Step 2's parameters per resample and system, shape (resamples, systems); nan where
    a system has no fit.
    """

    theta: FloatArray
    phi: FloatArray
    psi: FloatArray


@dataclass(frozen=True)
class JointLengthControl:
    """The length-controlled win rates against the baseline, and the fits behind them."""

    win_rate: list[float | None]
    """Per system: mean over its cases of sigmoid(θ + ψ·γ_x); None without a fit."""
    win_rate_ci: list[Interval]
    coefficient: list[float | None]
    """φ, step 2's length weight in log-odds (> 0: the judge favours the longer answer)."""
    coefficient_ci: list[Interval]
    loading: list[float | None]
    """ψ, the weight of the case term in the system's own fit (AlpacaEval's is near 1)."""
    intercept: list[float | None]
    n: list[int]
    """Contests per system with the baseline."""
    difficulty: FloatArray
    """γ per case (nan for a case no system was compared on)."""
    fitted: list[bool]
    """Per system: did it enter step 1 (at least MIN_CASES contests with spread)?"""

    def matrix(self) -> FloatArray:
        """P(row beats column) at equal length, systems then the baseline last:
        mean over cases with a γ of sigmoid(θ_a − θ_b + (ψ_a − ψ_b)·γ_x); nan without fits.
        """
        theta = np.array([np.nan if t is None else t for t in self.intercept] + [0.0])
        psi = np.array([np.nan if p is None else p for p in self.loading] + [0.0])
        g = self.difficulty[~np.isnan(self.difficulty)]
        eta = (theta[:, None, None] - theta[None, :, None]) + (
            psi[:, None, None] - psi[None, :, None]
        ) * g
        with np.errstate(invalid="ignore"):
            return np.asarray(expit(eta).mean(axis=-1))


def scaled_lengths(c: Contests, w: FloatArray) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """tanh(Δ / σ_m) per resample and row, σ_m each system's weighted sample sd of Δ (ddof
    1), and per (resample, system) whether σ_m > 0 (else its length term is left out).
    """
    r, k = w.shape[0], c.n_systems
    total = totals_by_code(c.system, w, k)
    mean = totals_by_code(c.system, w * c.difference, k) / np.maximum(total, 1.0)
    square = totals_by_code(c.system, w * (c.difference - mean[:, c.system]) ** 2, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        sigma = np.sqrt(square / (total - 1.0))
    spread = np.isfinite(sigma) & (sigma > 0)
    safe = np.where(spread, sigma, 1.0)
    x = np.tanh(c.difference / safe[:, c.system]) * spread[:, c.system]
    return np.asarray(x).reshape(r, -1), spread


def joint_objective(
    c: Contests, x: FloatArray, w: FloatArray, wc: FloatArray, params: tuple[FloatArray, ...]
) -> FloatArray:
    """Step 1's penalised log-likelihood per resample (self-ties included)."""
    theta, phi, gamma = params
    eta = theta[:, c.system] + phi[:, c.system] * x + gamma[:, c.case]
    ll = (w * (c.outcome * eta - np.logaddexp(0.0, eta))).sum(axis=1)
    ll += (wc * (0.5 * gamma - np.logaddexp(0.0, gamma))).sum(axis=1)
    return np.asarray(ll - RIDGE / 2 * ((theta**2).sum(axis=1) + (phi**2).sum(axis=1)))


def fit_difficulty(
    c: Contests,
    x: FloatArray,
    w: FloatArray,
    wc: FloatArray,
    spread: npt.NDArray[np.bool_],
    start: tuple[FloatArray, FloatArray, FloatArray] | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Step 1 for each resample (rows of w: contest weights; wc: case weights): γ per
    resample and case, shape (resamples, cases); a case of weight 0 gets nan.

    Newton's method with step halving on the concave objective. The Hessian's case block is
    diagonal, so each step solves the (2 × systems) Schur complement instead of the whole.
    `start`: (θ, φ, γ) of the full data, where a bootstrap resample starts (fewer steps).
    Returns θ, φ (resamples, systems) and γ.
    """
    r, k, n_cases = w.shape[0], c.n_systems, c.n_cases
    theta, phi, gamma = (
        (np.zeros((r, k)), np.zeros((r, k)), np.zeros((r, n_cases)))
        if start is None
        else tuple(np.tile(np.nan_to_num(v), (r, 1)) for v in start)
    )
    value = joint_objective(c, x, w, wc, (theta, phi, gamma))
    cell = c.system * n_cases + c.case
    held = wc > 0
    for _ in range(MAX_ITERATIONS):
        eta = theta[:, c.system] + phi[:, c.system] * x + gamma[:, c.case]
        p = expit(eta)
        res, v = w * (c.outcome - p), w * p * (1.0 - p)
        ps = expit(gamma)
        g_t = totals_by_code(c.system, res, k) - RIDGE * theta
        g_f = np.where(spread, totals_by_code(c.system, res * x, k) - RIDGE * phi, 0.0)
        g_g = totals_by_code(c.case, res, n_cases) + wc * (0.5 - ps)
        a00 = totals_by_code(c.system, v, k) + RIDGE
        a01 = np.where(spread, totals_by_code(c.system, v * x, k), 0.0)
        a11 = np.where(spread, totals_by_code(c.system, v * x * x, k) + RIDGE, 1.0)
        b_t = totals_by_code(cell, v, k * n_cases).reshape(r, k, n_cases)
        b_f = totals_by_code(cell, v * x, k * n_cases).reshape(r, k, n_cases) * spread[:, :, None]
        dg = totals_by_code(c.case, v, n_cases) + wc * ps * (1.0 - ps)
        inv_d = np.where(held, 1.0 / np.where(held, dg, 1.0), 0.0)
        b = np.concatenate([b_t, b_f], axis=1)
        a = np.zeros((r, 2 * k, 2 * k))
        idx = np.arange(k)
        a[:, idx, idx], a[:, idx + k, idx + k] = a00, a11
        a[:, idx, idx + k] = a[:, idx + k, idx] = a01
        bt = b.transpose(0, 2, 1)
        schur = a - np.matmul(b * inv_d[:, None, :], bt)
        g_b = np.concatenate([g_t, g_f], axis=1)
        rhs = g_b - np.matmul(b, (inv_d * g_g)[:, :, None])[:, :, 0]
        step_b = np.linalg.solve(schur, rhs[:, :, None])[:, :, 0]
        step_g = inv_d * (g_g - np.matmul(bt, step_b[:, :, None])[:, :, 0])
        scale = np.ones(r)
        for _ in range(MAX_HALVINGS):
            s = scale[:, None]
            trial = (theta + s * step_b[:, :k], phi + s * step_b[:, k:], gamma + s * step_g)
            trial_value = joint_objective(c, x, w, wc, trial)
            worse = trial_value < value - 1e-12 * (1.0 + np.abs(value))
            if not worse.any():
                break
            scale = np.where(worse, scale / 2.0, scale)
        moved = max(
            float(np.max(np.abs(s * step_b), initial=0.0)),
            float(np.max(np.abs(s * step_g), initial=0.0)),
        )
        (theta, phi, gamma), value = trial, trial_value
        if moved < TOLERANCE:
            break
    return theta, phi, np.where(held, gamma, np.nan)


def fit_systems(
    c: Contests,
    x: FloatArray,
    joint: tuple[FloatArray, FloatArray, FloatArray],
    w: FloatArray,
    fitted: Sequence[bool],
) -> SystemFits:
    """Step 2 for every system that entered step 1: (θ, φ, ψ) per resample, its prior
    centred on the joint fit's (θ, φ, 1); nan where the fit runs beyond ±MAX_LOGIT
    (separated outcomes, e.g. a system that won every comparison) or did not converge.
    """
    theta, phi, gamma = joint
    r, k = w.shape[0], c.n_systems
    out = [np.full((r, k), np.nan) for _ in range(3)]
    g = np.nan_to_num(gamma[:, c.case])
    for m in range(k):
        if not fitted[m]:
            continue
        rows = np.flatnonzero(c.system == m)
        z = np.stack([np.ones((r, rows.size)), x[:, rows], g[:, rows]], axis=-1)
        center = np.stack([theta[:, m], phi[:, m], np.ones(r)], axis=-1)
        beta, converged = fit_logistic(z, c.outcome[rows], w[:, rows], center, precision=PRIOR)
        bad = (np.abs(beta[:, :2]).max(axis=1) > MAX_LOGIT) | ~converged
        for j in range(3):
            out[j][:, m] = np.where(bad, np.nan, beta[:, j])
    return SystemFits(*out)


def controlled_rates(c: Contests, fits: SystemFits, gamma: FloatArray, w: FloatArray) -> FloatArray:
    """Per resample and system: Σ w·sigmoid(θ + ψ·γ_x) / Σ w over its contests."""
    k = c.n_systems
    eta = fits.theta[:, c.system] + fits.psi[:, c.system] * np.nan_to_num(gamma[:, c.case])
    with np.errstate(invalid="ignore", divide="ignore"):
        total = totals_by_code(c.system, w, k)
        return np.asarray(totals_by_code(c.system, w * expit(eta), k) / total)


@dataclass(frozen=True)
class BothSteps:
    """Both steps' estimates for a block of resamples (rows of every array)."""

    theta: FloatArray
    """Step 1's θ (resamples, systems)."""
    phi: FloatArray
    gamma: FloatArray
    """γ (resamples, cases); nan for a case outside the resample."""
    fits: SystemFits
    rates: FloatArray
    """Length-controlled win rates (resamples, systems)."""


def fit_both_steps(
    c: Contests, w: FloatArray, fitted: Sequence[bool], start: BothSteps | None = None
) -> BothSteps:
    """Both steps on contest weights w (resamples, rows), systems not `fitted` left out."""
    wk = w * np.asarray(fitted, dtype=bool)[c.system]
    # The baseline's tie with itself counts on a case as often as the case was drawn: the
    # weight of any of its contests (all carry the case's count).
    wcase = np.zeros((w.shape[0], c.n_cases))
    wcase[:, c.case] = wk
    x, spread = scaled_lengths(c, wk)
    first = None if start is None else (start.theta[0], start.phi[0], start.gamma[0])
    theta, phi, gamma = fit_difficulty(c, x, wk, wcase, spread, first)
    fits = fit_systems(c, x, (theta, phi, gamma), wk, fitted)
    return BothSteps(theta, phi, gamma, fits, controlled_rates(c, fits, gamma, wk))


def joint_length_control(
    c: Contests,
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> JointLengthControl:
    """Every system's length-controlled win rate against the baseline (see the module
    docstring), with percentile bootstrap intervals that resample cases (all of a case's
    contests together; both steps, σ included, redone in each; a resample without a fit
    for a system is left out, and with more than half left out there is no interval). A
    system with fewer than MIN_CASES contests, or whose Δ never varies, is left out of
    both steps (None). Deterministic for a given seed.
    """
    check_confidence(confidence)
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    k = c.n_systems
    n = np.bincount(c.system, minlength=k)
    fitted = [
        bool(n[m] >= MIN_CASES and np.unique(c.difference[c.system == m]).size > 1)
        for m in range(k)
    ]
    full = fit_both_steps(c, np.ones((1, c.outcome.size)), fitted)
    cases = [
        rows.tolist()
        for rows in np.split(
            np.argsort(c.case, kind="stable"),
            np.cumsum(np.bincount(c.case, minlength=c.n_cases))[:-1],
        )
        if rows.size
    ]
    block = max(1, BLOCK_WORDS // max(1, 2 * k * c.n_cases))
    rates, slopes = [], []
    for counts in resampled_counts(cases, resamples=resamples, seed=seed):
        for at in range(0, counts.shape[0], block):
            drawn = fit_both_steps(c, counts[at : at + block], fitted, full)
            rates.append(drawn.rates)
            slopes.append(drawn.fits.phi)
    boot_rates, boot_slopes = np.concatenate(rates), np.concatenate(slopes)

    def point(a: FloatArray, m: int) -> float | None:
        return None if np.isnan(a[0, m]) else float(a[0, m])

    def interval(a: FloatArray, boot: FloatArray, m: int) -> Interval:
        if point(a, m) is None:
            return (None, None)
        return kept_interval(boot[:, m], resamples, confidence)

    return JointLengthControl(
        win_rate=[point(full.rates, m) for m in range(k)],
        win_rate_ci=[interval(full.rates, boot_rates, m) for m in range(k)],
        coefficient=[point(full.fits.phi, m) for m in range(k)],
        coefficient_ci=[interval(full.fits.phi, boot_slopes, m) for m in range(k)],
        loading=[point(full.fits.psi, m) for m in range(k)],
        intercept=[point(full.fits.theta, m) for m in range(k)],
        n=[int(v) for v in n],
        difficulty=full.gamma[0],
        fitted=fitted,
    )
