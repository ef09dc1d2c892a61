"""Bootstrap intervals for statistics of labelled pairs, resampling cases (clusters).

Calibration data can carry several human labels per case, one row per (case, label)
pair. The rows of one case share the case's difficulty and the judge's one verdict, so
they are correlated: resampling rows as if independent understates the variance and
gives intervals that are too narrow. The cluster bootstrap resamples whole cases and keeps
each case's rows together. Reference: A. C. Cameron, J. B. Gelbach & D. L. Miller (2008),
"Bootstrap-Based Improvements for Inference with Clustered Errors", Review of Economics
and Statistics 90(3); A. C. Davison & D. V. Hinkley (1997), "Bootstrap Methods and their
Application", section 3.8 (resampling the top level of hierarchical data).

A resample is handed to a statistic as row multiplicities, not as a list of rows: a
matrix ``counts`` of shape (resamples, rows) where ``counts[b, i]`` is how many times row
i is in resample b (the number of times its case was drawn). Every statistic of this
package is a sum over rows, so it can weigh each row by its count and compute all
resamples at once with array operations, instead of one Python call per resample (issue
13 §6: 2,000 scipy calls per interval made a 36-label calibrate take 12 s of CPU).

Pairwise win rates do not come through here: one outcome per case is the one-row-per-
cluster special case, and ``pairwise.win_rate_bootstrap_interval`` draws its resamples
as multinomial counts in O(1) per resample whatever the number of cases.
"""

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judgecli.stats.intervals import (
    CHUNK_BYTES,
    FloatArray,
    Interval,
    check_confidence,
    percentile_interval,
)

IndexArray = npt.NDArray[np.intp]
BatchStatistic = Callable[[FloatArray], FloatArray]
"""Maps row counts, shape (resamples, rows), to one value per resample (nan: undefined)."""

# Temporary arrays of the size of ``counts`` a statistic may hold at once; sizes the chunks.
WORKING_COPIES = 8


@dataclass(frozen=True)
class Bootstrapped:
    """One statistic's cluster bootstrap: its interval and what it rests on."""

    ci: Interval
    """The percentile interval; ``(None, None)`` with fewer than 2 clusters or when
    fewer than half the resamples give a value."""
    clusters: int
    """Clusters (cases) resampled."""
    resamples: int
    kept: int
    """Resamples where the statistic has a value (not nan)."""


def cluster_bootstrap(
    statistics: Mapping[str, BatchStatistic],
    indices_by_cluster: Sequence[Sequence[int]],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Bootstrapped]:
    """Percentile bootstrap intervals of statistics of rows, resampling clusters of rows.

    Each resample draws as many clusters as there are, uniformly with replacement
    (``numpy.random.default_rng(seed)``, ``integers(0, k, size=k)`` per resample); a
    cluster drawn twice contributes its rows twice. Every statistic sees the same
    resamples. Resamples where a statistic is nan (say, κ of a resample with one label
    only) are dropped, and its interval is the (1 − c)/2 and (1 + c)/2 quantiles of the
    rest (Efron & Tibshirani 1993, ch. 13). With one row per cluster this is the ordinary
    nonparametric bootstrap. Deterministic for a given seed.

    Performance: resamples are handed over in chunks of at most ``CHUNK_BYTES`` per copy
    of ``counts``, so memory stays bounded whatever the number of rows; the cost is that
    of the statistics' array operations, O(resamples × rows) for those of this package.

    Args:
        statistics: Name → batch statistic (see ``BatchStatistic``).
        indices_by_cluster: The row indices of each cluster (``clusters_of``).
        resamples: Number of bootstrap resamples.
        seed: Seed of ``numpy.random.default_rng``.
        confidence: Coverage of the two-sided interval.

    Returns:
        Name → its ``Bootstrapped``; the interval is ``(None, None)`` when there are fewer
        than 2 clusters or fewer than half the resamples give a value: dropping more than
        that would leave an interval for a selected, no longer bootstrap, distribution.
        (Whether the interval may be shown is ``interval_rule.bootstrap_bounded``'s call.)

    Raises:
        ValueError: If ``resamples`` < 1, ``confidence`` is not in (0, 1), a cluster has
            no rows, or the clusters do not split the rows 0..n − 1.
    """
    check_confidence(confidence)
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if any(len(rows) == 0 for rows in indices_by_cluster):
        raise ValueError("every cluster needs at least one row index")
    every = sorted(i for rows in indices_by_cluster for i in rows)
    if every != list(range(len(every))):
        raise ValueError("the clusters must split the rows 0, 1, ..., n - 1, each row once")
    k = len(indices_by_cluster)
    if k < 2:
        return {name: Bootstrapped((None, None), k, resamples, 0) for name in statistics}
    values: dict[str, list[FloatArray]] = {name: [] for name in statistics}
    for counts in resampled_counts(indices_by_cluster, resamples=resamples, seed=seed):
        for name, statistic in statistics.items():
            values[name].append(statistic(counts))
    found: dict[str, Bootstrapped] = {}
    for name, chunks in values.items():
        drawn = np.concatenate(chunks)
        kept = drawn[~np.isnan(drawn)]
        too_few = 2 * kept.size < resamples
        ci: Interval = (None, None) if too_few else percentile_interval(kept, confidence=confidence)
        found[name] = Bootstrapped(ci, k, resamples, int(kept.size))
    return found


