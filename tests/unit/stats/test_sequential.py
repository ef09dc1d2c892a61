"""The betting confidence sequence and the sequential gate (judgecli.stats.sequential).

Oracles: the authors' ``confseq`` package (0.0.11, ``confseq.betting.hedged_cs`` with its
defaults, run once outside the test suite; its pure-Python betting module was loaded from
the sdist with matplotlib and multiprocess stubbed out), whose intervals are pinned
below, and an independent scalar re-implementation written here from the paper's
formulas, itself pinned to confseq's capital values. confseq widens its grid interval by
one grid step on each side (``cs_from_martingale``: l − 1/breaks, u + 1/breaks); ours
reports the surviving grid points themselves, so the pins are confseq's l + 0.001 and
u − 0.001.

The simulations (anytime validity, power, coverage at the stop) use ``_run_batch``, the
vectorised path ``run_sequential`` itself runs on, with a coarse grid: the decision only
depends on the capital at the threshold, which is always a candidate mean
(``test_decisions_do_not_depend_on_the_grid`` checks).
"""

from __future__ import annotations

from math import log, sqrt

import numpy as np
import pytest

from judgecli.stats.intervals import wilson_interval
from judgecli.stats.sequential import (
    BettingCS,
    Decision,
    SequentialRun,
    _BatchRuns,
    _run_batch,
    confidence_sequence,
    decide,
    run_sequential,
)

ALPHA = 0.05
THRESHOLD = 0.55
SEEDS = 2000
STEPS = 2000
SIM_GRID = 50

SHORT = [1, 0.5, 1, 1, 0, 1, 0.5, 1, 1, 1, 0, 1, 1, 0.5, 1, 1, 1, 0, 1, 1]
# confseq.betting.hedged_cs(SHORT, alpha=0.05, breaks=1000), l + 0.001 and u - 0.001.
SHORT_LOW = [0, 0, 0.138, 0.211, 0.211, 0.229, 0.255, 0.304, 0.347, 0.386]
SHORT_LOW += [0.386, 0.386, 0.411, 0.416, 0.443, 0.467, 0.49, 0.49, 0.49, 0.495]
SHORT_HIGH = [1.0] * 10 + [0.979, 0.979, 0.979, 0.966, 0.966, 0.966, 0.966, 0.95, 0.95, 0.95]
# log of confseq.betting.betting_mart(SHORT, m, alpha=0.05, theta=0.5) at t = 1, 5, 10, 20.
SHORT_LOG_CAPITAL = {
    0.3: [0.080043, 1.220957, 4.592811, 7.85899],
    0.5: [-0.287682, -0.169899, 1.451961, 2.879932],
    0.65: [-0.454736, -0.793664, 0.037378, 0.197359],
    0.9: [-0.63908, 0.067995, -0.165214, 0.959783],
}
# 200 scores in [0, 0.8): 0.8 × the fractional part of k·φ⁻¹, rounded to 6 decimals.
GOLDEN = [round((k * 0.6180339887498949) % 1.0 * 0.8, 6) for k in range(1, 201)]
# confseq.betting.hedged_cs(GOLDEN, alpha, breaks=1000) at t, as (l + 0.001, u - 0.001).
GOLDEN_PINS = {
    (0.05, 10): (0.191, 0.697),
    (0.05, 50): (0.308, 0.497),
    (0.05, 100): (0.334, 0.467),
    (0.05, 200): (0.352, 0.448),
    (0.2, 10): (0.246, 0.621),
    (0.2, 50): (0.327, 0.471),
    (0.2, 100): (0.347, 0.451),
    (0.2, 200): (0.361, 0.437),
}


# An independent scalar re-implementation, straight from Waudby-Smith & Ramdas (2024),
# §4-5: hedged capital with predictable plug-in bets, θ = 1/2, c = 1/2.
def oracle_log_capital(xs: list[float], m: float, alpha: float) -> list[float]:
    """log K±_t(m) for t = 1..n."""
    variance, total, squares = 0.25, 0.0, 0.0
    log_pos = log_neg = 0.0
    out = []
    for t, x in enumerate(xs, start=1):
        lam = sqrt(2 * log(2 / alpha) / (variance * t * log(1 + t)))
        lam_pos = lam if m == 0 else min(lam, 0.5 / m)
        lam_neg = lam if m == 1 else min(lam, 0.5 / (1 - m))
        log_pos += log(1 + lam_pos * (x - m))
        log_neg += log(1 - lam_neg * (x - m))
        out.append(max(log(0.5) + log_pos, log(0.5) + log_neg))
        total += x
        mu = (0.5 + total) / (t + 1)
        squares += (x - mu) ** 2
        variance = (0.25 + squares) / (t + 1)
    return out


