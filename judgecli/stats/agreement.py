"""Agreement between raters (judges, humans): κ, correlations, confusion matrix (Krippendorff's
α is `krippendorff`).

An agreement statistic that is undefined — no data, or raters without any variation, so
that chance agreement is already perfect (0/0) — is ``None`` (shown as "n/a"), never
``nan``.

κ and the correlations also come as ``*_resampled``: the statistic of every bootstrap
resample at once, from row counts (``stats.resampling``), where undefined is nan. The
correlations are computed that way for the sample itself too (one resample holding each
row once), so a point estimate and its interval share one implementation; scipy, whose
import alone costs about a second, is the oracle of the tests.
"""

from collections.abc import Callable, Hashable, Sequence
from itertools import combinations
from typing import Literal

import numpy as np
import numpy.typing as npt

from judgecli.stats.intervals import FloatArray, Values
from judgecli.stats.resampling import (
    IndexArray,
    constant_in,
    correlation_in,
    each_resample,
    midranks_in,
    tied_pairs_in,
    totals_by_code,
)

# Distinct (x, y) pairs up to which Kendall's τ is computed from a table of them.
MAX_CELLS = 2048

Weights = Literal["linear", "quadratic"] | None


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
    disagreement = _disagreement(len(labels), weights)
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
    counts = category_counts(ratings, labels=labels)
    totals = counts.sum(axis=0)
    if np.count_nonzero(totals) == 1:
        return None
    shares = totals / totals.sum()
    agreement = float(((counts * counts).sum(axis=1) - m).mean()) / (m * (m - 1))
    chance = float((shares * shares).sum())
    return (agreement - chance) / (1.0 - chance)


def fleiss_kappa_resampled(ratings: FloatArray, counts: FloatArray) -> FloatArray:
    """``fleiss_kappa`` of every bootstrap resample of the items at once (see
    ``stats.resampling``): each item weighed by how many times the resample holds it.

    Args:
        ratings: nᵢⱼ, the raters putting item i in category j, shape (items, categories),
            every row summing to the same m >= 2.
        counts: How many times each item is in each resample, shape (resamples, items).

    Returns:
        κ per resample, nan where every rating of the resample is one category.
    """
    m = float(ratings[0].sum())
    agreement = ((ratings * ratings).sum(axis=1) - m) / (m * (m - 1.0))
    weight = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = counts @ agreement / weight
        shares = counts @ ratings / (m * weight)[:, None]
        chance = (shares * shares).sum(axis=1)
        kappa = (observed - chance) / (1.0 - chance)
    return np.asarray(np.where(chance < 1.0, kappa, np.nan), dtype=np.float64)


def category_counts(
    ratings: Sequence[Sequence[Hashable]], *, labels: Sequence[Hashable]
) -> FloatArray:
    """nᵢⱼ of Fleiss' κ: how many of item i's ratings are label j, shape (items, labels)."""
    k = len(labels)
    m = len(ratings[0]) if ratings else 0
    codes = _codes([label for item in ratings for label in item], labels)
    item = np.repeat(np.arange(len(ratings)), m)
    counts = np.bincount(item * k + codes, minlength=len(ratings) * k).reshape(-1, k)
    return np.asarray(counts, dtype=np.float64)


def spearman(x: Values, y: Values) -> float | None:
    """Spearman's rank correlation ρ: Pearson's r of the ranks, ties at their mean rank.

    Matches ``scipy.stats.spearmanr`` (to rounding), without importing scipy.stats
    (about a second of CPU). ``None`` for fewer than two pairs or when either input is
    constant.
    """
    pair = _paired(x, y)
    return None if pair is None else _once(spearman_resampled, *pair)


def kendall_tau_b(x: Values, y: Values) -> float | None:
    """Kendall's τ-b (adjusted for ties), as ``kendall_tau_b_resampled`` computes it.

    Matches ``scipy.stats.kendalltau(variant="b")`` exactly; beyond ``MAX_CELLS``
    distinct (x, y) pairs (continuous scores, thousands of rows) scipy computes it.
    ``None`` for fewer than two pairs or when either input is constant.
    """
    pair = _paired(x, y)
    if pair is None:
        return None
    if len(np.unique(np.stack(pair, axis=1), axis=0)) > MAX_CELLS:
        from scipy.stats import kendalltau  # lazy: scipy.stats costs ~1 s to import

        return float(kendalltau(*pair, variant="b").statistic)
    return _once(kendall_tau_b_resampled, *pair)


def pearson(x: Values, y: Values) -> float | None:
    """Pearson's product-moment correlation r.

    Matches ``scipy.stats.pearsonr`` (to rounding). ``None`` for fewer than two pairs or
    when either input is constant.
    """
    pair = _paired(x, y)
    return None if pair is None else _once(pearson_resampled, *pair)


def _once(
    statistic: Callable[[FloatArray, FloatArray, FloatArray], FloatArray],
    x: FloatArray,
    y: FloatArray,
) -> float:
    """A resampled statistic on the rows themselves: one resample holding each row once."""
    return float(statistic(x, y, np.ones((1, x.size)))[0])


