"""Bradley–Terry scores of many systems from their pairwise comparisons: the maximum-
likelihood fit (with covariates, for style control), bootstrap intervals that resample
cases, ranks, and the win-rate matrix.

The model (R. A. Bradley & M. E. Terry 1952; as a logistic regression, A. Agresti 2002,
"Categorical Data Analysis", §10.6): system i has a strength θ_i, and beats system j with
probability σ(θ_i − θ_j + β·z), σ the logistic function and z the comparison's covariates
(style control: how much longer, and how much more markdown, i's answer is than j's; none
by default). Comparisons are independent given the strengths.

- Ties count half a win each way: a tie adds ½·log σ(d) + ½·log σ(−d) to the
  log-likelihood, as if i and j had each won half a comparison (the Elo / Chatbot Arena
  convention; not the Rao–Kupper or Davidson tie models).
- Ridge: the log-likelihood is penalised by (λ/2)·(Σθ² + Σβ²), a N(0, 1/λ) prior. With
  λ = 0.01 (a prior sd of 10 log-odds units, ~1,700 score points) it moves systems that
  both win and lose by a negligible amount, but keeps a system that won (or lost) every
  comparison finite, where the plain maximum-likelihood strength is infinite. The penalty
  also pins the mean strength at 0: the likelihood sees only differences.
- Scale: score = 1000 + 400·log10(e)·(θ_i − anchor), Elo's scale (400 points: odds of 10
  to 1), anchored at the mean strength or at one system, which then scores 1000.

The fit is Newton's method with step halving on the concave penalised log-likelihood,
batched over bootstrap resamples; without covariates, identical comparisons are collapsed
into one weighted row first, so a resample costs O(system pairs), not O(comparisons).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judgecli.stats.intervals import FloatArray, Interval, check_confidence, percentile_interval
from judgecli.stats.resampling import resampled_counts
from judgecli.stats.special import expit

IntArray = npt.NDArray[np.intp]

RIDGE = 0.01
"""λ of the ridge penalty (see the module docstring)."""
ELO_PER_LOGIT = 400.0 / math.log(10.0)
"""Score points per unit of strength (natural log-odds): 400·log10(e) ≈ 173.7."""
BASE_SCORE = 1000.0

MAX_ITERATIONS = 100
MAX_HALVINGS = 40
TOLERANCE = 1e-10
"""Newton stops once no strength or coefficient moves by more than this."""
BLOCK_WORDS = 2**21
"""Floats a batch of resamples may hold in one (resamples, rows, parameters) array."""


class DisconnectedError(ValueError):
    """The comparisons do not connect every system: no data says how the groups compare, so
    a common scale would be the prior's invention.
    """

    def __init__(self, groups: list[list[int]]) -> None:
        self.groups = groups
        shown = "; ".join("{" + ", ".join(map(str, g)) + "}" for g in groups)
        super().__init__(f"the comparisons split the systems into {len(groups)} groups: {shown}")


@dataclass(frozen=True)
class Comparisons:
    """Decided comparisons: row r is system `first[r]` against `second[r]`, with first's
    outcome `outcome[r]` (1 a win, 0.5 a tie, 0 a loss) and covariates `covariates[r]`
    (first's answer minus second's; shape (rows, k), k = 0 without covariates).
    """

    first: IntArray
    second: IntArray
    outcome: FloatArray
    n_systems: int
    covariates: FloatArray

    @classmethod
    def of(
        cls,
        first: Sequence[int] | IntArray,
        second: Sequence[int] | IntArray,
        outcome: Sequence[float] | FloatArray,
        *,
        n_systems: int,
        covariates: Sequence[Sequence[float]] | FloatArray | None = None,
    ) -> Comparisons:
        """Checked comparisons (ValueError on indices out of range, a system against itself,
        an outcome outside [0, 1], or covariate rows that do not match).
        """
        a = np.asarray(first, dtype=np.intp).reshape(-1)
        b = np.asarray(second, dtype=np.intp).reshape(-1)
        y = np.asarray(outcome, dtype=np.float64).reshape(-1)
        rows = a.size
        z = (
            np.zeros((rows, 0))
            if covariates is None
            else np.asarray(covariates, dtype=np.float64).reshape(rows, -1)
        )
        if n_systems < 2:
            raise ValueError(f"need at least 2 systems, got {n_systems}")
        if b.size != rows or y.size != rows:
            raise ValueError("first, second and outcome must have the same length")
        if rows and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= n_systems):
            raise ValueError(f"system indices must be in 0..{n_systems - 1}")
        if np.any(a == b):
            raise ValueError("a system cannot be compared with itself")
        if np.any((y < 0) | (y > 1)) or not np.all(np.isfinite(z)):
            raise ValueError("outcomes must be in [0, 1] and covariates finite")
        return cls(a, b, y, n_systems, z)

    @property
    def rows(self) -> int:
        """How many comparisons."""
        return int(self.first.size)

    @property
    def design(self) -> FloatArray:
        """The logistic regression's rows: +1 for first, −1 for second, then the covariates."""
        x = np.zeros((self.rows, self.n_systems + self.covariates.shape[1]))
        index = np.arange(self.rows)
        x[index, self.first] = 1.0
        x[index, self.second] = -1.0
        x[:, self.n_systems :] = self.covariates
        return x


