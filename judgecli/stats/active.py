"""Active statistical inference: which cases to label, with known inclusion probabilities,
and the inverse-probability-weighted corrected mean that stays unbiased for them.

T. Zrnic and E. J. Candès (2024), "Active Statistical Inference", ICML 2024
(arXiv:2403.03208). Every one of the N graded cases i is labelled with a known probability
π_i, independently of the others (a Poisson design: ξ_i ~ Bernoulli(π_i)), π_i larger where
the judge is less sure. The corrected mean::

    θ̂ = (1/N) · Σ_i [ ŷ_i + (y_i − ŷ_i) · ξ_i / π_i ]

is unbiased for the humans' mean whatever the judge's errors and whatever the π_i (as
long as each π_i > 0): E[ξ_i / π_i] = 1. Its standard error is the plug-in sd of the N
terms over √N, and the interval θ̂ ± z·se. This matches the paper's reference code
(github.com/tijana-zrnic/active-inference, pew79-post-election-research.ipynb: `probs =
clip((1−τ)·η·u + τ·budget, 0, 1)`, `pointest_active = mean(Yhat + (Y − Yhat)·xi/probs)`,
`std = np.std(...)/sqrt(n)`), whose values the tests pin.

The probabilities mix the judge's uncertainty u_i with the uniform rate::

    π_i = min(1, c · ((1 − τ) · u_i / mean(u) + τ)),   c such that Σ π_i = budget

τ is the uniform share: π_i ≥ τ·c ≥ τ·budget/N, so no weight 1/π_i exceeds N/(τ·budget)
and the variance is at most 1/τ times what a uniform design of the same budget gives
(2× at τ = ½, the default) even when u says nothing about the judge's errors. The paper
clips at 1 and loses that budget; here the cases clipped at 1 are taken for sure and the
rest of the budget is shared by the others (c found by water-filling), so the expected
number of labels is exactly the budget.

Results are plain Python floats; ``None`` where a quantity is undefined.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import isfinite, sqrt

import numpy as np

from judgecli.stats.intervals import FloatArray, Interval, Values, normal_quantile

UNIFORM_SHARE = 0.5
"""τ: the share of the budget spread uniformly whatever the uncertainty (the floor)."""


def inclusion_probabilities(
    uncertainty: Values, budget: float, *, uniform_share: float = UNIFORM_SHARE
) -> FloatArray:
    """Each case's probability of being labelled: proportional to its uncertainty mixed with
    the uniform rate (module docstring), each at most 1, summing to min(budget, N). All
    uncertainties zero (or τ = 1) give the uniform design budget/N.

    Raises:
        ValueError: If an uncertainty is negative or not finite, the budget not positive,
            or τ not in (0, 1].
    """
    u = np.asarray(uncertainty, dtype=np.float64)
    if u.ndim != 1 or not np.isfinite(u).all() or (u < 0).any():
        raise ValueError("uncertainty must be finite, non-negative numbers")
    if not budget > 0:
        raise ValueError(f"budget must be positive, got {budget}")
    if not 0 < uniform_share <= 1:
        raise ValueError(f"uniform_share must be in (0, 1], got {uniform_share}")
    n = u.size
    if n == 0:
        return u
    total = min(float(budget), float(n))
    mean = float(u.mean())
    weights = np.ones(n) if mean == 0.0 else (1 - uniform_share) * u / mean + uniform_share
    return water_fill(weights, total)


def water_fill(weights: FloatArray, total: float) -> FloatArray:
    """min(1, c·w_i) with c such that the sum is `total` (≤ N): the largest weights are
    capped at 1 one by one, the rest of the total shared in proportion to the others.
    """
    order = np.argsort(-weights, kind="stable")
    # The weight left after the k largest, summed from the smallest up (no running
    # subtraction whose rounding could leave the last cases with a weight of zero).
    left = np.cumsum(weights[order][::-1])[::-1]
    probs = np.ones_like(weights)
    for rank, index in enumerate(order):
        scale = (total - rank) / float(left[rank])
        if weights[index] * scale < 1.0:
            rest = order[rank:]
            probs[rest] = weights[rest] * scale
            break
    return probs


def poisson_draw(probabilities: FloatArray, seed: int) -> tuple[FloatArray, FloatArray]:
    """The Poisson design: case i is drawn when U_i < π_i (U_i uniform, independent). Returns
    (drawn as 0/1, the ranks U_i/π_i): drawn cases in rank order put the surest first, and
    the cases of rank below t are themselves a Poisson draw with probabilities t·π_i.
    """
    rng = np.random.default_rng(seed)
    u = rng.random(probabilities.size)
    with np.errstate(divide="ignore"):
        ranks = np.where(
            probabilities > 0, u / np.where(probabilities > 0, probabilities, 1), np.inf
        )
    return (u < probabilities).astype(np.float64), ranks


@dataclass(frozen=True)
class ActiveMean:
    """A judge's mean corrected to the human scale by active inference.

    Attributes:
        estimate: θ̂ (module docstring); ``None`` with fewer than two labels.
        ci: θ̂ ± z·se, not clipped; ``(None, None)`` without an estimate or with se = 0.
        n_labeled: Cases with a label (ξ_i = 1).
        n_unlabeled: Graded cases without one.
        judge_mean: The judge's mean over all N cases.
        bias: The inverse-probability-weighted mean of ŷ − y over the N cases (unbiased for
            the judge's bias against the humans); ``None`` with no labels.
    """

    estimate: float | None
    ci: Interval
    n_labeled: int
    n_unlabeled: int
    judge_mean: float | None
    bias: float | None


def active_mean(
    yhat: Values,
    labelled: Mapping[int, tuple[float, float]],
    *,
    confidence: float = 0.95,
) -> ActiveMean:
    """The inverse-probability-weighted PPI estimate of the humans' mean over N cases.

    Computed as::

        θ̂  = mean_i [ ŷ_i + (y_i − ŷ_i) · ξ_i / π_i ]
        se = sd_i [ ŷ_i + (y_i − ŷ_i) · ξ_i / π_i ] / √N      (sd with ddof = 0)
        CI = θ̂ ± z·se,   z = Φ⁻¹((1 + confidence) / 2)

    as the paper's reference code computes it (module docstring). Only the labelled
    cases' π_i enter: an unlabelled case's term is ŷ_i whatever its π_i.

    Args:
        yhat: The judge's value ŷ_i of every one of the N graded cases.
        labelled: For each labelled case (ξ_i = 1), by its index in ``yhat``: (the human
            value y_i, its inclusion probability π_i in (0, 1]).
        confidence: Coverage of the two-sided interval.

    Raises:
        ValueError: On a value that is not finite, a probability outside (0, 1], or an
            index out of range.
    """
    z = normal_quantile(confidence)
    f = np.asarray(yhat, dtype=np.float64)
    if f.ndim != 1 or not np.isfinite(f).all():
        raise ValueError("yhat must be one-dimensional finite numbers")
    n = int(f.size)
    correction = np.zeros(n)
    for index, (value, pi) in labelled.items():
        if not 0 <= index < n:
            raise ValueError(f"label index {index} is not a case index (0..{n - 1})")
        if not (isfinite(pi) and 0 < pi <= 1):
            raise ValueError(f"case {index}: inclusion probability {pi} is not in (0, 1]")
        if not isfinite(value):
            raise ValueError(f"case {index}: label {value} is not a finite number")
        correction[index] = (float(value) - f[index]) / pi
    count = len(labelled)
    judge_mean = float(f.mean()) if n else None
    bias = float(-correction.sum() / n) if count else None
    if count < 2:
        return ActiveMean(None, (None, None), count, n - count, judge_mean, bias)
    terms = f + correction
    estimate = float(terms.mean())
    spread = 0.0 if float(terms.min()) == float(terms.max()) else float(terms.std())
    ci: Interval = (None, None)
    if spread > 0.0:
        half = z * spread / sqrt(n)
        ci = (estimate - half, estimate + half)
    return ActiveMean(estimate, ci, count, n - count, judge_mean, bias)