def oracle_cs(xs: list[float], alpha: float, grid: int) -> list[tuple[float, float]]:
    """The running-intersection CS on the grid k/grid, from each m's first rejection."""
    grid_points = [k / grid for k in range(grid + 1)]
    first = []
    for m in grid_points:
        capital = oracle_log_capital(xs, m, alpha)
        hits = [t for t, c in enumerate(capital, start=1) if c >= log(1 / alpha)]
        first.append(hits[0] if hits else len(xs) + 1)
    out = []
    for t in range(1, len(xs) + 1):
        alive = [m for m, f in zip(grid_points, first, strict=True) if f > t]
        out.append((min(alive), max(alive)))
    return out


# 1. Reference values


def test_oracle_matches_confseq_capital():
    for m, pinned in SHORT_LOG_CAPITAL.items():
        capital = oracle_log_capital(SHORT, m, ALPHA)
        assert [capital[t - 1] for t in (1, 5, 10, 20)] == pytest.approx(pinned, abs=1e-5)


def test_short_sequence_matches_confseq():
    intervals = confidence_sequence(SHORT, alpha=ALPHA)
    assert [low for low, _ in intervals] == pytest.approx(SHORT_LOW, abs=1e-12)
    assert [high for _, high in intervals] == pytest.approx(SHORT_HIGH, abs=1e-12)
    assert all(type(v) is float for interval in intervals for v in interval)


@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_scores_match_confseq(alpha):
    intervals = confidence_sequence(GOLDEN, alpha=alpha)
    for (a, t), pinned in GOLDEN_PINS.items():
        if a == alpha:
            assert intervals[t - 1] == pytest.approx(pinned, abs=1e-12)


@pytest.mark.parametrize(
    ("seed", "alpha"), [(0, 0.05), (1, 0.1), (2, 0.01)], ids=["ternary", "scores", "bernoulli"]
)
def test_matches_scalar_oracle(seed, alpha):
    rng = np.random.default_rng(seed)
    xs = {
        0: rng.choice([0.0, 0.5, 1.0], size=150, p=[0.3, 0.2, 0.5]),
        1: rng.beta(2.0, 3.0, size=150),
        2: rng.binomial(1, 0.8, size=150).astype(float),
    }[seed].tolist()
    np.testing.assert_allclose(
        np.array(confidence_sequence(xs, alpha=alpha, grid=200)),
        np.array(oracle_cs(xs, alpha, 200)),
        atol=1e-12,
    )


def test_interval_before_data_and_nesting():
    cs = BettingCS()
    assert cs.n == 0
    assert cs.interval == (0.0, 1.0)
    assert not cs.excludes(0.0)
    assert not cs.excludes(0.5)
    rng = np.random.default_rng(5)
    intervals = confidence_sequence(rng.uniform(0.2, 0.9, 600).tolist())
    for (low, high), (next_low, next_high) in zip(intervals, intervals[1:], strict=False):
        assert low <= next_low <= next_high <= high
    assert intervals[-1][1] - intervals[-1][0] < 0.2
    assert intervals[-1][0] < 0.55 < intervals[-1][1]


def test_update_and_extend_agree_with_confidence_sequence():
    one, many = BettingCS(points=[0.4321]), BettingCS(points=[0.4321])
    for x in SHORT:
        one.update(x)
    many.extend(SHORT)
    assert one.n == many.n == len(SHORT)
    assert one.interval == many.interval == confidence_sequence(SHORT)[-1]


def test_excludes_exact_on_candidates_and_conservative_between():
    cs = BettingCS(grid=10, points=[0.55])
    cs.extend([1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0])
    low, high = cs.interval
    assert (low, high) == (0.55, 1.0)
    assert cs.excludes(0.5)  # a grid point below low
    assert not cs.excludes(0.55)  # the extra point, surviving
    assert not cs.excludes(0.7)
    assert not cs.excludes(0.52)  # between 0.5 (rejected) and 0.55 (kept): can't tell
    assert cs.excludes(0.45)  # between 0.4 and 0.5, both rejected
    assert not cs.excludes(0.95)


def test_every_point_rejected_keeps_the_last_interval():
    # Not i.i.d.: 40 wins then only losses. The CS narrows onto the seam, then an update
    # would reject every point; it keeps the last non-empty interval from then on.
    cs = BettingCS()
    cs.extend([1.0] * 40 + [0.0] * 120)
    last = cs.interval
    assert last[0] <= last[1]
    cs.extend([0.0] * 100)
    assert cs.n == 260
    assert cs.interval == last


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5])
def test_bad_alpha_raises(alpha):
    with pytest.raises(ValueError, match="alpha"):
        BettingCS(alpha=alpha)
    with pytest.raises(ValueError, match="alpha"):
        run_sequential([1.0], 0.5, alpha=alpha)


