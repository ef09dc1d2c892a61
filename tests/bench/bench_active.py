"""`make bench`: label plans with known inclusion probabilities (issue 33), simulated.

Not a test: it prints what it measured beside the targets. The simulated run is the one of
tests/unit/stats/test_active.py (30% hard cases, a judge biased towards NEW where it is
wrong, orders that disagree and logprob margins that narrow on hard cases; true win rate
0.595). For each strategy, 2,000 runs: the coverage of the true win rate by the 95%
interval of the inverse-probability-weighted estimate (target >= 94%), with its Wilson
interval, and the mean interval width beside uniform's at the same budget. For contrast,
the same draws weighed as if uniform (the estimate `--labels` would make if it ignored the
probabilities).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "stats"))

from test_active import simulate  # noqa: E402

from judgecli.deciding.label_plan import LabelStrategy  # noqa: E402
from judgecli.stats.intervals import wilson_interval  # noqa: E402

SEEDS = 2000
DESIGNS = [(1000, 200), (1000, 100), (500, 50)]


def main() -> None:
    """Print coverage and widths for each design and strategy."""
    for n, budget in DESIGNS:
        print(f"N = {n} cases, budget {budget} labels, {SEEDS:,} runs per strategy")
        uniform = None
        for strategy in LabelStrategy:
            start = time.perf_counter()
            coverage, width = simulate(strategy, SEEDS, n=n, budget=budget)
            unweighted, _ = simulate(strategy, SEEDS, n=n, budget=budget, weigh=False)
            low, high = wilson_interval(round(coverage * SEEDS), SEEDS)
            uniform = uniform or width
            print(
                f"  {strategy.value:13} coverage {coverage:6.1%} [{low:.1%}, {high:.1%}]"
                f"  width {width:.4f} ({width / uniform - 1:+.1%} vs uniform)"
                f"  unweighted coverage {unweighted:6.1%}"
                f"  ({time.perf_counter() - start:.1f}s)"
            )


if __name__ == "__main__":
    main()
