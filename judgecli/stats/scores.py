"""Pointwise scores: mean, distribution over the scale, pass rate, per-category breakdown.

Results are plain Python numbers; a statistic of no data is ``None`` (shown as "n/a").
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from judgecli.stats.interval_rule import mean_interval, proportion_interval
from judgecli.stats.intervals import FloatArray, Interval, Values

NO_CATEGORY = "(none)"
# Values this close (relative to the bin width) below a bin edge count in the upper bin,
# so 0.6 on a 0–1 scale lands in "0.60–0.80" despite 0.6 / 0.2 = 2.9999999999999996.
_EDGE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class CategoryStats:
    """Scores of the cases in one category.

    Attributes:
        n: Number of cases.
        mean: Mean score, ``None`` when ``n`` is 0.
        mean_ci: Student t 95% interval of the mean (``interval_rule.mean_interval``);
            ``(None, None)`` for fewer than two cases or when every score is the same.
        pass_rate: Share of cases that passed, among those with a pass/fail outcome.
        pass_rate_ci: Wilson 95% interval of the pass rate.
        mean_ci_why: Why ``mean_ci`` is ``(None, None)`` while ``mean`` has a value.
    """

    n: int
    mean: float | None
    mean_ci: Interval
    pass_rate: float | None
    pass_rate_ci: Interval
    mean_ci_why: str | None = None


def mean(values: Values) -> float | None:
    """Arithmetic mean Σxᵢ / n, or ``None`` for no values."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return None
    return float(data.mean())


def pass_rate(passed: Sequence[bool]) -> float | None:
    """Share of cases that passed: #True / n, or ``None`` for no cases."""
    return mean(passed)


def distribution(
    values: Values, *, scale_min: float, scale_max: float, integer: bool, bins: int = 5
) -> dict[str, int]:
    """Count of scores per scale value (integer scales) or per equal-width bin.

    Integer scales get one key per scale point, ``str(int(v))`` from ``scale_min`` to
    ``scale_max`` inclusive, zero counts included (``{"1": 0, "2": 3, ...}``).
    Continuous scales get ``bins`` equal-width bins labelled with their edges to two
    decimals (``"0.00–0.20"``, en dash); each bin holds [low, high) except the last,
    which also holds ``scale_max``. No values gives all-zero counts.

    Raises:
        ValueError: If a value lies outside the scale, an integer scale gets a
            non-integer value or has non-integer bounds, or ``scale_max <= scale_min``.
    """
    if not scale_max > scale_min:
        raise ValueError(f"scale_max must exceed scale_min, got {scale_min}..{scale_max}")
    data = np.asarray(values, dtype=np.float64).ravel()
    outside = data[(data < scale_min) | (data > scale_max)]
    if outside.size:
        raise ValueError(f"score {outside[0]:g} is outside the scale {scale_min:g}..{scale_max:g}")
    if integer:
        return _integer_distribution(data, scale_min, scale_max)
    width = (scale_max - scale_min) / bins
    index = np.floor((data - scale_min) / width + _EDGE_TOLERANCE).astype(np.int64)
    counts = np.bincount(np.minimum(index, bins - 1), minlength=bins)
    edges = [scale_min + i * width for i in range(bins)] + [scale_max]
    return {f"{edges[i]:.2f}–{edges[i + 1]:.2f}": int(counts[i]) for i in range(bins)}


def _integer_distribution(data: FloatArray, scale_min: float, scale_max: float) -> dict[str, int]:
    low, high = int(scale_min), int(scale_max)
    if (low, high) != (scale_min, scale_max):
        raise ValueError(f"an integer scale needs integer bounds, got {scale_min}..{scale_max}")
    fractional = data[data != np.floor(data)]
    if fractional.size:
        raise ValueError(f"score {fractional[0]:g} is not a point of the integer scale")
    counts = np.bincount((data - low).astype(np.int64), minlength=high - low + 1)
    return {str(low + i): int(count) for i, count in enumerate(counts)}


def by_category(
    categories: Sequence[str | None],
    values: Sequence[float],
    passed: Sequence[bool | None],
    *,
    bounds: tuple[float, float] | None = None,
) -> dict[str, CategoryStats]:
    """Per-category n, mean (with t interval, clipped to ``bounds``) and pass rate (with
    Wilson interval).

    The three sequences are aligned by case. Cases without a category are grouped
    under ``"(none)"``; ``None`` in ``passed`` means the case has no pass/fail outcome
    and is left out of that category's pass rate only. Keys are sorted.

    Raises:
        ValueError: If the sequences differ in length.
    """
    if not len(categories) == len(values) == len(passed):
        raise ValueError(
            f"categories, values and passed differ in length: "
            f"{len(categories)}, {len(values)}, {len(passed)}"
        )
    groups: dict[str, list[int]] = {}
    for i, category in enumerate(categories):
        groups.setdefault(NO_CATEGORY if category is None else category, []).append(i)
    result: dict[str, CategoryStats] = {}
    for name in sorted(groups):
        members = groups[name]
        scores = [values[i] for i in members]
        outcomes = [flag for flag in (passed[i] for i in members) if flag is not None]
        spread = mean_interval(scores, bounds=bounds, what="score")
        result[name] = CategoryStats(
            n=len(members),
            mean=mean(scores),
            mean_ci=spread.ci,
            pass_rate=pass_rate(outcomes),
            pass_rate_ci=proportion_interval(sum(outcomes), len(outcomes)),
            mean_ci_why=spread.why,
        )
    return result
