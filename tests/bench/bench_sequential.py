"""`make bench`: the sequential gate's error rates, cases to a decision, and speed.

Not a test: it prints what it measured beside the targets. α = 0.05, threshold 0.55 (a
floor: "NEW's win rate is at least 0.55"), runs of up to 2,000 cases, the gate checked
after every case and stopped at its first decision.

1. False passes: the truth exactly at the threshold (win/tie/loss 0.45/0.2/0.35, and a
   plain Bernoulli(0.55)), 2,000 runs each. Target: ever-PASS rate at most α, with its
   Wilson 95% interval. For contrast, the same runs with a fixed-n 95% Wilson interval
   recomputed after every case (what not to do).
2. Power: truth 0.65 (win/tie/loss 0.55/0.2/0.25, and Bernoulli(0.65)), 2,000 runs each:
   the share that pass, mean and p90 cases to the pass, and how often the interval at
   the stop contains 0.65 (target >= 95%).
3. Time per update of ``BettingCS`` (1,001 grid points plus the threshold), and per
   sequence-step of the vectorised simulation path.

The simulations use a grid of 50 steps: the decision depends on the capital at the
threshold, which is always a candidate mean exactly, so the grid only moves the reported
interval ends (tests/unit/stats/test_sequential.py checks decisions are unchanged at 1000).
"""

from __future__ import annotations

import time

import numpy as np

from judgecli.stats.intervals import wilson_interval
from judgecli.stats.sequential import BettingCS, _run_batch

ALPHA = 0.05
THRESHOLD = 0.55
SEEDS = 2000
STEPS = 2000
GRID = 50
OUTCOMES = np.array([1.0, 0.5, 0.0])
NULL = {"win/tie/loss .45/.2/.35": [0.45, 0.2, 0.35], "Bernoulli(0.55)": [0.55, 0.0, 0.45]}
GOOD = {"win/tie/loss .55/.2/.25": [0.55, 0.2, 0.25], "Bernoulli(0.65)": [0.65, 0.0, 0.35]}


def draw(p: list[float], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).choice(OUTCOMES, size=(SEEDS, STEPS), p=p)


def percent_interval(successes: int, n: int) -> str:
    low, high = wilson_interval(successes, n)
    assert low is not None
    assert high is not None
    return f"{successes / n:6.2%}  [{low:.2%}, {high:.2%}]"


def naive_false_passes(xs: np.ndarray) -> int:
    """Runs whose fixed-n 95% Wilson interval is ever wholly above the threshold."""
    n = np.arange(1, xs.shape[1] + 1)
    p = np.cumsum(xs, axis=1) / n
    z2 = 1.959963984540054**2
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) * np.sqrt(z2) / (1 + z2 / n)
    return int(np.any(centre - half > THRESHOLD, axis=1).sum())


def bench_false_passes() -> None:
    print(f"false passes: truth = threshold = {THRESHOLD}, {SEEDS} runs of <= {STEPS} cases")
    print(f"  {'truth':<26} {'ever PASS [Wilson 95%]':<30} {'ever FAIL':>9} {'naive':>8}")
    for i, (name, p) in enumerate(NULL.items()):
        xs = draw(p, 1000 + i)
        runs = _run_batch(xs, THRESHOLD, alpha=ALPHA, grid=GRID)
        passes = int(np.sum(runs.decision == 1))
        fails = float(np.mean(runs.decision == -1))
        naive = naive_false_passes(xs) / SEEDS
        print(f"  {name:<26} {percent_interval(passes, SEEDS):<30} {fails:9.2%} {naive:8.2%}")
    print(f"  (target: ever PASS <= {ALPHA:.0%}; naive = a fixed-n Wilson interval checked")
    print("   after every case, for contrast)")


def bench_power() -> None:
    print(f"power: truth 0.65 vs threshold {THRESHOLD}, {SEEDS} runs of <= {STEPS} cases")
    print(f"  {'truth':<26} {'PASS':>7} {'mean':>6} {'p90':>6} {'coverage at stop [Wilson]':>30}")
    for i, (name, p) in enumerate(GOOD.items()):
        runs = _run_batch(draw(p, 2000 + i), THRESHOLD, alpha=ALPHA, grid=GRID, points=[0.65])
        passed = runs.decision == 1
        cases = runs.decided_after[passed]
        covered = int(np.sum((runs.low <= 0.65) & (runs.high >= 0.65)))
        print(
            f"  {name:<26} {passed.mean():7.2%} {cases.mean():6.0f} "
            f"{np.quantile(cases, 0.9):6.0f} {percent_interval(covered, SEEDS):>30}"
        )
    print(f"  (target: coverage >= {1 - ALPHA:.0%})")


def bench_speed() -> None:
    rng = np.random.default_rng(3)
    xs = rng.choice(OUTCOMES, size=STEPS, p=[0.45, 0.2, 0.35]).tolist()
    best = float("inf")
    for _ in range(3):
        cs = BettingCS(alpha=ALPHA, points=[THRESHOLD])
        start = time.perf_counter()
        for x in xs:
            cs.update(x)
        best = min(best, (time.perf_counter() - start) / len(xs))
    print(f"BettingCS.update, grid 1000: {best * 1e6:.0f} µs per update (best of 3 x {STEPS})")
    batch = rng.choice(OUTCOMES, size=(1000, STEPS), p=[0.45, 0.2, 0.35])
    start = time.perf_counter()
    runs = _run_batch(batch, THRESHOLD, alpha=ALPHA, grid=GRID)
    elapsed = time.perf_counter() - start
    steps = int(np.where(runs.decision == 0, STEPS, runs.decided_after).sum())
    print(
        f"vectorised path, grid {GRID}, 1000 runs: {elapsed:.2f} s, "
        f"{elapsed / steps * 1e6:.2f} µs per sequence-step"
    )


def main() -> None:
    bench_false_passes()
    bench_power()
    bench_speed()


if __name__ == "__main__":
    main()
