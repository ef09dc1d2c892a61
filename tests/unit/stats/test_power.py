"""The sample size `judge probe --power --effect` sizes a probe with, against statsmodels."""

from __future__ import annotations

import pytest

from judgecli.stats.power import arcsine_effect, rate_sample_size


@pytest.mark.parametrize(
    ("floor", "effect", "power", "expected"),
    [
        # statsmodels 0.15.0, computed once: NormalIndPower().solve_power(
        #   effect_size=proportion_effectsize(floor + effect, floor), nobs1=None,
        #   alpha=0.05, power=power, ratio=0, alternative="larger")
        (0.05, 0.1, 0.8, 52.13296592845931),
        (0.0, 0.1, 0.8, 14.930334789286933),
        (0.1, 0.05, 0.9, 371.1644724951261),
    ],
)
def test_the_sample_size_is_statsmodels_rounded_up(
    floor: float, effect: float, power: float, expected: float
) -> None:
    assert rate_sample_size(floor=floor, effect=effect, power=power) == int(expected) + 1


def test_cohens_h_matches_its_textbook_value() -> None:
    # Cohen (1988), Table 6.2.1: φ(0.50) - φ(0.30) = 1.5708 - 1.1593 = 0.4115 (2·asin√p).
    assert arcsine_effect(0.5, 0.3) == pytest.approx(0.4115, abs=1e-4)


def test_more_power_or_a_smaller_effect_needs_more_pairs() -> None:
    base = rate_sample_size(floor=0.05, effect=0.1, power=0.8)
    assert rate_sample_size(floor=0.05, effect=0.1, power=0.9) > base
    assert rate_sample_size(floor=0.05, effect=0.05, power=0.8) > base


@pytest.mark.parametrize(
    "kwargs",
    [
        {"floor": 0.05, "effect": 0.0, "power": 0.8},
        {"floor": 0.95, "effect": 0.1, "power": 0.8},
        {"floor": 0.05, "effect": 0.1, "power": 1.0},
    ],
)
def test_impossible_sizings_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must lie|need 0"):
        rate_sample_size(**kwargs)
