"""The one rule every interval judge prints or gates on follows: an interval may be wide,
never falsely narrow (docs/statistics.md, "Intervals at small n").

- A **proportion** (a pass, win, loss, agreement, consistency, stability or flip rate,
  pass^K, ...) has a Wilson interval, the textbook interval of k successes in n independent
  trials, honest at any n ≥ 1 (5 of 5 is [56.6%, 100%]). Where the data are not n
  independent trials a bootstrap is the documented choice instead (the pairwise win rate,
  whose ties are not half a Bernoulli trial; agreement when a case has several labels,
  which are not independent), and Wilson stands in whenever that bootstrap is degenerate:
  every resample alike, so a zero-width interval ([100%, 100%] from 5 wins of 5).
  ``proportion_interval``; a mean of probabilities in [0, 1] is ``rate_interval``; a ratio
  of items clustered in cases (tool calls) has Wilson's at the effective number of items
  the cluster bootstrap implies (``micro_f1.micro_estimates``).
- Any **other statistic** (a mean, κ, a correlation) has an interval only when enough of its
  cases inform it, and otherwise none (``(None, None)``) and a reason, which summary.json's
  `no_interval` and the reports carry: too few informative cases (κ and the correlations
  need ``MIN_INFORMATIVE`` cases off the most common value on each side: a correlation
  driven by the one case the judge scored differently says nothing), no spread (a t
  interval of values all alike), every bootstrap resample alike, or most resamples without
  a value. ``mean_interval``, ``bootstrap_bounded``, ``too_few_informative``.

Never a zero-width interval, and never one computed from a single informative case.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from judgecli.stats.intervals import Interval, Values, t_interval, wilson_interval
from judgecli.stats.resampling import Bootstrapped

MIN_INFORMATIVE = 3
"""Cases off the most common value, on each side, below which κ and the correlations have
no interval. Only those cases carry the statistic: with one (a judge that gave 7 of 8 cases
the same score) every resample that holds it has the same sign, the others have no value,
and the bootstrap claims significance from one data point (Spearman −0.48 [−1.00, −0.31]);
with two, the interval is the spread of two points. Three is the least from which a
resample's value can vary for reasons other than which of them it drew.
"""

NO_INTERVAL: Interval = (None, None)


class NoIntervalKind(StrEnum):
    """Why a statistic that has a value has no interval: the start of every reason."""

    TOO_FEW_INFORMATIVE = "too few informative cases"
    NO_SPREAD = "no spread"
    ONE_CASE = "one case"
    SAME_RESAMPLES = "every resample alike"
    UNDEFINED_RESAMPLES = "most resamples undefined"


@dataclass(frozen=True)
class Bounded:
    """A statistic's interval as judge reports it: the interval, or none and why."""

    ci: Interval
    why: str | None = None
    """Why ``ci`` is ``(None, None)``: a ``NoIntervalKind`` and what it saw."""


@dataclass
class NoIntervalReasons:
    """Collects, statistic by statistic, why one with a value has no interval: the
    `no_interval` mapping of an object of summary.json (the summary, `self_consistency`, a
    category, ...), keyed by the statistic's key in that object ("spearman", "mean").
    """

    reasons: dict[str, str] = field(default_factory=dict)

    def ci(self, key: str, value: float | None, bounded: Bounded) -> Interval:
        """``bounded.ci``, noting its reason under ``key`` when ``value`` exists (a
        statistic without a value needs no word on its interval).
        """
        if value is not None and bounded.why is not None:
            self.reasons[key] = bounded.why
        return bounded.ci

    def mapping(self) -> dict[str, str] | None:
        """The reasons, or None when every statistic with a value has its interval."""
        return dict(self.reasons) or None


def reason(kind: NoIntervalKind, detail: str) -> str:
    """A reason as summary.json and the reports show it: "kind: detail"."""
    return f"{kind.value}: {detail}"


def zero_width(ci: Interval) -> bool:
    """Whether an interval is a single point."""
    return ci[0] is not None and ci[0] == ci[1]


def within(ci: Interval, bounds: tuple[float, float]) -> Interval:
    """An interval clipped to the values the statistic can take (a rate's [0, 1], a rating
    scale): a bound no case could ever have is noise, not information.
    """
    low, high = ci
    if low is None or high is None:
        return ci
    return (min(max(low, bounds[0]), bounds[1]), min(max(high, bounds[0]), bounds[1]))


