"""stats/sizing: the fixed-n gate's cases against a textbook's sample sizes, its power by
simulation of the gate itself, and the sequential gate's simulated stopping times against
the project's own sequential gate (stats/sequential). Issue 35.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from judgecli.stats.sequential import _run_batch
from judgecli.stats.sizing import (
    fixed_cases,
    fixed_power,
    normal_cdf,
    one_sided_z,
    outcome_sd,
    rate_cases,
    rate_power,
    sequential_stops,
    sequential_stops_of,
    shifted_to_mean,
)


def test_the_normal_quantiles_and_distribution_match_their_tabled_values() -> None:
    assert one_sided_z(0.8) == pytest.approx(0.8416212335729143, abs=1e-9)
    assert one_sided_z(0.975) == pytest.approx(1.959963984540054, abs=1e-9)
    assert one_sided_z(0.2) == pytest.approx(-0.8416212335729143, abs=1e-9)
    assert normal_cdf(1.959963984540054) == pytest.approx(0.975, abs=1e-12)


def test_the_lower_bound_gate_needs_the_one_sample_z_tests_textbook_n() -> None:
    # Chow, Shao & Wang (2008) §3.1.1: one-sample mean, two-sided α = 0.05, power 80%,
    # δ/σ = 0.5: n = (1.96 + 0.84)² / 0.5² = 31.4 → 32. statsmodels'
    # NormalIndPower().solve_power(0.5, alpha=0.025, power=0.8, ratio=0,
    # alternative="larger") = ((z.975 + z.8) / 0.5)² = 31.3955 before rounding.
    assert fixed_cases(delta=0.5, sd=1.0, power=0.8, alpha=0.05, bound=True) == 32
    assert ((one_sided_z(0.975) + one_sided_z(0.8)) / 0.5) ** 2 == pytest.approx(31.3955, abs=1e-4)
    # δ/σ = 0.25, power 90%: (1.959964 + 1.281552)² / 0.0625 = 168.1 → 169.
    assert fixed_cases(delta=0.25, sd=1.0, power=0.9, alpha=0.05, bound=True) == 169


def test_the_win_rate_example_of_the_issue_is_sized_on_the_point() -> None:
    sd = outcome_sd(0.60)
    assert sd == pytest.approx(math.sqrt(0.24))
    # (0.841621 · 0.489898 / 0.05)² = 67.999 → 68.
    assert fixed_cases(delta=0.05, sd=sd, power=0.8, alpha=0.05, bound=False) == 68
    # With a spread that does not move (a score), the bound's n is the z-test's 753.5 → 754.
    assert fixed_cases(delta=0.05, sd=sd, power=0.8, alpha=0.05, bound=True) == 754


def test_ties_shrink_the_spread_of_a_win_rate() -> None:
    # Values 1 / ½ / 0 with mean 0.6 and 30% ties: 0.24 − 0.3/4 = 0.165.
    assert outcome_sd(0.6, 0.3) == pytest.approx(math.sqrt(0.165))
    # A tie share the mean cannot have is capped: mean 0.9 allows at most 20% ties.
    assert outcome_sd(0.9, 0.5) == pytest.approx(outcome_sd(0.9, 0.2))


def test_power_at_the_planned_n_is_at_least_the_power_asked_and_one_less_falls_short() -> None:
    for bound in (True, False):
        n = fixed_cases(delta=0.05, sd=0.45, power=0.8, alpha=0.05, bound=bound)
        assert fixed_power(n=n, delta=0.05, sd=0.45, alpha=0.05, bound=bound) >= 0.8
        assert fixed_power(n=n - 1, delta=0.05, sd=0.45, alpha=0.05, bound=bound) < 0.8


def test_an_effect_at_or_below_the_floor_is_refused() -> None:
    with pytest.raises(ValueError, match="above the floor"):
        fixed_cases(delta=0.0, sd=0.5, power=0.8, alpha=0.05, bound=True)


def simulated_power(
    *,
    n: int,
    mean: float,
    ties: float,
    floor: float,
    bound: bool,
    reps: int,
    seed: int,
    wilson: bool = False,
) -> float:
    """The share of `reps` fixed-n gates that pass: the gate's own rule, the sample mean of
    values 1 / ½ / 0 at or above the floor, or its lower end: the normal one (mean − z.975 ·
    sample sd / √n, what a win rate's bootstrap approaches) or Wilson's (a pass rate's).
    """
    rng = np.random.default_rng(seed)
    wins = mean - ties / 2
    draw = rng.random((reps, n))
    x = np.where(draw < wins, 1.0, np.where(draw < wins + ties, 0.5, 0.0))
    means = x.mean(axis=1)
    if wilson:
        z = one_sided_z(0.975)
        centre = (means + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * np.sqrt(means * (1 - means) / n + z * z / (4 * n * n))
        return float((centre - half >= floor - 1e-12).mean())
    if bound:
        means = means - one_sided_z(0.975) * x.std(axis=1, ddof=1) / math.sqrt(n)
    return float((means >= floor - 1e-12).mean())


@pytest.mark.parametrize(
    ("floor", "effect", "ties", "power", "wilson"),
    [
        (0.55, 0.60, 0.0, 0.8, False),
        (0.55, 0.65, 0.3, 0.8, False),
        (0.70, 0.80, 0.0, 0.9, False),
        (0.70, 0.80, 0.0, 0.9, True),
        (0.30, 0.40, 0.0, 0.8, True),
    ],
)
def test_a_rates_lower_bound_gate_reaches_the_stated_power_within_two_points_over_many_seeds(
    floor: float, effect: float, ties: float, power: float, wilson: bool
) -> None:
    n = rate_cases(
        floor=floor, effect=effect, tie_share=ties, power=power, alpha=0.05, wilson=wilson
    )
    shares = [
        simulated_power(
            n=n, mean=effect, ties=ties, floor=floor, bound=True, reps=1000, seed=s, wilson=wilson
        )
        for s in range(8)
    ]
    assert np.mean(shares) == pytest.approx(power, abs=0.02)


def test_wilsons_pass_line_gives_fleiss_closed_form() -> None:
    # Fleiss, Levin & Paik (2003) §2.5: ((z.975·σ₀ + z.8·σ₁)/Δ)² with σ₀² = 0.7·0.3 and
    # σ₁² = 0.8·0.2: ((1.959964·0.458258 + 0.841621·0.4)/0.1)² = 12.348² = 152.48 → 153.
    closed = ((one_sided_z(0.975) * math.sqrt(0.21) + one_sided_z(0.8) * 0.4) / 0.1) ** 2
    assert closed == pytest.approx(152.48, abs=0.01)
    n = rate_cases(floor=0.7, effect=0.8, tie_share=0.0, power=0.8, alpha=0.05, wilson=True)
    assert n == math.ceil(closed) == 153
    assert rate_power(
        n=n, floor=0.7, effect=0.8, tie_share=0.0, alpha=0.05, wilson=True
    ) == pytest.approx(0.8, abs=0.005)


# The point gate's exact power saws around the normal n by up to ~4 points below a few
# hundred cases (its mean lies on a lattice: docs/plan.md, tests/bench/bench_planning.py);
# these two sizes sit near the saw's middle.
@pytest.mark.parametrize(("floor", "effect", "ties"), [(0.55, 0.60, 0.2), (0.50, 0.55, 0.0)])
def test_the_point_gate_reaches_the_stated_power_within_two_points_over_many_seeds(
    floor: float, effect: float, ties: float
) -> None:
    n = fixed_cases(
        delta=effect - floor, sd=outcome_sd(effect, ties), power=0.8, alpha=0.05, bound=False
    )
    shares = [
        simulated_power(n=n, mean=effect, ties=ties, floor=floor, bound=False, reps=2000, seed=s)
        for s in range(8)
    ]
    assert np.mean(shares) == pytest.approx(0.8, abs=0.02)


def test_the_simulated_sequential_gate_stops_where_the_projects_gate_stops() -> None:
    # The same gate run on pre-drawn sequences by stats/sequential._run_batch.
    stops = sequential_stops(
        mean=0.7, tie_share=0.2, floor=0.55, alpha=0.05, horizon=3000, runs=400
    )
    rng = np.random.default_rng(99)
    draw = rng.random((400, 3000))
    x = np.where(draw < 0.6, 1.0, np.where(draw < 0.8, 0.5, 0.0))
    runs = _run_batch(x, 0.55, alpha=0.05, grid=100)
    after = np.where(runs.decided_after > 0, runs.decided_after, 3000)
    assert stops.expected == pytest.approx(float(after.mean()), rel=0.08)
    assert stops.p95 == pytest.approx(float(np.quantile(after, 0.95)), rel=0.15)
    assert stops.passed == pytest.approx(float((runs.decision == 1).mean()), abs=0.03)


def test_the_sequential_p95_holds_for_a_fresh_seed() -> None:
    planned = sequential_stops(mean=0.7, tie_share=0.0, floor=0.55, alpha=0.05, horizon=4000)
    fresh = sequential_stops(
        mean=0.7, tie_share=0.0, floor=0.55, alpha=0.05, horizon=planned.p95, seed=7
    )
    # Of fresh runs given p95 cases, about 95% have decided.
    assert 1 - fresh.undecided == pytest.approx(0.95, abs=0.02)
    assert planned.expected < planned.p95


def test_the_sequential_gate_rarely_passes_a_mean_at_its_floor() -> None:
    stops = sequential_stops(
        mean=0.55, tie_share=0.0, floor=0.55, alpha=0.05, horizon=1500, runs=600, seed=3
    )
    assert stops.passed <= 0.05


def test_a_rates_law_given_as_values_and_weights_stops_exactly_as_the_rates_simulation() -> None:
    # Issue 35: the general law reads the same uniforms the same way, so a rate's plan is
    # unchanged by it (docs/plan.md's 2,075 / 5,433).
    rate = sequential_stops(
        mean=0.65, tie_share=0.3, floor=0.55, alpha=0.05, horizon=2000, runs=200, seed=4
    )
    law = sequential_stops_of(
        values=(1.0, 0.5, 0.0),
        weights=(0.5, 0.3, 0.2),
        floor=0.55,
        alpha=0.05,
        horizon=2000,
        runs=200,
        seed=4,
    )
    assert law == rate


def test_the_simulated_sequential_gate_of_a_score_law_stops_where_the_projects_gate_stops() -> None:
    # Scores 1..5 on the unit scale ((s − 1)/4), drawn with the weights, run through
    # stats/sequential._run_batch on pre-drawn sequences.
    values, weights = (0.0, 0.25, 0.5, 0.75, 1.0), (0.05, 0.10, 0.30, 0.35, 0.20)
    stops = sequential_stops_of(
        values=values, weights=weights, floor=0.575, alpha=0.05, horizon=3000, runs=400
    )
    rng = np.random.default_rng(11)
    x = rng.choice(np.asarray(values), size=(400, 3000), p=np.asarray(weights))
    runs = _run_batch(x, 0.575, alpha=0.05, grid=100)
    after = np.where(runs.decided_after > 0, runs.decided_after, 3000)
    assert stops.expected == pytest.approx(float(after.mean()), rel=0.08)
    assert stops.p95 == pytest.approx(float(np.quantile(after, 0.95)), rel=0.15)
    assert stops.passed == pytest.approx(float((runs.decision == 1).mean()), abs=0.03)


def test_a_law_with_a_value_off_the_unit_scale_or_no_weight_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        sequential_stops_of(values=(0.5, 1.5), weights=(1, 1), floor=0.5, alpha=0.05, horizon=9)
    with pytest.raises(ValueError, match="positive sum"):
        sequential_stops_of(values=(0.5, 1.0), weights=(0, 0), floor=0.5, alpha=0.05, horizon=9)


def test_a_pilots_values_are_shifted_to_the_mean_and_kept_on_the_scale() -> None:
    # Inside the scale the shift is plain: 0.25 up.
    assert shifted_to_mean([0.25, 0.5, 0.5], 0.666667) == pytest.approx([0.5, 0.75, 0.75], abs=1e-5)
    # At the top a value is clamped, so the others move further: mean exact, none above 1.
    moved = shifted_to_mean([0.5, 0.75, 1.0], 0.9)
    assert sum(moved) / 3 == pytest.approx(0.9, abs=1e-9)
    assert moved == pytest.approx([0.725, 0.975, 1.0], abs=1e-9)  # d = 0.45 / 2
