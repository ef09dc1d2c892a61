"""The gain of one rater over another on the same labelled cases, with the paired cluster
bootstrap interval of the difference: κ, accuracy and agreement, before and after.

Both raters (a judge before and after alignment) grade the same cases, and each case may
carry several human labels (one row per (case, label)). A resample draws whole cases with
replacement and recomputes each metric for both raters on that one resample, so the
interval of the difference keeps the pairing: the cases both raters found easy or hard
cancel out (A. C. Davison & D. V. Hinkley (1997), "Bootstrap Methods and their
Application", §3.8 and §4.3; the cluster resampling is ``resampling.cluster_bootstrap``'s).

- κ: Cohen's κ of the rater against the labels, over every (case, label) row;
- agreement: the share of (case, label) rows whose label the rater gave;
- accuracy: the share of cases where the rater gave the case's majority label (ties
  between labels go to the label listed first; with one label a case, accuracy equals
  agreement).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from judgecli.stats.agreement import cohen_kappa_resampled
from judgecli.stats.intervals import FloatArray, Interval
from judgecli.stats.resampling import IndexArray, cluster_bootstrap, clusters_of

Statistic = Callable[[FloatArray], FloatArray]


class GainMetric(StrEnum):
    """The metrics whose gain is measured, as summary.json spells them."""

    KAPPA = "kappa"
    ACCURACY = "accuracy"
    AGREEMENT = "agreement"


@dataclass(frozen=True)
class Gain:
    """One metric of two raters on the same cases, and the interval of the difference."""

    baseline: float | None
    aligned: float | None
    gain: float | None
    """aligned − baseline (None when either is undefined)."""
    gain_ci: Interval
    """Paired cluster bootstrap percentile interval of the gain."""

    @property
    def significant(self) -> bool:
        """Whether the interval lies wholly above 0 (a gain, not a loss or noise)."""
        low = self.gain_ci[0]
        return low is not None and low > 0.0


def paired_gain(
    case_ids: Sequence[Hashable],
    labels: Sequence[Hashable],
    baseline: Sequence[Hashable],
    aligned: Sequence[Hashable],
    *,
    categories: Sequence[Hashable],
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[GainMetric, Gain]:
    """κ, accuracy and agreement of ``baseline`` and ``aligned`` against ``labels``, and
    the paired cluster bootstrap interval of each metric's gain.

    Args:
        case_ids: Each row's case (rows of one case are resampled together).
        labels: Each row's human label.
        baseline: The baseline rater's verdict on the row's case.
        aligned: The aligned rater's verdict on the row's case.
        categories: Every label value, fixed (κ's k).
        resamples: Bootstrap resamples.
        seed: Seed of the resampling.
        confidence: Coverage of the two-sided interval.

    Raises:
        ValueError: If the sequences differ in length, a value is not among
            ``categories``, or as ``cluster_bootstrap``.
    """
    n = len(case_ids)
    if not len(labels) == len(baseline) == len(aligned) == n:
        raise ValueError("need one label, baseline and aligned verdict per row")
    index = {value: i for i, value in enumerate(categories)}
    try:
        human = np.asarray([index[v] for v in labels], dtype=np.intp)
        before = np.asarray([index[v] for v in baseline], dtype=np.intp)
        after = np.asarray([index[v] for v in aligned], dtype=np.intp)
    except KeyError as err:
        raise ValueError(f"{err.args[0]!r} is not one of the categories") from None
    clusters = clusters_of(case_ids)
    majority = np.zeros(n, dtype=np.intp)
    first = np.zeros(n, dtype=np.float64)
    for rows in clusters:
        counted = Counter(int(human[i]) for i in rows)
        top = max(counted.values())
        majority[rows[0]] = next(c for c in range(len(categories)) if counted.get(c) == top)
        first[rows[0]] = 1.0
    k = len(categories)

    def kappa(rater: IndexArray) -> Statistic:
        return lambda counts: cohen_kappa_resampled(rater, human, counts, k=k)

    def agreement(rater: IndexArray) -> Statistic:
        hit = (rater == human).astype(np.float64)
        return lambda counts: (counts * hit).sum(axis=1) / counts.sum(axis=1)

    def accuracy(rater: IndexArray) -> Statistic:
        hit = ((rater == majority) * first).astype(np.float64)
        return lambda counts: (counts * hit).sum(axis=1) / (counts * first).sum(axis=1)

    makers = {
        GainMetric.KAPPA: kappa,
        GainMetric.ACCURACY: accuracy,
        GainMetric.AGREEMENT: agreement,
    }
    found: dict[GainMetric, Gain] = {}
    once = np.ones((1, n))
    for metric, make in makers.items():
        of_before, of_after = make(before), make(after)
        b = _value(of_before(once))
        a = _value(of_after(once))

        def difference(
            counts: FloatArray, of_after: Statistic = of_after, of_before: Statistic = of_before
        ) -> FloatArray:
            return np.asarray(of_after(counts) - of_before(counts), dtype=np.float64)

        boot = cluster_bootstrap(
            {"gain": difference},
            clusters,
            resamples=resamples,
            seed=seed,
            confidence=confidence,
        )["gain"]
        gain = None if a is None or b is None else a - b
        found[metric] = Gain(baseline=b, aligned=a, gain=gain, gain_ci=boot.ci)
    return found


def _value(values: FloatArray) -> float | None:
    value = float(values[0])
    return None if np.isnan(value) else value
