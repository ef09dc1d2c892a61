"""Per-case checklists scored as HealthBench scores them (openai/simple-evals,
`healthbench_eval.py`: `calculate_score`, `_compute_clipped_stats`, and the per-tag scores
of `grade_sample`), so a checklist run's numbers are comparable with published HealthBench
numbers. tests/unit/stats/test_checklist.py pins them against that code's own output.

- A case's score is the points of its met items over its positive points,
  Σ_met pᵢ / Σ_{pᵢ>0} pᵢ, **not clipped**: an answer that does what must not happen scores
  below 0 (it is at most 1).
- The overall score is the mean of the case scores clipped to [0, 1] (the mean, not each
  case: a case below 0 pulls the others down).
- A tag's score is the same ratio over each case's items with that tag (a case whose items
  under the tag have no positive points has none), then their clipped mean.
- simple-evals gives each a bootstrap standard deviation: the std (ddof 0) of the clipped
  means of 1,000 resamples drawn with `np.random.choice` from the global generator. Here the
  draws come from `np.random.RandomState(seed)`, the generator `np.random.seed(seed)` seeds,
  drawn in the same order, so the value is simple-evals' own after `np.random.seed(seed)`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from judgecli.stats.intervals import CHUNK_BYTES, Values

BOOTSTRAP_RESAMPLES = 1000
"""simple-evals' resamples for the bootstrap standard deviation."""

Item = tuple[float, bool, Sequence[str]]
"""One graded checklist item: its points, whether it was met, its tags."""


def case_score(points: Sequence[float], met: Sequence[bool]) -> float | None:
    """Σ points of the met items / Σ positive points (HealthBench's `calculate_score`), not
    clipped; None when no item has positive points (a tag's items may have none).
    """
    if len(points) != len(met):
        raise ValueError(f"{len(points)} items' points but {len(met)} verdicts")
    possible = math.fsum(p for p in points if p > 0)
    if possible == 0:
        return None
    return math.fsum(p for p, m in zip(points, met, strict=True) if m) / possible


def clipped_mean(values: Values) -> float | None:
    """The mean of the values clipped to [0, 1] (None for none): HealthBench's overall score
    of its case scores.
    """
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return None
    return float(np.clip(np.mean(data), 0.0, 1.0))


def clipped_mean_bootstrap_std(
    values: Values, *, seed: int = 0, resamples: int = BOOTSTRAP_RESAMPLES
) -> float | None:
    """simple-evals' bootstrap standard deviation of the clipped mean: the std (ddof 0) of
    the clipped means of `resamples` resamples of n values drawn with replacement, from
    `np.random.RandomState(seed)` in the order `np.random.choice` draws them (None for no
    values).
    """
    data = np.asarray(values, dtype=np.float64)
    n = data.size
    if n == 0:
        return None
    # The legacy generator on purpose: it is the one simple-evals draws from.
    rng = np.random.RandomState(seed)
    # RandomState.choice(a, n) draws randint(0, n, size=n); drawing a block of rows at once
    # takes the same numbers from the stream, row after row.
    rows = max(1, CHUNK_BYTES // (16 * n))
    means = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, rows):
        size = min(rows, resamples - start)
        indices = rng.randint(0, n, size=(size, n))
        means[start : start + size] = np.clip(data[indices].mean(axis=1), 0.0, 1.0)
    return float(np.std(means))


def tag_scores(cases: Iterable[Sequence[Item]]) -> dict[str, list[float]]:
    """Each tag's case scores: for every case, the score of its items with that tag (a case
    whose tagged items have no positive points gives none), in case order; tags in the order
    first seen.
    """
    found: dict[str, list[float]] = {}
    for items in cases:
        tags = list(dict.fromkeys(tag for _, _, item_tags in items for tag in item_tags))
        for tag in tags:
            tagged = [(p, m) for p, m, item_tags in items if tag in item_tags]
            score = case_score([p for p, _ in tagged], [m for _, m in tagged])
            scores = found.setdefault(tag, [])
            if score is not None:
                scores.append(score)
    return {tag: scores for tag, scores in found.items() if scores}
