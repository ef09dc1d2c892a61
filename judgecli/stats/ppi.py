"""Human-corrected means by prediction-powered inference (PPI++).

The judge has a verdict ŷ on every case; humans have labelled a subset. The labelled
cases measure how far the judge sits from the humans, and the judge's verdicts on the
other cases carry the rest of the information. PPI++ (A. N. Angelopoulos, J. C. Duchi
and T. Zrnic (2023), "PPI++: Efficient Prediction-Powered Inference", arXiv:2311.01453)
combines the two into an estimate of the human-scale mean with a confidence interval::

    θ̂ = λ · mean(ŷ on the unlabelled cases) + mean(y − λ·ŷ on the labelled cases)

unbiased for the humans' mean whatever the judge's bias, and narrower than the
labels-only mean whenever the judge's verdicts track the humans'. λ = 0 is the classical
labels-only mean, λ = 1 plain PPI; by default λ is tuned from the data to minimise the
variance. The means here are of 0/1 pass rates, win rates with ties counted ½, or
scores on a rating scale.

The arithmetic matches the reference implementation ``ppi_py`` 0.2.3 (``ppi_mean_
pointestimate``, ``ppi_mean_ci``, ``_calc_lam_glm`` with ``clip=True``, and statsmodels'
``_zconfint_generic``), which is not a dependency; tests pin its values. "Unlabelled"
follows ppi_py: the cases WITHOUT a human label, disjoint from the labelled ones.

Results are plain Python floats; ``None`` where a quantity is undefined.
"""

from dataclasses import dataclass
from math import isfinite, sqrt

import numpy as np
import numpy.typing as npt

from judgecli.stats.intervals import (
    FloatArray,
    Interval,
    Values,
    normal_quantile,
)

MIN_LABELS = 2
"""Fewer human labels give no spread of y − λŷ, hence no interval and no estimate."""


@dataclass(frozen=True)
class CorrectedMean:
    """A judge's mean corrected to the human scale with PPI++.

    Attributes:
        estimate: The corrected mean θ̂; ``None`` with fewer than ``MIN_LABELS`` labels.
        ci: Normal two-sided interval θ̂ ± z·se, not clipped to the scale; ``(None,
            None)`` when the estimate is ``None`` or its standard error is zero (see
            ``ppi_mean``).
        lam: The rectifier weight λ used: 0 is the labels-only mean, 1 plain PPI.
        n_labeled: Number n of cases with a human label.
        n_unlabeled: Number N of cases with only the judge's verdict.
        judge_mean: The judge's raw mean over all n + N cases ("raw" beside the
            corrected estimate); ``None`` when there are no cases.
        bias: mean(ŷ − y) over the labelled cases: how far above (positive) or below
            the humans the judge sits; ``None`` with no labels.
    """

    estimate: float | None
    ci: Interval
    lam: float | None
    n_labeled: int
    n_unlabeled: int
    judge_mean: float | None
    bias: float | None


@dataclass(frozen=True)
class _Data:
    y: FloatArray
    yhat: FloatArray
    yhat_unlabeled: FloatArray

    @property
    def n(self) -> int:
        return int(self.y.size)

    @property
    def big_n(self) -> int:
        return int(self.yhat_unlabeled.size)