def cohen_kappa_resampled(
    a: IndexArray, b: IndexArray, counts: FloatArray, *, k: int, weights: Weights = None
) -> FloatArray:
    """``cohen_kappa`` of every bootstrap resample at once (see ``stats.resampling``).

    Args:
        a: Each row's label, as its index in the k labels (``a`` is the first rater).
        b: The second rater's, aligned with ``a``.
        counts: How many times each row is in each resample, shape (resamples, rows).
        k: Number of labels.
        weights: As ``cohen_kappa``.

    Returns:
        κ per resample, nan where ``cohen_kappa`` gives ``None``.
    """
    resamples = counts.shape[0]
    observed = totals_by_code(a * k + b, counts, k * k).reshape(resamples, k, k)
    n = observed.sum(axis=(1, 2))
    disagreement = _disagreement(k, weights)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = observed.sum(axis=2)[:, :, None] * observed.sum(axis=1)[:, None, :]
        expected /= n[:, None, None]
        expected_disagreement = (disagreement * expected).sum(axis=(1, 2))
        kappa = 1.0 - (disagreement * observed).sum(axis=(1, 2)) / expected_disagreement
    defined = (n > 0) & (expected_disagreement > 0.0)
    return np.asarray(np.where(defined, kappa, np.nan), dtype=np.float64)


def pearson_resampled(x: FloatArray, y: FloatArray, counts: FloatArray) -> FloatArray:
    """``pearson`` of every bootstrap resample at once: the correlation of the rows, each
    weighted by its count; nan where a resample's x or y is constant.
    """
    x, y, counts = _cells(x, y, counts)
    return correlation_in(x, y, counts, constant=constant_in(x, counts) | constant_in(y, counts))


def spearman_resampled(x: FloatArray, y: FloatArray, counts: FloatArray) -> FloatArray:
    """``spearman`` of every bootstrap resample at once: Pearson's r of the mid-ranks the
    rows have within each resample; nan where a resample's x or y is constant.
    """
    x, y, counts = _cells(x, y, counts)
    constant = constant_in(x, counts) | constant_in(y, counts)
    return correlation_in(midranks_in(x, counts), midranks_in(y, counts), counts, constant=constant)


def kendall_tau_b_resampled(
    x: FloatArray, y: FloatArray, counts: FloatArray, *, max_cells: int = MAX_CELLS
) -> FloatArray:
    """``kendall_tau_b`` of every bootstrap resample at once; nan where it gives ``None``.

    With T the resample's count of each distinct (x, y) cell and S[c, d] =
    sign(x_c − x_d) · sign(y_c − y_d), concordant minus discordant pairs is ½ Tᵀ S T; with
    n₀ = N(N − 1)/2 pairs and n₁ = Σ t(t − 1)/2 over the counts t of each x value (n₂
    for y), τ-b = (P − Q) / √(n₀ − n₁) / √(n₀ − n₂) (M. G. Kendall (1945), "The treatment
    of ties in ranking problems", Biometrika 33(3)), in the order of operations of
    ``scipy.stats.kendalltau``, and exact: every count is a whole number. Costs
    O(resamples × cells²): a rating scale has a few cells, continuous scores one per
    row, so beyond ``max_cells`` cells each resample goes to ``kendall_tau_b`` instead.
    """
    cx, cy, held = _cells(x, y, counts)
    if cx.size > max_cells:
        return each_resample(lambda rows: kendall_tau_b(x[rows], y[rows]))(counts)
    sign = np.sign(cx[:, None] - cx[None, :]) * np.sign(cy[:, None] - cy[None, :])
    concordance = ((held @ sign) * held).sum(axis=1) / 2
    n = held.sum(axis=1)
    pairs = n * (n - 1) / 2
    x_ties, y_ties = tied_pairs_in(cx, held), tied_pairs_in(cy, held)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = concordance / np.sqrt(pairs - x_ties) / np.sqrt(pairs - y_ties)
    undefined = (x_ties == pairs) | (y_ties == pairs)
    return np.asarray(np.where(undefined, np.nan, np.clip(tau, -1.0, 1.0)), dtype=np.float64)


def _cells(
    x: FloatArray, y: FloatArray, counts: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The distinct (x, y) pairs, and how many times each resample holds each: all the
    correlations depend on, and a rating scale has a handful of them, not one per row.
    """
    cells, codes = np.unique(np.stack([x, y], axis=1), axis=0, return_inverse=True)
    return cells[:, 0], cells[:, 1], totals_by_code(codes.reshape(-1), counts, len(cells))


def _disagreement(k: int, weights: Weights) -> FloatArray:
    """The κ disagreement weights w_ij of ``cohen_kappa`` for k ordered labels."""
    index = np.arange(k)
    distance = np.abs(index[:, None] - index[None, :]) / max(1, k - 1)
    if weights is None:
        distance = 1.0 * (distance > 0)
    elif weights == "quadratic":
        distance = distance**2
    return np.asarray(distance, dtype=np.float64)


def _paired(x: Values, y: Values) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None:
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if xs.shape != ys.shape:
        raise ValueError(f"x and y differ in length: {xs.size} and {ys.size}")
    if xs.size < 2 or np.all(xs == xs[0]) or np.all(ys == ys[0]):
        return None
    return xs, ys


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
