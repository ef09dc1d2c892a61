"""Length-controlled win rate: what NEW's win rate would be if its answers were as long as
OLD's (the length-controlled win rate of AlpacaEval 2).

Judges prefer longer answers. The win rate then mixes two things: NEW's answers being
better, and NEW's answers being longer. Following Y. Dubois, B. Galambosi, P. Liang and
T. Hashimoto, "Length-Controlled AlpacaEval: A Simple Way to Debias Automatic Evaluators"
(2024), a logistic regression (a GLM) of NEW's outcome y ∈ {0, ½, 1} (loss, tie, win) on
the length difference is fitted,

    logit E[y] = θ + φ · tanh((len_new − len_old) / σ),

σ the sample standard deviation of the length differences (ddof = 1, as pandas' ``std``
in AlpacaEval's ``glm_winrate.py``), and the win rate is predicted at zero length
difference: sigmoid(θ). The tanh bounds how much length alone can move a verdict.
AlpacaEval also fits an instruction-difficulty term estimated from the many models of its
leaderboard and regularises towards gamed baselines; with two systems and no leaderboard,
neither exists here, and the fit is the plain maximum-likelihood one.

A tie is half a win: y = ½ is a fractional response, fitted by the binomial
log-likelihood Σ y·η − log(1 + e^η) (quasi-binomial; L. Papke & J. Wooldridge 1996,
"Econometric methods for fractional response variables"), which is what AlpacaEval's
duplicated, probability-weighted rows maximise too. Its maximum is found by Newton's
method (iteratively reweighted least squares), vectorised over bootstrap resamples.

The maximum likelihood does not exist when the outcomes are separated — NEW won (or lost)
every case, or every win had a longer NEW answer than every loss (A. Albert & J. A.
Anderson 1984). That is checked exactly before fitting, and such data (or resample) has
no fit; nor has data so nearly separated that the fit runs beyond ±MAX_LOGIT (9 wins and 3
ties, the ties at the longest NEW answers: a finite maximum at φ ≈ −150, θ ≈ 150, which
would read as a 100% win rate "at equal length").

Cost: each Newton iteration is O(resamples × cases) array work, and a fit takes about six;
the bootstrap's resamples are handed over in memory-bounded chunks (``resampled_counts``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from judgecli.stats.intervals import FloatArray, Interval, check_confidence, percentile_interval
from judgecli.stats.resampling import resampled_counts

MIN_CASES = 10
"""Fewer decided cases than this with both lengths: no fit (two parameters from a handful
of verdicts would be noise)."""

MAX_LOGIT = 10.0
"""A fit whose θ or φ is beyond ±this (log-odds; a prediction within 0.005% of 0 or 1) is
nearly separated: driven to the edge by a few cases, not a measurement. It counts as none."""

MAX_ITERATIONS = 100
TOLERANCE = 1e-10
"""Newton stops once no parameter moves by more than this (relative to its size, plus it)."""
MAX_HALVINGS = 40
"""Step halvings tried before an iteration gives up on rising (at the maximum, up to rounding)."""

BoolArray = npt.NDArray[np.bool_]


class Unfit(StrEnum):
    """Why there is no length-controlled win rate."""

    TOO_FEW = f"fewer than {MIN_CASES} decided cases with lengths"
    NO_SPREAD = "every case has the same length difference"
    SEPARATED = "no finite fit: wins and losses are (nearly) split by length, or all one way"


@dataclass(frozen=True)
class LengthControl:
    """The fitted GLM and what it predicts at equal length."""

    win_rate: float | None
    """sigmoid(θ): NEW's win rate (ties ½) predicted at zero length difference."""
    win_rate_ci: Interval
    coefficient: float | None
    """φ, the weight of tanh(length difference / σ) in log-odds: > 0, the judge rewards
    NEW for being longer (and OLD for being longer: it is a preference for length)."""
    coefficient_ci: Interval
    intercept: float | None
    """θ, log-odds of a NEW win at equal length."""
    sigma: float | None
    """Standard deviation of len_new − len_old over the cases (ddof = 1)."""
    n: int
    """Cases fitted."""
    reason: Unfit | None = None
    """Why there is no fit (None when there is)."""


def length_sigma(differences: Sequence[float] | FloatArray) -> float | None:
    """Sample standard deviation (ddof = 1) of the length differences; None under 2 cases."""
    d = np.asarray(differences, dtype=np.float64)
    return None if d.size < 2 else float(np.std(d, ddof=1))


def length_feature(differences: Sequence[float] | FloatArray, sigma: float) -> FloatArray:
    """tanh(difference / σ): the GLM's length feature, in (−1, 1)."""
    return np.asarray(np.tanh(np.asarray(differences, dtype=np.float64) / sigma))