@pytest.mark.parametrize("x", [-0.01, 1.01, float("nan"), float("inf")])
def test_bad_observation_raises(x):
    cs = BettingCS()
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        cs.update(x)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        cs.extend([0.5, x])
    assert cs.n == 0  # extend checks everything before adding anything
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        confidence_sequence([0.5, x])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        run_sequential([0.5, x], 0.5)


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="grid"):
        BettingCS(grid=0)
    with pytest.raises(ValueError, match="point"):
        BettingCS(points=[1.2])
    with pytest.raises(ValueError, match="m must"):
        BettingCS().excludes(-0.5)
    with pytest.raises(ValueError, match="threshold"):
        run_sequential([0.5], 1.5)
    with pytest.raises(ValueError, match="threshold"):
        decide((0.2, 0.4), float("nan"))
    with pytest.raises(ValueError, match="low <= high"):
        decide((0.6, 0.4), 0.5)


# 5. decide() and run_sequential


@pytest.mark.parametrize(
    ("interval", "minimum", "expected"),
    [
        ((0.6, 0.8), True, Decision.PASS),
        ((0.3, 0.5), True, Decision.FAIL),
        ((0.5, 0.6), True, Decision.UNDECIDED),
        ((0.55, 0.7), True, Decision.UNDECIDED),  # low == threshold: not above it
        ((0.4, 0.55), True, Decision.UNDECIDED),
        ((0.3, 0.5), False, Decision.PASS),
        ((0.6, 0.8), False, Decision.FAIL),
        ((0.5, 0.6), False, Decision.UNDECIDED),
        ((0.4, 0.55), False, Decision.UNDECIDED),
    ],
)
def test_decide(interval, minimum, expected):
    assert decide(interval, 0.55, minimum=minimum) is expected


def test_run_sequential_stops_at_the_first_decision():
    run = run_sequential(SHORT, 0.4)
    # From the pins above: low first exceeds 0.4 after 13 observations (0.411).
    assert run == SequentialRun(Decision.PASS, 13, 13, (0.411, 0.979), 0.411)
    assert isinstance(run.decided_after, int)
    assert type(run.bound) is float