@dataclass(frozen=True)
class BradleyTerryFit:
    """A fitted model: strengths (log-odds, mean 0), covariate coefficients, and the
    inverse of the penalised information at the optimum (an approximate covariance of all
    the parameters, strengths first).
    """

    strengths: FloatArray
    coefficients: FloatArray
    covariance: FloatArray


@dataclass(frozen=True)
class Resampled:
    """Bootstrap fits: one row per resample."""

    strengths: FloatArray
    """Shape (resamples, systems); (0, systems) when there are fewer than 2 clusters."""
    coefficients: FloatArray
    """Shape (resamples, covariates)."""


def collapsed(c: Comparisons) -> tuple[FloatArray, FloatArray, IntArray]:
    """Distinct regression rows, their outcomes, and which of them each comparison is.

    Without covariates a comparison is (pair, outcome): i beating j and j losing to i are
    one row, so there are at most 3 rows per pair of systems. With covariates every
    comparison is its own row.
    """
    if c.covariates.shape[1]:
        return c.design, c.outcome, np.arange(c.rows, dtype=np.intp)
    swap = c.first > c.second
    low = np.where(swap, c.second, c.first)
    high = np.where(swap, c.first, c.second)
    y = np.where(swap, 1.0 - c.outcome, c.outcome)
    keys = (low * c.n_systems + high) * 3 + np.rint(2 * y).astype(np.intp)
    unique, row_of = np.unique(keys, return_inverse=True)
    pair, level = np.divmod(unique, 3)
    x = np.zeros((unique.size, c.n_systems))
    x[np.arange(unique.size), pair // c.n_systems] = 1.0
    x[np.arange(unique.size), pair % c.n_systems] = -1.0
    return x, level / 2.0, row_of.astype(np.intp)


def penalized_log_likelihood(
    theta: FloatArray, x: FloatArray, y: FloatArray, w: FloatArray, ridge: float
) -> FloatArray:
    """Σ w·(y·log σ(η) + (1 − y)·log σ(−η)) − (λ/2)·|θ|², per resample (rows of θ and w)."""
    eta = theta @ x.T
    fitted = -(y * np.logaddexp(0.0, -eta) + (1.0 - y) * np.logaddexp(0.0, eta))
    return np.asarray((w * fitted).sum(axis=1) - ridge / 2 * (theta**2).sum(axis=1))


def newton_fit(
    x: FloatArray,
    y: FloatArray,
    w: FloatArray,
    *,
    ridge: float,
    start: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Maximise the penalised log-likelihood for each row of weights `w` (resamples, rows):
    the parameters (resamples, p) and the information matrices at the optimum (resamples,
    p, p). Each Newton step is halved until the objective does not decrease, so the
    iteration cannot overshoot on nearly separable data. Without a ridge the information is
    singular along "all strengths + c"; the pseudo-inverse then steps orthogonally to it.
    `start`: the parameters to start from (default 0), e.g. the full data's fit for its
    bootstrap resamples, which then take a few steps each.
    """
    resamples, p = w.shape[0], x.shape[1]
    theta = np.zeros((resamples, p)) if start is None else np.tile(start, (resamples, 1))
    value = penalized_log_likelihood(theta, x, y, w, ridge)
    eye = np.eye(p)
    info = np.zeros((resamples, p, p))
    for _ in range(MAX_ITERATIONS):
        prob = expit(theta @ x.T)
        grad = (w * (y - prob)) @ x - ridge * theta
        info = np.matmul(x.T[None], (w * prob * (1 - prob))[:, :, None] * x[None]) + ridge * eye
        inverse = np.linalg.inv(info) if ridge > 0 else np.linalg.pinv(info, hermitian=True)
        step = np.matmul(inverse, grad[:, :, None])[:, :, 0]
        size = np.ones(resamples)
        for _ in range(MAX_HALVINGS):
            trial = theta + size[:, None] * step
            trial_value = penalized_log_likelihood(trial, x, y, w, ridge)
            worse = trial_value < value - 1e-12 * (1.0 + np.abs(value))
            if not worse.any():
                break
            size = np.where(worse, size / 2, size)
        moved = float(np.max(np.abs(trial - theta), initial=0.0))
        theta, value = trial, trial_value
        if moved < TOLERANCE:
            break
    return theta, info


def fit_bradley_terry(
    c: Comparisons, *, weights: Sequence[float] | FloatArray | None = None, ridge: float = RIDGE
) -> BradleyTerryFit:
    """The penalised maximum-likelihood strengths and coefficients (see the module
    docstring). `weights`: how many times each comparison counts (default 1). The
    comparisons need not connect every system (the ridge then places each group's mean at
    0); `check_connected` says whether they do.
    """
    if ridge < 0:
        raise ValueError(f"ridge must be at least 0, got {ridge}")
    x, y, row_of = collapsed(c)
    counts = np.ones(c.rows) if weights is None else np.asarray(weights, dtype=np.float64)
    w = np.bincount(row_of, weights=counts, minlength=y.size).astype(np.float64)[None, :]
    theta, info = newton_fit(x, y, w, ridge=ridge)
    strengths = theta[0, : c.n_systems] - theta[0, : c.n_systems].mean()
    inverse = np.linalg.inv(info[0]) if ridge > 0 else np.linalg.pinv(info[0], hermitian=True)
    return BradleyTerryFit(strengths, theta[0, c.n_systems :], inverse)


def bootstrap_bradley_terry(
    c: Comparisons,
    clusters: Sequence[Sequence[int]],
    *,
    resamples: int = 1000,
    seed: int = 0,
    ridge: float = RIDGE,
) -> Resampled:
    """The model refitted on bootstrap resamples of clusters (cases: every comparison made
    on one case is drawn together, since they share the case's difficulty), as
    `resampling.resampled_counts` draws them: deterministic for a given seed.
    """
    x, y, row_of = collapsed(c)
    n, p = c.n_systems, x.shape[1]
    if len(clusters) < 2:
        return Resampled(np.zeros((0, n)), np.zeros((0, p - n)))
    # A resample's weight of a distinct row is the sum of its comparisons' counts: sort the
    # comparisons by row, then add up each row's run of columns.
    by_row = np.argsort(row_of, kind="stable")
    starts = np.searchsorted(row_of[by_row], np.arange(y.size))
    block = max(1, BLOCK_WORDS // max(1, y.size * p))
    fitted: list[FloatArray] = []
    start = fit_bradley_terry(c, ridge=ridge)
    guess = np.concatenate([start.strengths, start.coefficients])
    for counts in resampled_counts(clusters, resamples=resamples, seed=seed):
        w = np.add.reduceat(counts[:, by_row], starts, axis=1)
        for first in range(0, w.shape[0], block):
            chunk = w[first : first + block]
            fitted.append(newton_fit(x, y, chunk, ridge=ridge, start=guess)[0])
    theta = np.concatenate(fitted)
    strengths = theta[:, :n] - theta[:, :n].mean(axis=1, keepdims=True)
    return Resampled(strengths, theta[:, n:])


def elo_scores(strengths: FloatArray, *, anchor: int | None = None) -> FloatArray:
    """Strengths (..., systems) on the Elo-like scale: 1000 at the mean strength, or at
    system `anchor`, and 400 points per factor of 10 in the odds of winning.
    """
    centre = strengths.mean(axis=-1) if anchor is None else strengths[..., anchor]
    return np.asarray(BASE_SCORE + ELO_PER_LOGIT * (strengths - np.expand_dims(centre, -1)))


def score_intervals(samples: FloatArray, *, confidence: float = 0.95) -> list[Interval]:
    """Percentile intervals of each column of bootstrap samples (resamples, systems);
    (None, None) for every column when there are no samples.
    """
    check_confidence(confidence)
    if samples.shape[0] == 0:
        return [(None, None)] * samples.shape[1]
    return [
        percentile_interval(samples[:, i], confidence=confidence) for i in range(samples.shape[1])
    ]


def ranks(scores: Sequence[float], intervals: Sequence[Interval]) -> list[int]:
    """Rank = 1 + the number of systems whose interval lies wholly above this one's (its
    lower end above this one's upper end): the Chatbot Arena convention, so systems whose
    intervals overlap share a rank. Without an interval a system's score stands for both
    ends.
    """
    ends = [
        (score, score) if low is None or high is None else (low, high)
        for score, (low, high) in zip(scores, intervals, strict=True)
    ]
    return [1 + sum(other_low > high for other_low, _ in ends) for _, high in ends]


def share_above(samples: FloatArray, i: int, j: int) -> float | None:
    """The share of resamples in which system i's score is strictly above system j's."""
    if samples.shape[0] == 0:
        return None
    return float(np.mean(samples[:, i] > samples[:, j]))


def components(c: Comparisons) -> list[list[int]]:
    """The systems in groups linked by comparisons, each group sorted, groups by their
    smallest member. One group: every system is on one scale.
    """
    parent = list(range(c.n_systems))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in zip(c.first.tolist(), c.second.tolist(), strict=True):
        parent[root(a)] = root(b)
    groups: dict[int, list[int]] = {}
    for i in range(c.n_systems):
        groups.setdefault(root(i), []).append(i)
    return sorted(groups.values())


def check_connected(c: Comparisons) -> None:
    """DisconnectedError unless the comparisons link every system to every other."""
    groups = components(c)
    if len(groups) > 1:
        raise DisconnectedError(groups)


@dataclass(frozen=True)
class WinTable:
    """Pairwise tallies: `won[i, j]` is what i scored against j (a win 1, a tie ½) and
    `played[i, j]` how many comparisons they had.
    """

    won: FloatArray
    played: FloatArray

    def rate(self, i: int, j: int) -> float | None:
        """The win rate of system i against j (ties half), None when they never met."""
        n = self.played[i, j]
        return None if n == 0 else float(self.won[i, j] / n)


def win_table(c: Comparisons) -> WinTable:
    """Who beat whom how often: row beats column, ties counted half."""
    n = c.n_systems
    won = np.zeros((n, n))
    played = np.zeros((n, n))
    np.add.at(won, (c.first, c.second), c.outcome)
    np.add.at(won, (c.second, c.first), 1.0 - c.outcome)
    np.add.at(played, (c.first, c.second), 1.0)
    np.add.at(played, (c.second, c.first), 1.0)
    return WinTable(won, played)


def scaled_columns(columns: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Covariate columns divided by their root mean square (1 for an all-zero column), and
    the divisors. Not centred: a comparison's covariates change sign with the order of its
    two systems, and the root mean square (unlike the standard deviation) does not depend
    on which system of each comparison is listed first.
    """
    rms = np.sqrt(np.mean(columns**2, axis=0)) if columns.shape[0] else np.ones(columns.shape[1])
    scale = np.where(rms > 0, rms, 1.0)
    return columns / scale, scale
