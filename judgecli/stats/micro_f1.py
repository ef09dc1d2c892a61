"""Precision, recall and F1 micro-averaged over items grouped in cases (an agent's tool
calls against the calls its case expects), with intervals from resampling cases.

Each case holds some expected items (E), some items made (A) and the ones that matched
(TP ≤ min(E, A)). Micro-averaging pools the items of every case:

* precision = Σ TP / Σ A (undefined when no item was made),
* recall    = Σ TP / Σ E (undefined when none was expected),
* F1        = 2 Σ TP / (Σ E + Σ A), their harmonic mean (undefined when both sums are 0).

A case with nothing made still counts in recall (its expected items are misses); a case
expecting nothing still counts in precision (each item it made is a false positive).

**Intervals.** Each number is a ratio Σ y / Σ x over cases (precision: y = TP, x = A), and
the items of one case are not independent trials (one run makes them all). Its interval is
Wilson's at the *effective number of trials* the data support, the approach of Korn and
Graubard for proportions from clustered samples (E. L. Korn & B. I. Graubard (1998),
"Confidence intervals for proportions with small expected number of positive counts
estimated from survey data", Survey Methodology 24(2)):

1. the variance of the ratio is the variance of its cluster bootstrap over cases
   (`resampling.resampled_counts`: whole cases drawn with replacement, seeded);
2. the effective n is p̂(1 − p̂) / that variance, never more than the items themselves (a
   design effect below 1 would claim the items of a case are more informative than
   independent ones), shrunk by (z / t₍ₖ₋₁₎)² for the k cases the number rests on (the
   degrees-of-freedom correction that makes a handful of cases count as a handful);
3. where the bootstrap says nothing of the spread (one informative case, or every
   resample alike: p̂ of 0 or 1, every case perfect) the effective n is Kish's
   (Σ x)² / Σ x², the number of cases as if every item of a case went together: the
   conservative bound.

Wilson's interval keeps the properties the rule of `interval_rule` asks of a proportion:
inside [0, 1], never a single point, honest at any n. Measured on simulated agents
(tests/unit/stats/test_micro_f1.py, 400 seeds), the percentile bootstrap of the same
resamples covered precision 75.5% of the time at 5 cases and 85.5% at 10, where this
interval covered 99.5% and 99.0%; by 40 cases both cover 94–97%.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from judgecli.stats.intervals import FloatArray, Interval, normal_quantile, wilson_interval
from judgecli.stats.resampling import resampled_counts
from judgecli.stats.special import t_quantile

MEASURES = ("precision", "recall", "f1")


@dataclass(frozen=True)
class MatchCounts:
    """One case's items: matched (true positives), expected, and made."""

    matched: int
    expected: int
    made: int

    def __post_init__(self) -> None:
        if min(self.matched, self.expected, self.made) < 0:
            raise ValueError(f"counts cannot be negative: {self}")
        if self.matched > min(self.expected, self.made):
            raise ValueError(f"more matched than expected or made: {self}")


@dataclass(frozen=True)
class MicroEstimate:
    """One micro-averaged number, its interval, and what the interval rests on."""

    value: float | None
    """None when its denominator is 0 (nothing made, nothing expected)."""
    ci: Interval
    cases: int
    """Cases with a nonzero denominator: the cases the number rests on."""
    effective_n: float | None
    """The effective number of independent trials Wilson's interval was taken at."""


def ratio(numerator: float, denominator: float) -> float | None:
    """The ratio of two counts; None for 0/0."""
    return None if denominator == 0 else numerator / denominator


def micro_scores(cases: Sequence[MatchCounts]) -> dict[str, float | None]:
    """Micro-averaged precision, recall and F1 over every item of the cases."""
    tp = sum(c.matched for c in cases)
    expected = sum(c.expected for c in cases)
    made = sum(c.made for c in cases)
    return {
        "precision": ratio(tp, made),
        "recall": ratio(tp, expected),
        "f1": ratio(2 * tp, expected + made),
    }


def ratio_parts(cases: Sequence[MatchCounts]) -> dict[str, tuple[FloatArray, FloatArray]]:
    """Each number's per-case numerator and denominator (F1: 2·TP over E + A)."""
    tp = np.asarray([c.matched for c in cases], dtype=np.float64)
    expected = np.asarray([c.expected for c in cases], dtype=np.float64)
    made = np.asarray([c.made for c in cases], dtype=np.float64)
    return {"precision": (tp, made), "recall": (tp, expected), "f1": (2 * tp, expected + made)}


def resampled_ratios(
    parts: dict[str, tuple[FloatArray, FloatArray]], clusters: int, *, resamples: int, seed: int
) -> dict[str, FloatArray]:
    """Each ratio over the same cluster-bootstrap resamples of the cases (nan for a
    resample where its denominator is 0).
    """
    drawn: dict[str, list[FloatArray]] = {name: [] for name in parts}
    rows = [[i] for i in range(clusters)]
    for counts in resampled_counts(rows, resamples=resamples, seed=seed):
        for name, (top, bottom) in parts.items():
            over = counts @ bottom
            with np.errstate(invalid="ignore", divide="ignore"):
                drawn[name].append(np.where(over > 0, (counts @ top) / over, np.nan))
    return {name: np.concatenate(chunks) for name, chunks in drawn.items()}


def kish_n(weights: FloatArray) -> float:
    """Kish's effective sample size (Σ w)² / Σ w² of clusters of sizes `weights`."""
    return float(weights.sum() ** 2 / (weights**2).sum())


def effective_n(
    value: float, weights: FloatArray, replicates: FloatArray, *, confidence: float
) -> float:
    """The effective number of independent trials behind a ratio over clusters of sizes
    `weights` (those > 0), from its bootstrap `replicates` (see the module docstring).
    """
    k = weights.size
    kept = replicates[~np.isnan(replicates)]
    spread = float(kept.var(ddof=1)) if k >= 2 and 2 * kept.size >= replicates.size else 0.0
    if spread <= 0.0 or not 0.0 < value < 1.0:
        return kish_n(weights)
    n = min(value * (1.0 - value) / spread, float(weights.sum()))
    shrink = (normal_quantile(confidence) / t_quantile((1.0 + confidence) / 2.0, k - 1)) ** 2
    return n * shrink


def micro_estimates(
    cases: Sequence[MatchCounts],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, MicroEstimate]:
    """Micro precision, recall and F1, each with Wilson's interval at its effective n."""
    values = micro_scores(cases)
    parts = ratio_parts(cases)
    replicates = (
        resampled_ratios(parts, len(cases), resamples=resamples, seed=seed)
        if len(cases) >= 2
        else {}
    )
    found: dict[str, MicroEstimate] = {}
    for name in MEASURES:
        value = values[name]
        _, bottom = parts[name]
        weights = bottom[bottom > 0]
        if value is None:
            found[name] = MicroEstimate(None, (None, None), 0, None)
            continue
        drawn = replicates.get(name, np.empty(0))
        n = effective_n(value, weights, drawn, confidence=confidence)
        ci = wilson_interval(min(max(value * n, 0.0), n), n, confidence=confidence)
        found[name] = MicroEstimate(value, ci, int(weights.size), n)
    return found