def overlapping(y: FloatArray, x: FloatArray, weights: FloatArray) -> BoolArray:
    """Per row of ``weights``: does a finite, unique maximum-likelihood fit exist?

    Each outcome is a win part (y > 0) and a loss part (y < 1) at its x. With an intercept
    and one feature the fit is finite and unique unless a threshold on x (or none: all
    wins, all losses) puts every win part on one side and every loss part on the other,
    touching allowed (quasi-complete separation; A. Albert & J. A. Anderson 1984,
    Biometrika 71(1)). So it exists iff both parts occur and each reaches beyond the
    other's extreme on both sides. A constant x fails this too: its slope is not
    identified.
    """
    held = weights > 0
    wins, losses = held & (y > 0), held & (y < 1)
    min_win = np.where(wins, x, np.inf).min(axis=-1)
    max_win = np.where(wins, x, -np.inf).max(axis=-1)
    min_loss = np.where(losses, x, np.inf).min(axis=-1)
    max_loss = np.where(losses, x, -np.inf).max(axis=-1)
    both = wins.any(axis=-1) & losses.any(axis=-1)
    return np.asarray(both & (max_loss > min_win) & (max_win > min_loss))


def log_likelihood(
    y: FloatArray, x: FloatArray, weights: FloatArray, theta: FloatArray, phi: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Σ w·(y·η − log(1 + e^η)) per row, η = θ + φ·x (the binomial log-likelihood), and the
    fitted probabilities e^η / (1 + e^η) (one pass: they share log(1 + e^η)).
    """
    eta = theta[:, None] + phi[:, None] * x
    log_normaliser = np.logaddexp(0.0, eta)
    ll = (weights * (y * eta - log_normaliser)).sum(axis=-1)
    return np.asarray(ll), np.asarray(np.exp(eta - log_normaliser))


def fit_length_glm(
    y: FloatArray, x: FloatArray, weights: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Maximum-likelihood (θ, φ) of logit P = θ + φ·x for each row of ``weights``.

    Args:
        y: Outcomes in [0, 1], shape (n,).
        x: The feature, shape (n,) or (rows, n).
        weights: Case weights (bootstrap counts), shape (rows, n).

    Returns:
        θ and φ, shape (rows,) each; nan where no finite fit exists (``overlapping``), the
        fit is beyond ±MAX_LOGIT (nearly separated), or Newton did not converge.
    """
    rows = weights.shape[0]
    x = np.broadcast_to(x, weights.shape)
    theta, phi = np.full(rows, np.nan), np.full(rows, np.nan)
    fit = overlapping(y, x, weights)
    if not fit.any():
        return theta, phi
    w, xs = weights[fit], x[fit]
    t, f = np.zeros(w.shape[0]), np.zeros(w.shape[0])
    converged, failed = np.zeros(w.shape[0], dtype=bool), np.zeros(w.shape[0], dtype=bool)
    ll, p = log_likelihood(y, xs, w, t, f)
    for _ in range(MAX_ITERATIONS):
        # Only the rows still moving are updated: the arrays are (resamples, cases).
        a = np.flatnonzero(~converged)
        wa, xa, ta, fa = w[a], xs[a], t[a], f[a]
        r, v = wa * (y - p[a]), wa * p[a] * (1.0 - p[a])
        g0, g1 = r.sum(axis=-1), (r * xa).sum(axis=-1)
        vx = v * xa
        h00, h01, h11 = v.sum(axis=-1), vx.sum(axis=-1), (vx * xa).sum(axis=-1)
        det = h00 * h11 - h01 * h01
        with np.errstate(divide="ignore", invalid="ignore"):
            step_t, step_f = (h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det
        # A Hessian that underflowed to singular (probabilities within 1e-300 of 0 or 1)
        # gives no step: that row has no fit, rather than nan spreading through it.
        broken = ~(np.isfinite(step_t) & np.isfinite(step_f))
        failed[a] |= broken
        step_t, step_f = np.where(broken, 0.0, step_t), np.where(broken, 0.0, step_f)
        # Newton on a concave likelihood rarely overshoots; where it does, the step is
        # halved until the likelihood does not fall (it rises along the Newton direction).
        scale, before = np.ones_like(ta), ll[a]
        for _ in range(MAX_HALVINGS):
            trial, fitted = log_likelihood(y, xa, wa, ta + scale * step_t, fa + scale * step_f)
            worse = ~(trial >= before - 1e-12 * np.abs(before))
            if not worse.any():
                break
            scale = np.where(worse, scale / 2.0, scale)
        else:  # no rise found: stay where it is (converged, up to rounding)
            scale, trial = np.where(worse, 0.0, scale), np.where(worse, before, trial)
            fitted = np.where(worse[:, None], p[a], fitted)
        t[a], f[a], ll[a], p[a] = ta + scale * step_t, fa + scale * step_f, trial, fitted
        moved = np.maximum(
            np.abs(scale * step_t) / (1.0 + np.abs(t[a])),
            np.abs(scale * step_f) / (1.0 + np.abs(f[a])),
        )
        converged[a] = (moved < TOLERANCE) | broken
        if converged.all():
            break
    kept = converged & ~failed & (np.maximum(np.abs(t), np.abs(f)) <= MAX_LOGIT)
    theta[fit] = np.where(kept, t, np.nan)
    phi[fit] = np.where(kept, f, np.nan)
    return theta, phi


def sigmoid(values: FloatArray) -> FloatArray:
    """1 / (1 + e^−x), without overflow; nan (no fit) stays nan."""
    with np.errstate(invalid="ignore"):
        return np.asarray(np.exp(-np.logaddexp(0.0, -values)))


def length_controlled_win_rate(
    outcomes: Sequence[float],
    differences: Sequence[float],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> LengthControl:
    """NEW's win rate at equal length, and how much length sways the judge.

    The intervals are percentile bootstrap intervals over cases (Efron & Tibshirani 1993,
    ch. 13): each resample redoes the whole estimate, σ included. Resamples without a
    finite fit (separated, or every length difference equal) are left out; when they are
    more than half, the intervals are ``(None, None)`` (what remained would no longer be a
    bootstrap distribution). Deterministic for a given seed.

    Args:
        outcomes: NEW's outcome per case: 1 (win), 0.5 (tie) or 0 (loss).
        differences: len_new − len_old per case, in the same order.
        resamples: Number of bootstrap resamples.
        seed: Seed of ``numpy.random.default_rng`` (through ``resampled_counts``).
        confidence: Coverage of the two-sided intervals.

    Returns:
        The fit; ``win_rate`` None with a ``reason`` when it cannot be made.

    Raises:
        ValueError: If the sequences differ in length, an outcome is outside [0, 1], or
            ``resamples`` < 1.
    """
    check_confidence(confidence)
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    y = np.asarray(outcomes, dtype=np.float64)
    d = np.asarray(differences, dtype=np.float64)
    if y.shape != d.shape:
        raise ValueError(f"{y.size} outcomes but {d.size} length differences")
    if ((y < 0) | (y > 1)).any():
        raise ValueError("outcomes must be in [0, 1] (loss 0, tie 0.5, win 1)")
    n, sigma = int(y.size), length_sigma(d)
    if n < MIN_CASES:
        return unfit(n, sigma, Unfit.TOO_FEW)
    if not sigma:
        return unfit(n, sigma, Unfit.NO_SPREAD)
    theta, phi = fit_length_glm(y, length_feature(d, sigma), np.ones((1, n)))
    if np.isnan(theta[0]):
        return unfit(n, sigma, Unfit.SEPARATED)
    drawn = [
        resampled_fit(y, d, counts)
        for counts in resampled_counts([[i] for i in range(n)], resamples=resamples, seed=seed)
    ]
    rates = np.concatenate([sigmoid(t) for t, _ in drawn])
    slopes = np.concatenate([f for _, f in drawn])
    return LengthControl(
        win_rate=float(sigmoid(theta)[0]),
        win_rate_ci=kept_interval(rates, resamples, confidence),
        coefficient=float(phi[0]),
        coefficient_ci=kept_interval(slopes, resamples, confidence),
        intercept=float(theta[0]),
        sigma=sigma,
        n=n,
    )


def unfit(n: int, sigma: float | None, reason: Unfit) -> LengthControl:
    """No fit, and why."""
    none: Interval = (None, None)
    return LengthControl(None, none, None, none, None, sigma, n, reason)


def resampled_fit(
    y: FloatArray, d: FloatArray, counts: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """(θ, φ) of each resample (rows of ``counts``), σ recomputed in each; nan: no fit."""
    total = counts.sum(axis=-1, keepdims=True)
    mean = (counts * d).sum(axis=-1, keepdims=True) / total
    sigma = np.sqrt((counts * (d - mean) ** 2).sum(axis=-1, keepdims=True) / (total - 1.0))
    # A resample whose length differences are all equal has σ = 0 and no feature: its x is
    # set to 0, which `overlapping` reads as constant (no fit).
    spread = sigma > 0
    x = np.tanh(np.divide(d, sigma, out=np.zeros(counts.shape), where=spread))
    return fit_length_glm(y, x, counts)


def kept_interval(values: FloatArray, resamples: int, confidence: float) -> Interval:
    """The percentile interval of the resamples that have a fit, if they are at least half."""
    kept = values[~np.isnan(values)]
    if 2 * kept.size < resamples:
        return (None, None)
    return percentile_interval(kept, confidence=confidence)