@pytest.mark.parametrize("minimum", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_run_sequential_matches_a_step_by_step_loop(seed, minimum):
    rng = np.random.default_rng(100 + seed)
    xs = rng.choice([0.0, 0.5, 1.0], size=800, p=[0.3, 0.2, 0.5]).tolist()
    threshold = [0.55, 0.6, 0.65, 0.7, 0.45, 0.6123][seed]
    cs = BettingCS(points=[threshold])
    expected = None
    for t, x in enumerate(xs, start=1):
        cs.update(x)
        decision = decide(cs.interval, threshold, minimum=minimum)
        if decision is not Decision.UNDECIDED:
            expected = (decision, t, cs.interval)
            break
    run = run_sequential(xs, threshold, minimum=minimum)
    if expected is None:
        assert run == SequentialRun(Decision.UNDECIDED, None, len(xs), cs.interval, None)
    else:
        decision, t, interval = expected
        assert (run.decision, run.decided_after, run.n, run.interval) == (decision, t, t, interval)
        low_decides = (decision is Decision.PASS) == minimum
        assert run.bound == interval[0 if low_decides else 1]
        if low_decides:
            assert run.bound > threshold
        else:
            assert run.bound < threshold


def test_fails_when_the_truth_is_well_below():
    rng = np.random.default_rng(9)
    xs = rng.binomial(1, 0.35, size=2000).astype(float).tolist()
    run = run_sequential(xs, THRESHOLD)
    assert run.decision is Decision.FAIL
    assert run.bound is not None
    assert run.bound == run.interval[1] < THRESHOLD
    assert run.decided_after is not None
    assert run.decided_after < 300
    # The same data against a ceiling of 0.55 is a pass.
    ceiling = run_sequential(xs, THRESHOLD, minimum=False)
    assert ceiling.decision is Decision.PASS
    assert ceiling.decided_after == run.decided_after


def test_undecided_and_empty():
    assert run_sequential([], 0.5) == SequentialRun(Decision.UNDECIDED, None, 0, (0.0, 1.0), None)
    run = run_sequential([0.5] * 10, 0.5)
    assert run.decision is Decision.UNDECIDED
    assert run.decided_after is None
    assert run.n == 10
    assert run.bound is None


def test_decisions_do_not_depend_on_the_grid():
    rng = np.random.default_rng(21)
    for p in ([0.45, 0.2, 0.35], [0.55, 0.2, 0.25], [0.3, 0.2, 0.5]):
        xs = rng.choice([1.0, 0.5, 0.0], size=(25, STEPS), p=p)
        coarse = _run_batch(xs, THRESHOLD, grid=SIM_GRID)
        fine = _run_batch(xs, THRESHOLD, grid=1000)
        np.testing.assert_array_equal(coarse.decision, fine.decision)
        np.testing.assert_array_equal(coarse.decided_after, fine.decided_after)


def test_batch_rows_match_run_sequential():
    rng = np.random.default_rng(22)
    xs = rng.choice([1.0, 0.5, 0.0], size=(8, 600), p=[0.55, 0.2, 0.25])
    batch = _run_batch(xs, THRESHOLD)
    for row in range(xs.shape[0]):
        run = run_sequential(xs[row].tolist(), THRESHOLD)
        code = {Decision.PASS: 1, Decision.FAIL: -1, Decision.UNDECIDED: 0}[run.decision]
        assert batch.decision[row] == code
        assert batch.decided_after[row] == (run.decided_after or 0)
        assert (batch.low[row], batch.high[row]) == run.interval


# 2-4. Simulations: anytime validity, power, coverage at the stop


OUTCOMES = np.array([1.0, 0.5, 0.0])
NULL = {"ternary": [0.45, 0.2, 0.35], "bernoulli": [0.55, 0.0, 0.45]}  # mean 0.55
GOOD = {"ternary": [0.55, 0.2, 0.25], "bernoulli": [0.65, 0.0, 0.35]}  # mean 0.65


def simulate(p: list[float], seed: int, truth: float) -> _BatchRuns:
    xs = np.random.default_rng(seed).choice(OUTCOMES, size=(SEEDS, STEPS), p=p)
    assert abs(float(OUTCOMES @ np.asarray(p)) - truth) < 1e-12
    return _run_batch(xs, THRESHOLD, alpha=ALPHA, grid=SIM_GRID, points=[truth])


@pytest.fixture(scope="module")
def null_runs():
    return {name: simulate(p, 1000 + i, 0.55) for i, (name, p) in enumerate(NULL.items())}


@pytest.fixture(scope="module")
def good_runs():
    return {name: simulate(p, 2000 + i, 0.65) for i, (name, p) in enumerate(GOOD.items())}


@pytest.mark.parametrize("name", list(NULL))
def test_anytime_validity_at_the_threshold(null_runs, name):
    runs = null_runs[name]
    passes = int(np.sum(runs.decision == 1))
    fails = int(np.sum(runs.decision == -1))
    rate = passes / SEEDS
    low, high = wilson_interval(passes, SEEDS)
    assert low is not None
    assert high is not None
    print(
        f"\n{name}, truth = threshold = {THRESHOLD}, {SEEDS} runs of up to {STEPS} cases, "
        f"checked after every case: ever PASS {rate:.2%} (Wilson 95% {low:.2%}-{high:.2%}), "
        f"ever FAIL {fails / SEEDS:.2%}"
    )
    assert rate <= ALPHA
    assert high < ALPHA  # not merely at most α by luck: clearly below it
    # The CS holds the truth at all times at once with probability >= 1 - α, so leaving it
    # either way (a false PASS or a false FAIL) happens in at most α of runs, up to noise.
    assert (passes + fails) / SEEDS <= ALPHA + 0.01


@pytest.mark.parametrize("name", list(GOOD))
def test_power_at_065(good_runs, name):
    runs = good_runs[name]
    passed = runs.decision == 1
    cases = runs.decided_after[passed]
    mean, p90 = float(cases.mean()), float(np.quantile(cases, 0.9))
    print(
        f"\n{name}, truth 0.65 vs threshold {THRESHOLD}: PASS {passed.mean():.2%} of "
        f"{SEEDS} runs, cases to a pass: mean {mean:.0f}, median {np.median(cases):.0f}, "
        f"p90 {p90:.0f}, max {cases.max()}"
    )
    assert passed.mean() >= 0.95
    assert mean < 1000
    assert p90 < 1500
    assert np.sum(runs.decision == -1) <= 0.01 * SEEDS


@pytest.mark.parametrize("name", list(GOOD))
def test_coverage_at_the_stopping_time(good_runs, name):
    runs = good_runs[name]
    covered = (runs.low <= 0.65) & (runs.high >= 0.65)
    low, high = wilson_interval(int(covered.sum()), SEEDS)
    print(
        f"\n{name}: interval at the stop contains 0.65 in {covered.mean():.2%} of runs "
        f"(Wilson 95% {low:.2%}-{high:.2%})"
    )
    assert covered.mean() >= 1 - ALPHA