def ppi_mean(
    y_labeled: Values,
    yhat_labeled: Values,
    yhat_unlabeled: Values,
    *,
    confidence: float = 0.95,
    lam: float | None = None,
) -> CorrectedMean:
    """PPI++ estimate and confidence interval of the human-scale mean.

    With n labelled cases (human labels y, judge verdicts ŷ) and N unlabelled cases
    (judge verdicts ŷᵘ only), following Angelopoulos, Duchi & Zrnic (2023), "PPI++:
    Efficient Prediction-Powered Inference", arXiv:2311.01453, and matching ``ppi_py``
    0.2.3's ``ppi_mean_pointestimate`` / ``ppi_mean_ci`` (d = 1, no weights,
    two-sided)::

        θ̂  = mean(λ·ŷᵘ) + mean(y − λ·ŷ)
        se² = sd(λ·ŷᵘ)² / N + sd(y − λ·ŷ)² / n        (sd with ddof = 0)
        CI  = θ̂ ± z·se,   z = Φ⁻¹((1 + confidence) / 2)

    When ``lam`` is ``None`` it is power-tuned as in ppi_py's ``_calc_lam_glm`` (the
    mean's gradients are y − θ and ŷ − θ and its Hessian is 1)::

        λ = clip( Cov(y, ŷ) / ((1 + n/N) · Var(ŷ over all n + N cases)), 0, 1 )

    with Cov over the labelled cases (ddof = 0) and Var over every judged case (ddof =
    1). The clip keeps λ in [0, 1]: a judge that disagrees with the humans
    (Cov < 0) gets λ = 0, and a judge that compresses the scale (which would call for
    λ > 1) gets plain PPI.

    Where ppi_py is undefined or degenerate, this function decides:

    - no unlabelled cases (N = 0; ppi_py divides by zero): every judged case is
      labelled, the estimate is the labels' mean ȳ with the classical normal
      interval ȳ ± z·sd(y)/√n (ddof = 0) — ppi_py's ``classical_mean_ci``, and the
      λ = 0 case of the formula above, so the interval does not jump when the last
      unlabelled case is labelled. λ is reported as 0, even if one was given.
    - fewer than two labels: estimate, interval and λ are ``None``.
    - a constant judge (all ŷ and ŷᵘ equal; ppi_py's λ is then 0/0, or whatever its
      rounding noise makes of it): λ = 0 when tuned; the estimate is ȳ for any λ.
    - a zero standard error (e.g. every label and verdict the same): the estimate
      stands but the interval is ``(None, None)``, as in ``intervals.t_interval``: a
      zero-width interval claims a certainty no sample gives. ppi_py returns [θ̂, θ̂].

    Args:
        y_labeled: Human labels y of the n labelled cases.
        yhat_labeled: The judge's verdicts ŷ on the same cases, in the same order.
        yhat_unlabeled: The judge's verdicts on the N cases without a label.
        confidence: Coverage of the two-sided interval (ppi_py's ``1 - alpha``).
        lam: Fixed rectifier weight; ``None`` tunes it. 1 is plain PPI, 0 the
            classical labels-only mean. Any finite value is accepted.

    Returns:
        The ``CorrectedMean``.

    Raises:
        ValueError: If ``confidence`` is not in (0, 1), ``y_labeled`` and
            ``yhat_labeled`` differ in length, a sequence is not one-dimensional, or a
            value (or ``lam``) is not finite.
    """
    z = normal_quantile(confidence)
    data = _validated(y_labeled, yhat_labeled, yhat_unlabeled, lam)
    n, big_n = data.n, data.big_n
    every = np.concatenate([data.yhat, data.yhat_unlabeled])
    judge_mean = float(every.mean()) if every.size else None
    bias = float((data.yhat - data.y).mean()) if n else None
    if n < MIN_LABELS:
        return CorrectedMean(None, (None, None), None, n, big_n, judge_mean, bias)
    if big_n == 0:
        lam = 0.0
    elif lam is None:
        lam = _tuned_lam(data)
    rectifier = data.y - lam * data.yhat
    estimate = float(rectifier.mean())
    variance = 0.0 if _constant(rectifier) else float(rectifier.std()) ** 2 / n
    if big_n:
        imputed = lam * data.yhat_unlabeled
        estimate = float(imputed.mean()) + estimate
        if lam != 0.0 and not _constant(data.yhat_unlabeled):
            variance += float(imputed.std()) ** 2 / big_n
    ci: Interval = (None, None)
    if variance > 0.0:
        half = z * sqrt(variance)
        ci = (estimate - half, estimate + half)
    return CorrectedMean(estimate, ci, float(lam), n, big_n, judge_mean, bias)


