"""Agreement between raters (judges, humans): κ, α, correlations, confusion matrix.

An agreement statistic that is undefined — no data, or raters without any variation, so
that chance agreement is already perfect (0/0) — is ``None`` (shown as "n/a"), never
``nan``.
"""

from collections.abc import Hashable, Sequence
from itertools import combinations
from typing import Literal

import numpy as np
import numpy.typing as npt

from judgecli.stats.intervals import Values

Weights = Literal["linear", "quadratic"] | None
Level = Literal["nominal", "ordinal", "interval"]


def confusion_matrix(
    a: Sequence[Hashable], b: Sequence[Hashable], labels: Sequence[Hashable]
) -> list[list[int]]:
    """Counts of (a, b) label pairs: rows are ``a``'s labels, columns ``b``'s, in ``labels`` order.

    Raises:
        ValueError: If ``a`` and ``b`` differ in length or hold a label not in ``labels``.
    """
    return [[int(count) for count in row] for row in _confusion(a, b, labels)]


def cohen_kappa(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    *,
    labels: Sequence[Hashable],
    weights: Weights = None,
) -> float | None:
    """Cohen's κ between two raters, optionally weighted for ordinal labels.

    κ = 1 − Σ wᵢⱼ Oᵢⱼ / Σ wᵢⱼ Eᵢⱼ, with O the confusion matrix, E the product of its
    margins divided by n, and disagreement weights wᵢⱼ = [i ≠ j] (unweighted),
    |i − j| / (k − 1) (linear) or (i − j)² / (k − 1)² (quadratic), where i, j index the
    fixed ``labels`` and k = len(labels): a label nobody used still keeps its place, so
    it does not shift the weights. References: J. Cohen (1960), "A coefficient of
    agreement for nominal scales"; J. Cohen (1968), "Weighted kappa". Matches
    ``sklearn.metrics.cohen_kappa_score(a, b, labels=labels, weights=weights)``.

    Returns:
        κ, or ``None`` when there are no pairs, or when expected disagreement is 0: both
        raters gave one and the same label throughout, so observed agreement is
        necessarily perfect too and κ is 0/0 (scikit-learn returns ``nan``).
        ``percent_agreement`` still reports 1.0 for that case.

    Raises:
        ValueError: As ``confusion_matrix``.
    """
    observed = _confusion(a, b, labels).astype(np.float64)
    n = observed.sum()
    if n == 0:
        return None
    index = np.arange(len(labels))
    distance = np.abs(index[:, None] - index[None, :]) / max(1, len(labels) - 1)
    if weights is None:
        disagreement = 1.0 * (distance > 0)
    else:
        disagreement = distance if weights == "linear" else distance**2
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / n
    expected_disagreement = float((disagreement * expected).sum())
    if expected_disagreement <= 0.0:  # exact: only products of zero margins vanish
        return None
    return 1.0 - float((disagreement * observed).sum()) / expected_disagreement


