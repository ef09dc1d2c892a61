"""Bootstrap intervals for statistics of labelled pairs, resampling cases (clusters).

Calibration data can carry several human labels per case, one row per (case, label)
pair. The rows of one case share the case's difficulty and the judge's one verdict, so
they are correlated: resampling rows as if independent understates the variance and
gives intervals that are too narrow. The cluster bootstrap resamples whole cases and keeps
each case's rows together. Reference: A. C. Cameron, J. B. Gelbach & D. L. Miller (2008),
"Bootstrap-Based Improvements for Inference with Clustered Errors", Review of Economics
and Statistics 90(3); A. C. Davison & D. V. Hinkley (1997), "Bootstrap Methods and their
Application", section 3.8 (resampling the top level of hierarchical data).

Pairwise win rates do not come through here: one outcome per case is the one-row-per-
cluster special case, and ``pairwise.win_rate_bootstrap_interval`` draws its resamples
as multinomial counts in O(1) per resample whatever the number of cases.
"""

from collections.abc import Callable, Hashable, Sequence

import numpy as np
import numpy.typing as npt

from judgecli.stats.intervals import Interval, check_confidence, percentile_interval

IndexArray = npt.NDArray[np.intp]


def cluster_bootstrap_interval(
    statistic: Callable[[IndexArray], float | None],
    indices_by_cluster: Sequence[Sequence[int]],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Interval:
    """Percentile bootstrap interval of a statistic of rows, resampling clusters of rows.

    Each resample draws as many clusters as there are, uniformly with replacement
    (``numpy.random.default_rng(seed)``), concatenates their row indices (a cluster drawn
    twice contributes its rows twice) and calls ``statistic(row_indices)``; the caller's
    statistic closes over its aligned arrays and indexes them, e.g.
    ``lambda rows: brier_score(confidence[rows], correct[rows])``. Resamples where the
    statistic is ``None`` or nan (say, κ of a resample with one label only) are dropped,
    and the interval is the (1 − c)/2 and (1 + c)/2 quantiles of the rest (Efron &
    Tibshirani 1993, ch. 13). With one row per cluster this is the ordinary
    nonparametric bootstrap. Deterministic for a given seed.

    Performance: one call of ``statistic`` per resample, plus O(rows) to gather the
    indices, so the cost is ``resamples`` times the statistic's own: fine for thousands
    of cases and any statistic in this package, a few seconds for an O(n log n) one on
    10⁶ rows.

    Args:
        statistic: Maps an array of row indices (with repeats) to a value or ``None``.
        indices_by_cluster: The row indices of each cluster (``clusters_of``).
        resamples: Number of bootstrap resamples.
        seed: Seed of ``numpy.random.default_rng``.
        confidence: Coverage of the two-sided interval.

    Returns:
        ``(low, high)``, or ``(None, None)`` when there are fewer than 2 clusters or
        fewer than half the resamples give a value: dropping more than that would leave
        an interval for a selected, no longer bootstrap, distribution.

    Raises:
        ValueError: If ``resamples`` < 1, ``confidence`` is not in (0, 1), or a cluster
            has no rows.
    """
    check_confidence(confidence)
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if any(len(rows) == 0 for rows in indices_by_cluster):
        raise ValueError("every cluster needs at least one row index")
    k = len(indices_by_cluster)
    if k < 2:
        return (None, None)
    rows = np.concatenate([np.asarray(c, dtype=np.intp) for c in indices_by_cluster])
    sizes = np.fromiter((len(c) for c in indices_by_cluster), dtype=np.intp, count=k)
    starts = np.cumsum(sizes) - sizes
    rng = np.random.default_rng(seed)
    values: list[float] = []
    for _ in range(resamples):
        drawn = rng.integers(0, k, size=k)
        value = statistic(_gather(rows, starts[drawn], sizes[drawn]))
        if value is not None and not np.isnan(value):
            values.append(float(value))
    if 2 * len(values) < resamples:
        return (None, None)
    return percentile_interval(np.asarray(values, dtype=np.float64), confidence=confidence)


def clusters_of(case_ids: Sequence[Hashable]) -> list[list[int]]:
    """Row positions grouped by case id, clusters in first-seen order.

    ``clusters_of(["a", "b", "a"]) == [[0, 2], [1]]``.
    """
    clusters: dict[Hashable, list[int]] = {}
    for position, case_id in enumerate(case_ids):
        clusters.setdefault(case_id, []).append(position)
    return list(clusters.values())


def _gather(rows: IndexArray, starts: IndexArray, sizes: IndexArray) -> IndexArray:
    """``concatenate([rows[s : s + n] for s, n in zip(starts, sizes)])``, without a loop."""
    ends = np.cumsum(sizes)
    # Position j of the output belongs to the cluster whose run covers j; shift it from
    # its place in the output to its place in ``rows``.
    shift = np.repeat(starts - (ends - sizes), sizes)
    gathered: IndexArray = rows[np.arange(ends[-1]) + shift]
    return gathered