def resampled_counts(
    indices_by_cluster: Sequence[Sequence[int]], *, resamples: int, seed: int
) -> Iterator[FloatArray]:
    """The resamples as row counts, shape (chunk, rows), in memory-bounded chunks."""
    k = len(indices_by_cluster)
    cluster = np.empty(sum(len(c) for c in indices_by_cluster), dtype=np.intp)
    for number, rows in enumerate(indices_by_cluster):
        cluster[np.asarray(rows, dtype=np.intp)] = number
    chunk = max(1, CHUNK_BYTES // (8 * max(k, cluster.size) * WORKING_COPIES))
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        # One 2-D draw gives the same stream as `size` draws of k in a row.
        drawn = rng.integers(0, k, size=(size, k))
        offsets = np.arange(size, dtype=np.intp)[:, None] * k
        per_cluster = np.bincount((drawn + offsets).ravel(), minlength=size * k)
        yield per_cluster.reshape(size, k)[:, cluster].astype(np.float64)


def each_resample(statistic: Callable[[IndexArray], float | None]) -> BatchStatistic:
    """A statistic of row indices (with repeats, in row order) as a batch statistic that
    calls it once per resample: for statistics without an array form. ``None`` → nan.
    """

    def batch(counts: FloatArray) -> FloatArray:
        rows = np.arange(counts.shape[1])
        out = np.empty(counts.shape[0], dtype=np.float64)
        for b, weights in enumerate(counts.astype(np.intp)):
            value = statistic(np.repeat(rows, weights))
            out[b] = np.nan if value is None else value
        return out

    return batch


def totals_by_code(codes: IndexArray, counts: FloatArray, size: int) -> FloatArray:
    """Per resample, the total count of the rows with each code in 0..size − 1: shape
    (resamples, size). E.g. a confusion matrix per resample, with codes a·k + b.
    """
    resamples = counts.shape[0]
    cells = codes[None, :] + size * np.arange(resamples, dtype=np.intp)[:, None]
    totals = np.bincount(cells.ravel(), weights=counts.ravel(), minlength=resamples * size)
    return np.asarray(totals, dtype=np.float64).reshape(resamples, size)


def constant_in(x: FloatArray, counts: FloatArray) -> npt.NDArray[np.bool_]:
    """Per resample: do all the rows it holds have one value of x?"""
    present = counts > 0
    low = np.where(present, x, np.inf).min(axis=1)
    return np.asarray(low == np.where(present, x, -np.inf).max(axis=1))


def tied_pairs_in(x: FloatArray, counts: FloatArray) -> FloatArray:
    """Σ t(t − 1)/2 over the counts t of each value of x in each resample: tied pairs."""
    values, codes = np.unique(x, return_inverse=True)
    held = totals_by_code(codes, counts, values.size)
    return np.asarray((held * (held - 1) / 2).sum(axis=1), dtype=np.float64)


def midranks_in(x: FloatArray, counts: FloatArray) -> FloatArray:
    """Each row's rank within each resample, ties at their mean rank (as
    ``scipy.stats.rankdata``): a value held t times, above ``below`` rows of smaller
    values, has rank below + (t + 1)/2. Shape (resamples, rows).
    """
    values, codes = np.unique(x, return_inverse=True)
    held = totals_by_code(codes, counts, values.size)
    ranks = np.cumsum(held, axis=1) - held + (held + 1.0) / 2.0
    return np.asarray(ranks[:, codes], dtype=np.float64)


def correlation_in(
    x: FloatArray, y: FloatArray, counts: FloatArray, *, constant: npt.NDArray[np.bool_]
) -> FloatArray:
    """Pearson's r of each resample, each row weighted by its count; nan where ``constant``
    (no variance). x and y are (rows,) or, for values that differ by resample, (resamples,
    rows).
    """
    total = counts.sum(axis=1)
    dx = x - (counts * x).sum(axis=1, keepdims=True) / total[:, None]
    dy = y - (counts * y).sum(axis=1, keepdims=True) / total[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (counts * dx * dy).sum(axis=1) / np.sqrt(
            (counts * dx * dx).sum(axis=1) * (counts * dy * dy).sum(axis=1)
        )
    return np.asarray(np.where(constant, np.nan, np.clip(r, -1.0, 1.0)), dtype=np.float64)


def clusters_of(case_ids: Sequence[Hashable]) -> list[list[int]]:
    """Row positions grouped by case id, clusters in first-seen order.

    ``clusters_of(["a", "b", "a"]) == [[0, 2], [1]]``.
    """
    clusters: dict[Hashable, list[int]] = {}
    for position, case_id in enumerate(case_ids):
        clusters.setdefault(case_id, []).append(position)
    return list(clusters.values())