def percent_agreement(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Share of items on which two raters gave the same label; ``None`` for no items."""
    _check_aligned(a, b)
    if not a:
        return None
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def pairwise_cohen_kappas(
    raters: dict[str, Sequence[Hashable]],
    *,
    labels: Sequence[Hashable],
    weights: Weights = None,
) -> dict[str, float | None]:
    """Cohen's κ for every pair of raters, keyed ``"nameA~nameB"`` with names sorted.

    The raters' sequences are aligned by item; ``None`` marks a missing rating, and an
    item missing from either rater of a pair is left out of that pair's κ only.
    """
    result: dict[str, float | None] = {}
    for first, second in combinations(sorted(raters), 2):
        pairs = zip(raters[first], raters[second], strict=True)
        kept = [(x, y) for x, y in pairs if x is not None and y is not None]
        a, b = [x for x, _ in kept], [y for _, y in kept]
        result[f"{first}~{second}"] = cohen_kappa(a, b, labels=labels, weights=weights)
    return result


def fleiss_kappa(
    ratings: Sequence[Sequence[Hashable]], *, labels: Sequence[Hashable]
) -> float | None:
    """Fleiss' κ for a fixed number m of raters per item.

    With nᵢⱼ the raters putting item i in category j, N items: pⱼ = Σᵢ nᵢⱼ / (N m),
    Pᵢ = (Σⱼ nᵢⱼ² − m) / (m (m − 1)), P̄ = mean Pᵢ, P̄ₑ = Σⱼ pⱼ², and
    κ = (P̄ − P̄ₑ) / (1 − P̄ₑ). Reference: J. L. Fleiss (1971), "Measuring nominal scale
    agreement among many raters", Psychological Bulletin 76(5). Matches
    ``statsmodels.stats.inter_rater.fleiss_kappa``. ``ratings[i]`` lists the labels the
    raters gave item i.

    Returns:
        κ, or ``None`` when there are no items, fewer than two raters per item, or all
        ratings fall in one category (P̄ₑ = 1).

    Raises:
        ValueError: If items have different numbers of ratings or a label is unknown.
    """
    if not ratings:
        return None
    m = len(ratings[0])
    if any(len(item) != m for item in ratings):
        raise ValueError("every item needs the same number of ratings for Fleiss' kappa")
    if m < 2:
        return None
    k = len(labels)
    codes = _codes([label for item in ratings for label in item], labels)
    item = np.repeat(np.arange(len(ratings)), m)
    counts = np.bincount(item * k + codes, minlength=len(ratings) * k).reshape(-1, k)
    totals = counts.sum(axis=0)
    if np.count_nonzero(totals) == 1:
        return None
    shares = totals / totals.sum()
    agreement = float(((counts * counts).sum(axis=1) - m).mean()) / (m * (m - 1))
    chance = float((shares * shares).sum())
    return (agreement - chance) / (1.0 - chance)


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


def spearman(x: Values, y: Values) -> float | None:
    """Spearman's rank correlation ρ (ties get mid-ranks), via ``scipy.stats.spearmanr``.

    ``None`` for fewer than two pairs or when either input is constant.
    """
    from scipy.stats import spearmanr  # lazy: scipy.stats costs ~0.8 s to import

    pair = _paired(x, y)
    return None if pair is None else float(spearmanr(*pair).statistic)


def kendall_tau_b(x: Values, y: Values) -> float | None:
    """Kendall's τ-b (adjusted for ties), via ``scipy.stats.kendalltau(variant="b")``.

    ``None`` for fewer than two pairs or when either input is constant.
    """
    from scipy.stats import kendalltau

    pair = _paired(x, y)
    return None if pair is None else float(kendalltau(*pair, variant="b").statistic)


def pearson(x: Values, y: Values) -> float | None:
    """Pearson's product-moment correlation r, via ``scipy.stats.pearsonr``.

    ``None`` for fewer than two pairs or when either input is constant.
    """
    from scipy.stats import pearsonr

    pair = _paired(x, y)
    return None if pair is None else float(pearsonr(*pair).statistic)


def _paired(x: Values, y: Values) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None:
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if xs.shape != ys.shape:
        raise ValueError(f"x and y differ in length: {xs.size} and {ys.size}")
    if xs.size < 2 or np.all(xs == xs[0]) or np.all(ys == ys[0]):
        return None
    return xs, ys


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


def _confusion(
    a: Sequence[Hashable], b: Sequence[Hashable], labels: Sequence[Hashable]
) -> npt.NDArray[np.int64]:
    _check_aligned(a, b)
    k = len(labels)
    cells = _codes(a, labels) * k + _codes(b, labels)
    return np.bincount(cells, minlength=k * k).reshape(k, k).astype(np.int64)


def _codes(items: Sequence[Hashable], labels: Sequence[Hashable]) -> npt.NDArray[np.int64]:
    """Each item's index in ``labels``; ValueError for an unknown label or repeated labels."""
    position = {label: i for i, label in enumerate(labels)}
    if len(position) != len(labels):
        raise ValueError(f"labels repeat: {list(labels)}")
    unknown = next((item for item in items if item not in position), None)
    if unknown is not None:
        raise ValueError(f"label {unknown!r} is not one of {list(labels)}")
    return np.fromiter((position[item] for item in items), dtype=np.int64, count=len(items))


def _check_aligned(a: Sequence[Hashable], b: Sequence[Hashable]) -> None:
    if len(a) != len(b):
        raise ValueError(f"the two raters' sequences differ in length: {len(a)} and {len(b)}")
