"""`make bench`: `judge plan`'s sizes against the gates they size, over many seeds (issue 35).

Not a test: it prints what it measured beside the target. For a grid of floors, true rates,
tie shares and powers, the planned n of each fixed-n gate (the point; the lower end of the
normal interval, a win rate's; Wilson's, a pass rate's) is simulated 20,000 times: the
share that passes should be the power asked, within ±2 points (the point gate's below
about 100 cases saws around it by a few points: its mean lies on a lattice). The sequential gate's
planned p95 is checked by 2,000 fresh runs given that many cases: about 95% decide.
The short versions are in tests/unit/stats/test_sizing.py.
"""

from __future__ import annotations

import math

import numpy as np

from judgecli.stats.sizing import (
    fixed_cases,
    one_sided_z,
    outcome_sd,
    rate_cases,
    sequential_stops,
)

REPS = 20_000
CASES = [
    # floor, true rate, tie share, power
    (0.50, 0.55, 0.0, 0.8),
    (0.55, 0.60, 0.2, 0.8),
    (0.55, 0.65, 0.4, 0.9),
    (0.70, 0.80, 0.0, 0.8),
    (0.80, 0.90, 0.0, 0.9),
    (0.20, 0.30, 0.1, 0.8),
]


def passes(n: int, mean: float, ties: float, floor: float, rule: str, seed: int) -> float:
    rng = np.random.default_rng(seed)
    wins = mean - ties / 2
    shares = []
    for _ in range(REPS // 1000):
        draw = rng.random((1000, n))
        x = np.where(draw < wins, 1.0, np.where(draw < wins + ties, 0.5, 0.0))
        m = x.mean(axis=1)
        z = one_sided_z(0.975)
        if rule == "normal":
            m = m - z * x.std(axis=1, ddof=1) / math.sqrt(n)
        elif rule == "wilson":
            centre = (m + z * z / (2 * n)) / (1 + z * z / n)
            m = centre - z / (1 + z * z / n) * np.sqrt(m * (1 - m) / n + z * z / (4 * n * n))
        shares.append(float((m >= floor - 1e-12).mean()))
    return float(np.mean(shares))


def main() -> None:
    worst = 0.0
    for floor, rate, ties, power in CASES:
        sd = outcome_sd(rate, ties)
        sizes = {
            "point": fixed_cases(delta=rate - floor, sd=sd, power=power, alpha=0.05, bound=False),
            "normal": rate_cases(
                floor=floor, effect=rate, tie_share=ties, power=power, alpha=0.05, wilson=False
            ),
        }
        if ties == 0:
            sizes["wilson"] = rate_cases(
                floor=floor, effect=rate, tie_share=0, power=power, alpha=0.05, wilson=True
            )
        for rule, n in sizes.items():
            found = passes(n, rate, ties, floor, rule, seed=n)
            worst = max(worst, abs(found - power))
            print(
                f"floor {floor} rate {rate} ties {ties} power {power} {rule:>6}: n {n:5d} "
                f"passes {found:.3f} (off {found - power:+.3f})"
            )
        stops = sequential_stops(mean=rate, tie_share=ties, floor=floor, alpha=0.05, horizon=20 * n)
        fresh = sequential_stops(
            mean=rate, tie_share=ties, floor=floor, alpha=0.05, horizon=stops.p95, runs=2000, seed=1
        )
        print(
            f"  sequential: expected {stops.expected:.0f}, p95 {stops.p95}; "
            f"decided by p95 in fresh runs: {1 - fresh.undecided:.3f} (target 0.95)"
        )
    print(f"largest miss of the stated power: {worst:.3f} (target at most 0.02)")


if __name__ == "__main__":
    main()
