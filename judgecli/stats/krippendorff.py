"""Krippendorff's α: agreement of any number of raters with missing ratings, on a nominal,
ordinal or interval scale. Pure numpy.
"""

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

Level = Literal["nominal", "ordinal", "interval"]


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[float | None]], *, level: Level
) -> float | None:
    """Krippendorff's α, computed from the coincidence matrix; missing values allowed.

    Rows are raters, columns units; ``None`` (or nan) is a missing value. Units with
    fewer than two values are not pairable and are dropped. With oᶜᵏ = Σᵤ (number of
    c–k pairs of values in unit u) / (mᵤ − 1), nᶜ = Σₖ oᶜᵏ and n = Σ nᶜ:
    α = 1 − (n − 1) Σ oᶜᵏ δ²ᶜᵏ / Σ nᶜ nᵏ δ²ᶜᵏ, with δ² = [c ≠ k] (nominal),
    (c − k)² (interval), or (Σ_{g=c..k} n_g − (nᶜ + nᵏ)/2)² (ordinal, ranks by value).
    Reference: K. Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability",
    Annenberg School for Communication, Departmental Papers 43. Matches
    ``krippendorff.alpha(..., level_of_measurement=level)``.

    Returns:
        α, or ``None`` when no unit has two values, or when all pairable values are
        equal (expected disagreement 0, α is 0/0).
    """
    if len({len(row) for row in reliability_data}) > 1:
        raise ValueError("every rater's row needs one entry per unit (None when missing)")
    data = np.array(
        [[np.nan if v is None else v for v in row] for row in reliability_data], dtype=np.float64
    )
    if data.size == 0:
        return None
    data = data[:, (~np.isnan(data)).sum(axis=0) >= 2]  # pairable units only
    present = ~np.isnan(data)
    if not present.any():
        return None
    values = np.unique(data[present])
    # counts[u, c]: how many raters gave value c to unit u.
    codes = np.searchsorted(values, np.where(present, data, values[0]))
    counts = np.zeros((data.shape[1], values.size), dtype=np.float64)
    np.add.at(counts, (np.nonzero(present)[1], codes[present]), 1.0)
    scaled = counts / (counts.sum(axis=1, keepdims=True) - 1.0)
    coincidence = scaled.T @ counts - np.diag(scaled.sum(axis=0))
    margins = coincidence.sum(axis=1)
    n = float(margins.sum())
    delta = _distance(values, margins, level)
    expected = float((np.outer(margins, margins) * delta).sum())
    if expected <= 0.0:
        return None
    return 1.0 - (n - 1.0) * float((coincidence * delta).sum()) / expected


def _distance(
    values: npt.NDArray[np.float64], margins: npt.NDArray[np.float64], level: Level
) -> npt.NDArray[np.float64]:
    """Squared difference function δ²(c, k) of Krippendorff (2011) over the sorted values."""
    if level == "nominal":
        return 1.0 - np.eye(values.size)
    if level == "interval":
        return np.asarray((values[:, None] - values[None, :]) ** 2, dtype=np.float64)
    # ordinal: Σ_{g between c and k} n_g − (n_c + n_k)/2, via cumulative sums of margins.
    cumulative, index = np.cumsum(margins), np.arange(values.size)
    lo, hi = np.minimum.outer(index, index), np.maximum.outer(index, index)
    between = cumulative[hi] - cumulative[lo] + margins[lo]
    return np.asarray((between - (margins[:, None] + margins[None, :]) / 2) ** 2, dtype=np.float64)