def projected_half_width(
    y_labeled: Values,
    yhat_labeled: Values,
    yhat_unlabeled: Values,
    *,
    labeled: int,
    confidence: float = 0.95,
    lam: float | None = None,
) -> float | None:
    """Projected half-width of the PPI++ interval were ``labeled`` cases labelled in all.

    The n' − n new labels come from the unlabelled pool, so N' = n + N − n' cases stay
    unlabelled. Using the current variance estimates (ddof = 0 over the present labelled
    and unlabelled cases)::

        half(n') = z · √( λ'²·Var(ŷᵘ)/N' + Var(y − λ'ŷ)/n' )
        Var(y − λ'ŷ) = Var(y) − 2λ'·Cov(y, ŷ) + λ'²·Var(ŷ)

    λ' is re-tuned for n' with ``ppi_mean``'s formula (the covariance stays the current
    labels' estimate and the variance of ŷ over all n + N cases does not change with
    who is labelled), or is the ``lam`` given, held fixed. At n' = n it is the current
    interval's half-width. At n' = n + N (every case labelled) it is the classical
    z·sd(y)/√n', as ``ppi_mean`` gives when N = 0. Note that a fixed λ > 0 may make the
    half-width grow with n', as the judge-only term λ²Var(ŷᵘ)/N' grows.

    Args:
        y_labeled: Human labels of the labelled cases.
        yhat_labeled: The judge's verdicts on the same cases.
        yhat_unlabeled: The judge's verdicts on the cases without a label.
        labeled: The total number n' of labelled cases, n ≤ n' ≤ n + N.
        confidence: Coverage of the two-sided interval.
        lam: Fixed rectifier weight, or ``None`` to re-tune it for each n'.

    Returns:
        The projected half-width, or ``None`` when the current interval is undefined
        (fewer than two labels, or a zero standard error): there is no spread to
        project from.

    Raises:
        ValueError: As ``ppi_mean``, or if ``labeled`` is outside [n, n + N].
    """
    current = ppi_mean(y_labeled, yhat_labeled, yhat_unlabeled, confidence=confidence, lam=lam)
    low = current.n_labeled
    high = current.n_labeled + current.n_unlabeled
    if not low <= labeled <= high:
        raise ValueError(f"labeled must be between {low} and {high}, got {labeled}")
    if current.ci[0] is None:
        return None
    data = _validated(y_labeled, yhat_labeled, yhat_unlabeled, lam)
    totals = np.array([labeled], dtype=np.int64)
    return float(_projected_half_widths(data, totals, normal_quantile(confidence), lam)[0])


def labels_needed(
    y_labeled: Values,
    yhat_labeled: Values,
    yhat_unlabeled: Values,
    *,
    half_width: float,
    confidence: float = 0.95,
    lam: float | None = None,
) -> int | None:
    """How many more human labels narrow the corrected interval to ±``half_width``.

    The smallest total n' in [n, n + N] whose ``projected_half_width`` is at most
    ``half_width`` (labels taken from the unlabelled pool, the n + N cases fixed),
    found by evaluating every n' (the projection need not fall monotonically with a
    fixed λ). It is a projection from the current variance estimates, not a promise:
    the new labels will move them.

    Args:
        y_labeled: Human labels of the labelled cases.
        yhat_labeled: The judge's verdicts on the same cases.
        yhat_unlabeled: The judge's verdicts on the cases without a label.
        half_width: Target half-width, in the units of the mean (> 0).
        confidence: Coverage of the two-sided interval.
        lam: Fixed rectifier weight, or ``None`` to re-tune it for each n'.

    Returns:
        n' − n, the additional labels (0 when the interval is already narrow enough),
        or ``None`` when even labelling every case would not do, or when the current
        interval is undefined (fewer than two labels, or a zero standard error).

    Raises:
        ValueError: As ``ppi_mean``, or if ``half_width`` is not a positive number.
    """
    if not (isfinite(half_width) and half_width > 0.0):
        raise ValueError(f"half_width must be a positive finite number, got {half_width}")
    current = ppi_mean(y_labeled, yhat_labeled, yhat_unlabeled, confidence=confidence, lam=lam)
    if current.ci[0] is None:
        return None
    data = _validated(y_labeled, yhat_labeled, yhat_unlabeled, lam)
    totals = np.arange(data.n, data.n + data.big_n + 1, dtype=np.int64)
    widths = _projected_half_widths(data, totals, normal_quantile(confidence), lam)
    reached = np.flatnonzero(widths <= half_width)
    return int(reached[0]) if reached.size else None