def proportion_interval(
    successes: float, n: int, *, bootstrap: Interval | None = None, confidence: float = 0.95
) -> Interval:
    """The interval of a proportion successes / n: the ``bootstrap`` given, unless it is
    missing or degenerate (zero width), else Wilson's.

    Args:
        successes: Successes (may be fractional: a win rate counts a tie as half).
        n: Trials (cases): what Wilson's width is for.
        bootstrap: The statistic's bootstrap interval, where that is its documented
            interval; None for Wilson always.
        confidence: Coverage of the two-sided interval.

    Returns:
        ``(low, high)``, ``(None, None)`` only for n = 0.
    """
    if bootstrap is not None and bootstrap[0] is not None and not zero_width(bootstrap):
        return bootstrap
    return wilson_interval(successes, n, confidence=confidence)


def rate_interval(values: Values, *, confidence: float = 0.95) -> Interval:
    """The interval of a mean of values in [0, 1] (a probability-weighted rate): Student t
    clipped to [0, 1]; Wilson on (Σ values, n) when t has none (one value, or no spread).

    Wilson there is conservative: a variable in [0, 1] with mean μ has variance at most
    μ(1 − μ) (R. Bhatia & C. Davis (2000), "A better bound on the variance", Amer. Math.
    Monthly 107(4)), the binomial variance Wilson assumes.
    """
    data = np.asarray(values, dtype=np.float64)
    low, high = t_interval(data, confidence=confidence)
    if low is None or high is None:
        # Clamped: probabilities summed in floating point may pass n by a rounding error.
        successes = min(max(float(data.sum()), 0.0), float(data.size))
        return wilson_interval(successes, int(data.size), confidence=confidence)
    return within((low, high), (0.0, 1.0))


def mean_interval(
    values: Values,
    *,
    bounds: tuple[float, float] | None = None,
    what: str = "value",
    confidence: float = 0.95,
) -> Bounded:
    """A mean's Student t interval, clipped to ``bounds`` (a rating scale: a bound no case
    could have is noise); none, and why, for one value or values all alike (``what`` a
    value is, for the reason: "score", "change").
    """
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return Bounded(NO_INTERVAL)
    low, high = t_interval(data, confidence=confidence)
    if low is None or high is None:
        if data.size == 1:
            return Bounded(NO_INTERVAL, reason(NoIntervalKind.ONE_CASE, "no spread to measure"))
        return Bounded(
            NO_INTERVAL, reason(NoIntervalKind.NO_SPREAD, f"every {what} is {data[0]:.4g}")
        )
    return Bounded((low, high) if bounds is None else within((low, high), bounds))


def bootstrap_bounded(found: Bootstrapped, *, too_few: str | None = None) -> Bounded:
    """A statistic's bootstrap interval, or none and why: too few informative cases (the
    caller's ``too_few`` reason), fewer than two cases, most resamples without a value,
    or every resample alike (a zero-width interval).
    """
    if too_few is not None:
        return Bounded(NO_INTERVAL, too_few)
    if found.clusters < 2:
        return Bounded(NO_INTERVAL, reason(NoIntervalKind.ONE_CASE, "nothing to resample"))
    low, high = found.ci
    if low is None or high is None:
        undefined = found.resamples - found.kept
        return Bounded(
            NO_INTERVAL,
            reason(
                NoIntervalKind.UNDEFINED_RESAMPLES,
                f"{undefined} of {found.resamples} bootstrap resamples have no value",
            ),
        )
    if low == high:
        return Bounded(
            NO_INTERVAL,
            reason(NoIntervalKind.SAME_RESAMPLES, f"every bootstrap resample gives {low:.3g}"),
        )
    return Bounded((low, high))


def too_few_informative(
    sides: Mapping[str, Sequence[Hashable]], case_ids: Sequence[Hashable], *, what: str
) -> str | None:
    """Why a statistic of two raters' values (κ, a correlation) has too few informative
    cases: a side with fewer than ``MIN_INFORMATIVE`` cases off its most common value.
    None when every side has enough.

    Args:
        sides: Each side's value per row ("judge" → its scores), rows aligned with
            ``case_ids``; a case may have several rows (several labels).
        case_ids: Each row's case: a case counts once, off the most common value when any
            of its rows is.
        what: What a value is, for the reason ("score", "label").
    """
    cases = len(set(case_ids))
    for side, values in sides.items():
        if not values:
            continue
        common, _ = Counter(values).most_common(1)[0]
        off = len({case for case, v in zip(case_ids, values, strict=True) if v != common})
        if off < MIN_INFORMATIVE:
            return reason(
                NoIntervalKind.TOO_FEW_INFORMATIVE,
                f"the {side}'s {what} is {shown(common)} on {cases - off} of {cases} cases "
                f"(an interval needs {MIN_INFORMATIVE} cases off each side's most common)",
            )
    return None


def shown(value: Hashable) -> str:
    """A value in a reason: 3.0 as "3", a label quoted."""
    if isinstance(value, float):
        return f"{value:g}"
    return repr(value) if isinstance(value, str) else str(value)
