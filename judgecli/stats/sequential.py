"""Anytime-valid sequential gate: a betting confidence sequence for a bounded mean.

Cases are judged one after another, in a random order. Each gives a value in [0, 1] (a
win rate's outcome 1 / 0.5 / 0, a pass 1 / 0, a score rescaled to [0, 1]); after each,
a confidence sequence (CS) for their mean is updated, and the gate stops as soon as the
CS lies wholly above its threshold (pass) or wholly below (fail). A confidence sequence
covers the mean at every time at once, P(∃t: μ ∉ CSₜ) ≤ α, so looking after every case
and stopping at the first decision does not inflate false passes, as repeatedly looking
at a fixed-n interval would.

The CS is the hedged-capital one with predictable plug-in bets of I. Waudby-Smith &
A. Ramdas (2024), "Estimating means of bounded random variables by betting", JRSS B
86(1), §4–5 (arXiv 2010.09686), as implemented by the authors' ``confseq`` package
(``confseq.betting.hedged_cs``, defaults θ = 1/2, ``trunc_scale`` = 1/2), which the tests
reproduce. For each candidate mean m::

    K⁺ₜ(m) = Πᵢ≤ₜ (1 + λ⁺ᵢ(m)(Xᵢ − m)),   K⁻ₜ(m) = Πᵢ≤ₜ (1 − λ⁻ᵢ(m)(Xᵢ − m))
    K±ₜ(m) = max(θ K⁺ₜ(m), (1 − θ) K⁻ₜ(m))            θ = 1/2
    λₜ     = √(2 log(2/α) / (σ̂²ₜ₋₁ · t · log(1 + t)))
    λ⁺ₜ(m) = min(λₜ, c/m),   λ⁻ₜ(m) = min(λₜ, c/(1 − m))   c = 1/2
    μ̂ₜ = (1/2 + Σᵢ≤ₜ Xᵢ) / (t + 1),   σ̂²ₜ = (1/4 + Σᵢ≤ₜ (Xᵢ − μ̂ᵢ)²) / (t + 1),  σ̂²₀ = 1/4

Under the mean m, K⁺ and K⁻ are nonnegative martingales starting at 1 (the bets are
predictable: λₜ uses data up to t − 1 only), and so is K±; by Ville's inequality
P(∃t: K±ₜ(m) ≥ 1/α) ≤ α, so m is rejected for good once K±ₜ(m) ≥ 1/α. The capital is
kept as sums of ``log1p`` terms. Each factor of K⁺ is nonincreasing in m and each factor
of K⁻ nondecreasing, so the m not rejected at time t form an interval; the running
intersection (a rejected m stays rejected) is then an interval too.

The candidate means are the ``grid + 1`` points 0, 1/grid, …, 1 plus any extra
``points`` the caller names (the thresholds), so the decision at a threshold is exact,
not up to the grid spacing. The reported interval is [smallest non-rejected point,
largest non-rejected point]; the continuous CS's ends lie at most one grid step beyond
them (in the gap to the nearest rejected point). If an observation would reject every
point, which Ville's inequality allows with probability at most α, the CS keeps its last
non-empty state from then on (it stops narrowing, so it can no longer decide).

Values are plain Python floats. Costs O(grid) numpy work per observation.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from math import isfinite, log

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

THETA = 0.5
"""Weight of the capital betting that the mean is above m (K⁺); 1 − θ goes to K⁻."""
TRUNCATION = 0.5
"""c: the bets are capped at c/m (K⁺) and c/(1 − m) (K⁻), so no factor falls below 1 − c."""
PRIOR_MEAN = 0.5
PRIOR_VARIANCE = 0.25
"""μ̂ and σ̂² start from one fake observation of mean 1/2 and variance 1/4."""

PASS_CODE, FAIL_CODE, UNDECIDED_CODE = 1, -1, 0


class Decision(StrEnum):
    """What the gate concluded about the mean against its threshold."""

    PASS = "pass"
    FAIL = "fail"
    UNDECIDED = "undecided"


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1 (exclusive), got {alpha}")


def _check_unit(value: float, name: str) -> None:
    if not (isfinite(value) and 0.0 <= value <= 1.0):
        raise ValueError(f"{name} must be in [0, 1], got {value}")


def _candidates(grid: int, points: Sequence[float]) -> FloatArray:
    """The sorted, distinct candidate means: k/grid for k = 0..grid, plus ``points``."""
    if isinstance(grid, bool) or not isinstance(grid, int | np.integer) or grid < 1:
        raise ValueError(f"grid must be a positive integer, got {grid!r}")
    for point in points:
        _check_unit(float(point), "a point")
    extra = np.asarray([float(p) for p in points], dtype=np.float64)
    # k / grid is correctly rounded, so 0.65 is exactly float("0.65") when grid = 100.
    evenly = np.arange(int(grid) + 1, dtype=np.float64) / float(grid)
    return np.unique(np.concatenate([evenly, extra]))


class _Capital:
    """Hedged capital of ``size`` independent sequences at the same candidate means.

    Arrays are (size, points); one observation per sequence per ``update``. ``BettingCS``
    is one sequence of these, and ``_run_batch`` runs thousands at once for simulations.
    """

    def __init__(self, size: int, *, alpha: float, candidates: FloatArray) -> None:
        _check_alpha(alpha)
        self.m = candidates
        with np.errstate(divide="ignore"):
            self.cap_positive = TRUNCATION / candidates  # inf at m = 0
            self.cap_negative = TRUNCATION / (1.0 - candidates)  # inf at m = 1
        self.bet_scale = 2.0 * log(2.0 / alpha)  # log(1/(αθ)) with θ = 1/2
        self.bar_positive = log(1.0 / alpha) - log(THETA)  # θK⁺ ≥ 1/α
        self.bar_negative = log(1.0 / alpha) - log(1.0 - THETA)  # (1 − θ)K⁻ ≥ 1/α
        shape = (size, candidates.size)
        self.log_positive: FloatArray = np.zeros(shape)
        self.log_negative: FloatArray = np.zeros(shape)
        self.rejected: BoolArray = np.zeros(shape, dtype=np.bool_)
        self.frozen: BoolArray = np.zeros(size, dtype=np.bool_)
        self.total: FloatArray = np.zeros(size)
        self.squares: FloatArray = np.zeros(size)
        self.variance: FloatArray = np.full(size, PRIOR_VARIANCE)  # σ̂²ₜ₋₁
        self.n = 0

    def update(self, x: FloatArray) -> None:
        """Take one observation per sequence (``x`` of shape (size,), already checked)."""
        t = self.n + 1
        bet = np.sqrt(self.bet_scale / (self.variance * t * np.log1p(t)))[:, None]
        deviation = x[:, None] - self.m
        self.log_positive += np.log1p(np.minimum(bet, self.cap_positive) * deviation)
        self.log_negative += np.log1p(-np.minimum(bet, self.cap_negative) * deviation)
        rejected = (
            self.rejected
            | (self.log_positive >= self.bar_positive)
            | (self.log_negative >= self.bar_negative)
        )
        self.frozen |= rejected.all(axis=1)
        self.rejected = np.where(self.frozen[:, None], self.rejected, rejected)
        self.n = t
        self.total += x
        mean = (PRIOR_MEAN + self.total) / (t + 1)
        self.squares += (x - mean) ** 2
        self.variance = (PRIOR_VARIANCE + self.squares) / (t + 1)

    def bounds(self) -> tuple[IntArray, IntArray]:
        """Indices of the smallest and largest non-rejected candidate of each sequence."""
        kept = ~self.rejected
        low = np.argmax(kept, axis=1)
        high = kept.shape[1] - 1 - np.argmax(kept[:, ::-1], axis=1)
        return low.astype(np.int64), high.astype(np.int64)

    def keep(self, rows: BoolArray) -> None:
        """Drop the sequences whose ``rows`` entry is False."""
        self.log_positive = self.log_positive[rows]
        self.log_negative = self.log_negative[rows]
        self.rejected = self.rejected[rows]
        self.frozen = self.frozen[rows]
        self.total = self.total[rows]
        self.squares = self.squares[rows]
        self.variance = self.variance[rows]


class BettingCS:
    """Mutable state of the hedged-capital CS; update with one observation at a time.

    Reference: Waudby-Smith & Ramdas (2024), JRSS B 86(1), §4–5 (the module docstring
    gives the formulas). Example: ``cs = BettingCS(points=[0.55]); cs.extend(outcomes);
    decide(cs.interval, 0.55)``.

    Args:
        alpha: The CS covers the mean at all times at once with probability ≥ 1 − alpha.
        grid: The candidate means include k/grid for k = 0..grid (1,001 points by default).
        points: Extra candidate means in [0, 1], e.g. thresholds, decided exactly.

    Raises:
        ValueError: If ``alpha`` is not in (0, 1), ``grid`` < 1 or a point is outside [0, 1].
    """

    def __init__(
        self, *, alpha: float = 0.05, grid: int = 1000, points: Sequence[float] = ()
    ) -> None:
        self._capital = _Capital(1, alpha=alpha, candidates=_candidates(grid, points))

    def update(self, x: float) -> None:
        """Add one observation.

        Raises:
            ValueError: If ``x`` is outside [0, 1] (or nan).
        """
        _check_unit(float(x), "an observation")
        self._capital.update(np.array([float(x)]))

    def extend(self, xs: Sequence[float]) -> None:
        """Add observations in order; all are checked first, so a bad one adds none.

        Raises:
            ValueError: If any value is outside [0, 1] (or nan).
        """
        values = [float(x) for x in xs]
        for x in values:
            _check_unit(x, "an observation")
        for x in values:
            self._capital.update(np.array([x]))

    @property
    def n(self) -> int:
        """Observations seen."""
        return self._capital.n

    @property
    def interval(self) -> tuple[float, float]:
        """(smallest, largest) non-rejected candidate mean; (0.0, 1.0) before any data."""
        low, high = self._capital.bounds()
        m = self._capital.m
        return (float(m[low[0]]), float(m[high[0]]))

    def excludes(self, m: float) -> bool:
        """Whether the mean ``m`` has been rejected (is outside the CS) by now.

        Exact for a candidate mean (a grid point or one of ``points``). A value between
        two candidates is reported excluded only when both are: then it is truly outside
        the continuous CS (the CS is an interval holding the surviving candidates), while
        in the gap next to a surviving candidate it might not be, and ``False`` is the
        conservative answer.

        Raises:
            ValueError: If ``m`` is outside [0, 1] (or nan).
        """
        _check_unit(float(m), "m")
        candidates = self._capital.m
        rejected = self._capital.rejected[0]
        index = int(np.searchsorted(candidates, m))
        if index < candidates.size and candidates[index] == m:
            return bool(rejected[index])
        return bool(rejected[index - 1] and rejected[index])


def confidence_sequence(
    xs: Sequence[float], *, alpha: float = 0.05, grid: int = 1000
) -> list[tuple[float, float]]:
    """The hedged-capital CS after each observation, as ``BettingCS`` gives it.

    Args:
        xs: Observations in [0, 1], in the order they arrived.
        alpha: Miscoverage allowed over the whole sequence.
        grid: The candidate means are k/grid for k = 0..grid.

    Returns:
        One ``(low, high)`` per observation; the intervals are nested.

    Raises:
        ValueError: If ``alpha`` is not in (0, 1) or a value is outside [0, 1].
    """
    cs = BettingCS(alpha=alpha, grid=grid)
    values = [float(x) for x in xs]
    for x in values:
        _check_unit(x, "an observation")
    intervals: list[tuple[float, float]] = []
    for x in values:
        cs.update(x)
        intervals.append(cs.interval)
    return intervals


def decide(cs_interval: tuple[float, float], threshold: float, *, minimum: bool = True) -> Decision:
    """Compare a confidence interval with a threshold.

    For a floor (``minimum=True``, e.g. "win rate at least 0.55"): PASS when the whole
    interval is above the threshold (low > threshold), FAIL when it is wholly below
    (high < threshold). For a ceiling (``minimum=False``, e.g. "loss rate at most 0.1"):
    PASS when high < threshold, FAIL when low > threshold. Otherwise UNDECIDED.

    Raises:
        ValueError: If low > high, or ``threshold`` is outside [0, 1].
    """
    low, high = cs_interval
    if not low <= high:
        raise ValueError(f"need low <= high, got {cs_interval}")
    _check_unit(float(threshold), "threshold")
    above, below = low > threshold, high < threshold
    if minimum:
        return Decision.PASS if above else Decision.FAIL if below else Decision.UNDECIDED
    return Decision.PASS if below else Decision.FAIL if above else Decision.UNDECIDED


@dataclass(frozen=True)
class SequentialRun:
    """The gate run on one sequence, stopped at its first decision.

    Attributes:
        decision: PASS, FAIL, or UNDECIDED when the data ran out first.
        decided_after: Observations taken when it decided; ``None`` if undecided.
        n: Observations seen (``decided_after``, or all of them when undecided).
        interval: The CS at the stop.
        bound: The interval end that decided: low for a floor's pass or a ceiling's fail,
            high for a floor's fail or a ceiling's pass; ``None`` if undecided.
    """

    decision: Decision
    decided_after: int | None
    n: int
    interval: tuple[float, float]
    bound: float | None


def run_sequential(
    xs: Sequence[float],
    threshold: float,
    *,
    alpha: float = 0.05,
    minimum: bool = True,
    grid: int = 1000,
) -> SequentialRun:
    """Run the gate over ``xs`` in order, stopping at the first decision.

    The threshold is a candidate mean of the CS, so the decision is exact. Checking after
    every observation keeps the false-pass rate at most ``alpha``: if the true mean is at
    or below a floor (at or above a ceiling), P(ever PASS) ≤ alpha.

    Args:
        xs: Observations in [0, 1], in the (random) order the cases were judged.
        threshold: The floor (``minimum=True``) or ceiling (``minimum=False``), in [0, 1].
        alpha: Allowed false-pass (and false-fail) probability.
        minimum: Whether the threshold is a floor or a ceiling; see ``decide``.
        grid: The other candidate means are k/grid for k = 0..grid.

    Raises:
        ValueError: For ``alpha`` not in (0, 1), or a threshold or value outside [0, 1].
    """
    data = np.asarray([float(x) for x in xs], dtype=np.float64)
    runs = _run_batch(
        data.reshape(1, data.size), threshold, alpha=alpha, minimum=minimum, grid=grid
    )
    interval = (float(runs.low[0]), float(runs.high[0]))
    code = int(runs.decision[0])
    if code == UNDECIDED_CODE:
        return SequentialRun(Decision.UNDECIDED, None, data.size, interval, None)
    decision = Decision.PASS if code == PASS_CODE else Decision.FAIL
    low_decided = (decision is Decision.PASS) == minimum
    after = int(runs.decided_after[0])
    return SequentialRun(decision, after, after, interval, interval[0 if low_decided else 1])


@dataclass(frozen=True)
class _BatchRuns:
    """Many gate runs: per sequence a decision code (1 pass, −1 fail, 0 undecided), the
    observations taken when decided (0 if undecided) and the CS at the stop.
    """

    decision: npt.NDArray[np.int8]
    decided_after: IntArray
    low: FloatArray
    high: FloatArray


def _run_batch(
    xs: FloatArray,
    threshold: float,
    *,
    alpha: float = 0.05,
    minimum: bool = True,
    grid: int = 1000,
    points: Sequence[float] = (),
) -> _BatchRuns:
    """``run_sequential`` on every row of ``xs`` (sequences × observations) at once.

    The simulations in the tests and the bench use it: O(rows × candidates) numpy work per
    observation, rows dropped as they decide. The decision depends on the grid only
    through the threshold, which is always a candidate, and through the (rare) case of
    an empty CS, so simulations may use a coarse ``grid``; ``points`` adds candidates
    (e.g. the true mean, to read coverage off the interval exactly).
    """
    _check_unit(float(threshold), "threshold")
    data = np.asarray(xs, dtype=np.float64)
    if data.ndim != 2:
        raise ValueError(f"xs must be 2-D (sequences, observations), got shape {data.shape}")
    if not np.all((data >= 0.0) & (data <= 1.0)):  # False for nan too
        raise ValueError("observations must be in [0, 1]")
    size, steps = data.shape
    candidates = _candidates(grid, [threshold, *points])
    capital = _Capital(size, alpha=alpha, candidates=candidates)
    decision = np.zeros(size, dtype=np.int8)
    decided_after = np.zeros(size, dtype=np.int64)
    low = np.zeros(size)
    high = np.ones(size)
    active = np.arange(size)
    for step in range(steps):
        if active.size == 0:
            break
        capital.update(data[active, step])
        low_index, high_index = capital.bounds()
        low[active] = candidates[low_index]
        high[active] = candidates[high_index]
        above = low[active] > threshold
        below = high[active] < threshold
        passed, failed = (above, below) if minimum else (below, above)
        done = passed | failed
        if done.any():
            finished = active[done]
            decision[finished] = np.where(passed[done], PASS_CODE, FAIL_CODE)
            decided_after[finished] = step + 1
            active = active[~done]
            capital.keep(~done)
    return _BatchRuns(decision, decided_after, low, high)