def _projected_half_widths(
    data: _Data, totals: npt.NDArray[np.int64], z: float, lam: float | None
) -> FloatArray:
    """``projected_half_width`` for each total n' in ``totals`` (vectorised)."""
    y, yhat = data.y, data.yhat
    var_y = float(y.var())
    var_yhat = float(yhat.var())
    cov = float(((y - y.mean()) * (yhat - yhat.mean())).mean())
    var_unlabeled = float(data.yhat_unlabeled.var()) if data.big_n else 0.0
    if _constant(data.yhat_unlabeled) or data.big_n == 0:
        var_unlabeled = 0.0
    total = data.n + data.big_n
    remaining = total - totals  # N'
    has_pool = remaining > 0
    safe_remaining = np.where(has_pool, remaining, 1)
    if lam is None:
        var_all = _var_all(data)
        if var_all == 0.0:
            lams = np.zeros(totals.shape)
        else:
            lams = np.clip(cov / ((1 + totals / safe_remaining) * var_all), 0.0, 1.0)
    else:
        lams = np.full(totals.shape, float(lam))
    lams = np.where(has_pool, lams, 0.0)
    rectifier = np.maximum(var_y - 2 * lams * cov + lams**2 * var_yhat, 0.0) / totals
    imputed = np.where(has_pool, lams**2 * var_unlabeled / safe_remaining, 0.0)
    widths: FloatArray = z * np.sqrt(imputed + rectifier)
    return widths


def _tuned_lam(data: _Data) -> float:
    """ppi_py's ``_calc_lam_glm`` for a mean (d = 1, ``coord=None``, ``clip=True``)."""
    var_all = _var_all(data)
    if var_all == 0.0:
        return 0.0
    y_cent = data.y - data.y.mean()
    yhat_cent = data.yhat - data.yhat.mean()
    cov_grads = (1 / data.n) * 2 * float(y_cent @ yhat_cent)
    lam = cov_grads / (2 * (1 + data.n / data.big_n) * var_all)
    return float(np.clip(lam, 0.0, 1.0))


def _var_all(data: _Data) -> float:
    """Var(ŷ) over every judged case, ddof = 1 (``np.cov``); exactly 0 when constant."""
    every = np.concatenate([data.yhat, data.yhat_unlabeled])
    if every.size < 2 or _constant(every):
        return 0.0
    return float(every.var(ddof=1))


def _constant(values: FloatArray) -> bool:
    """Whether all values are equal (a computed variance may be a rounding error)."""
    return values.size == 0 or float(values.min()) == float(values.max())


def _validated(
    y_labeled: Values, yhat_labeled: Values, yhat_unlabeled: Values, lam: float | None
) -> _Data:
    arrays = []
    for name, values in (
        ("y_labeled", y_labeled),
        ("yhat_labeled", yhat_labeled),
        ("yhat_unlabeled", yhat_unlabeled),
    ):
        array = np.asarray(values, dtype=np.float64)
        if array.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
        if not np.isfinite(array).all():
            raise ValueError(f"{name} holds a value that is not a finite number")
        arrays.append(array)
    y, yhat, yhat_unlabeled_array = arrays
    if y.size != yhat.size:
        raise ValueError(f"y_labeled and yhat_labeled differ in length: {y.size} != {yhat.size}")
    if lam is not None and not isfinite(lam):
        raise ValueError(f"lam must be a finite number, got {lam}")
    return _Data(y, yhat, yhat_unlabeled_array)
