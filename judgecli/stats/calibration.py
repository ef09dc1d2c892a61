"""Calibration of a judge's stated confidence: ECE, Brier score, reliability table.

Inputs are aligned: ``confidence[i]`` is the probability, in [0, 1], the judge gave that
its verdict on item i is right, and ``correct[i]`` says whether the verdict agreed with
the human label. A statistic of no data is ``None`` (shown as "n/a"), never ``nan``.

Binning (shared by ``expected_calibration_error`` and ``reliability_table``): B bins with
edges e₀ = 0 ≤ e₁ ≤ … ≤ e_B = 1; bin k holds e_k < confidence ≤ e_{k+1}, and the first bin
also holds confidence = 0. Right-closed bins are the convention of Guo et al. (2017),
I_m = ((m − 1)/M, m/M], and of ``sklearn.calibration.calibration_curve``; they keep a
judge's stated 0.9 and 1.0 apart, where judges put most of their confidence.

* ``"width"``: e_k = k / B (correctly rounded, so a stated 0.7 sits exactly on an edge
  and falls in the bin below it).
* ``"mass"``: sort the n confidences and cut the sorted order into B nearly equal chunks
  as ``numpy.array_split`` does; e_k is the largest confidence of chunk k. A run of equal
  confidences that a cut would split goes whole to the lower bin, so equal confidences
  always share a bin (their accuracy cannot depend on row order) and the bin above may
  end up empty. Without ties the bins are exactly the ``array_split`` chunks.

Empty bins are skipped.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from judgecli.stats.intervals import FloatArray, Values

Strategy = Literal["width", "mass"]
Outcomes = Sequence[bool] | npt.NDArray[np.bool_]


@dataclass(frozen=True)
class ReliabilityBin:
    """One non-empty bin of a reliability diagram."""

    low: float
    """Lower edge (exclusive, except for the first bin, which holds a confidence of 0)."""
    high: float
    """Upper edge (inclusive)."""
    mean_confidence: float
    """Mean stated confidence of the items in the bin."""
    accuracy: float
    """Share of the items in the bin whose verdict was correct."""
    count: int
    """Number of items in the bin."""


def expected_calibration_error(
    confidence: Values, correct: Outcomes, *, bins: int = 10, strategy: Strategy = "width"
) -> float | None:
    """Expected calibration error: the count-weighted gap between accuracy and confidence.

    ECE = Σ_b (n_b / n) · |acc_b − conf_b| over the non-empty bins b (see the module
    docstring for the bins), with acc_b the share of correct verdicts and conf_b the mean
    confidence in bin b. 0 for a perfectly calibrated judge; at most 1. References:
    M. P. Naeini, G. F. Cooper & M. Hauskrecht (2015), "Obtaining Well Calibrated
    Probabilities Using Bayesian Binning", AAAI; C. Guo, G. Pleiss, Y. Sun &
    K. Q. Weinberger (2017), "On Calibration of Modern Neural Networks", ICML, eq. 3.

    Args:
        confidence: Stated probability that each verdict is right, in [0, 1].
        correct: Whether each verdict agreed with the human label.
        bins: Number of bins B.
        strategy: ``"width"`` for equal-width bins, ``"mass"`` for equal-count bins.

    Returns:
        The ECE, or ``None`` for no items.

    Raises:
        ValueError: If the inputs differ in length, a confidence is outside [0, 1] (or
            nan), ``bins`` < 1 or ``strategy`` is unknown.
    """
    p, y = _checked(confidence, correct)
    if p.size == 0:
        return None
    index = _bin_index(p, _edges(p, bins, strategy))
    # n_b · (acc_b − conf_b) = Σ_{i∈b} (y_i − p_i), so ECE = Σ_b |Σ_{i∈b} (y_i − p_i)| / n;
    # an empty bin adds 0, which is what skipping it means.
    gap = np.bincount(index, weights=y - p, minlength=bins)
    return float(np.abs(gap).sum() / p.size)


def brier_score(confidence: Values, correct: Outcomes) -> float | None:
    """Brier score: the mean squared error of the stated confidence, mean (p − y)².

    y is 1 for a correct verdict and 0 otherwise; 0 is perfect, a judge that always says
    0.5 scores 0.25. Reference: G. W. Brier (1950), "Verification of forecasts expressed
    in terms of probability", Monthly Weather Review 78(1). Matches
    ``sklearn.metrics.brier_score_loss(correct, confidence, pos_label=True)``.

    Returns:
        The score, or ``None`` for no items.

    Raises:
        ValueError: If the inputs differ in length or a confidence is outside [0, 1].
    """
    p, y = _checked(confidence, correct)
    if p.size == 0:
        return None
    return float(np.mean((p - y) ** 2))


def reliability_table(
    confidence: Values, correct: Outcomes, *, bins: int = 10, strategy: Strategy = "width"
) -> list[ReliabilityBin]:
    """The non-empty bins of a reliability diagram, in order of confidence.

    Binning as in the module docstring; ``expected_calibration_error`` equals
    Σ count / n · |accuracy − mean_confidence| over this table. Reference: Guo et al.
    (2017), section 2 ("Reliability diagrams").

    Returns:
        One ``ReliabilityBin`` per non-empty bin; ``[]`` for no items.

    Raises:
        ValueError: As ``expected_calibration_error``.
    """
    p, y = _checked(confidence, correct)
    if p.size == 0:
        return []
    edges = _edges(p, bins, strategy)
    index = _bin_index(p, edges)
    count = np.bincount(index, minlength=bins)
    confidence_sum = np.bincount(index, weights=p, minlength=bins)
    correct_sum = np.bincount(index, weights=y, minlength=bins)
    return [
        ReliabilityBin(
            low=float(edges[k]),
            high=float(edges[k + 1]),
            mean_confidence=float(confidence_sum[k] / count[k]),
            accuracy=float(correct_sum[k] / count[k]),
            count=int(count[k]),
        )
        for k in np.flatnonzero(count)
    ]


def _edges(p: FloatArray, bins: int, strategy: Strategy) -> FloatArray:
    """The B + 1 bin edges e₀ = 0, …, e_B = 1 (module docstring)."""
    if bins < 1:
        raise ValueError(f"bins must be at least 1, got {bins}")
    if strategy == "width":
        return np.arange(bins + 1, dtype=np.float64) / bins
    if strategy == "mass":
        # Chunk k (1-based) of np.array_split(sorted, bins) ends at position ends[k] - 1;
        # the first chunk is non-empty when p.size >= 1, so every ends[k] >= 1.
        size, extra = divmod(p.size, bins)
        ends = np.arange(1, bins) * size + np.minimum(np.arange(1, bins), extra)
        inner = np.sort(p)[ends - 1]
        return np.concatenate(([0.0], inner, [1.0]))
    raise ValueError(f'strategy must be "width" or "mass", got {strategy!r}')


def _bin_index(p: FloatArray, edges: FloatArray) -> npt.NDArray[np.intp]:
    """Bin of each confidence: k with e_k < p ≤ e_{k+1}; p = 0 goes to bin 0."""
    # side="left" counts the inner edges strictly below p: an edge value stays in the
    # bin below, and 1.0 (never below itself) lands in the last bin.
    return np.searchsorted(edges[1:-1], p, side="left")


def _checked(confidence: Values, correct: Outcomes) -> tuple[FloatArray, FloatArray]:
    """Confidences and 0/1 outcomes as float arrays, after validation."""
    p = np.asarray(confidence, dtype=np.float64).ravel()
    y = np.asarray(correct).ravel()
    if p.size != y.size:
        raise ValueError(
            f"confidence and correct differ in length: {p.size} and {y.size} (they are aligned)"
        )
    outside = ~((p >= 0.0) & (p <= 1.0))  # nan fails both comparisons
    if outside.any():
        raise ValueError(f"confidence must be in [0, 1], got {p[outside][0]:g}")
    if y.size and not np.isin(y, (0, 1)).all():
        raise ValueError("correct must hold booleans (True when the verdict was right)")
    return p, y.astype(np.float64)
