"""How many cases a rate test needs: the sample size at which a one-sided test of a
proportion detects a rate `effect` above `floor` with the stated power.

Cohen's arcsine effect size h = 2·asin(√p₁) − 2·asin(√p₀) (p₀ the floor, p₁ = p₀ + effect)
makes the proportion's variance constant, and the normal test then needs

    n = ((z₁₋α + z_power) / h)²

cases, rounded up (Cohen 1988, §6.2; statsmodels' `NormalIndPower().solve_power` with
`proportion_effectsize(p₁, p₀)`, `nobs1` for one sample, alternative "larger", gives the same
n before rounding: tests/unit/stats/test_power.py pins its value).
"""

from __future__ import annotations

import math

from judgecli.stats.intervals import normal_quantile


def arcsine_effect(rate: float, floor: float) -> float:
    """Cohen's h between a rate and the floor it is tested against."""
    return 2 * math.asin(math.sqrt(rate)) - 2 * math.asin(math.sqrt(floor))


def rate_sample_size(*, floor: float, effect: float, power: float, alpha: float = 0.05) -> int:
    """Cases a one-sided test at level `alpha` needs to detect a rate `floor + effect` above
    `floor` with probability `power`.
    """
    if not 0 <= floor < 1 or effect <= 0 or floor + effect > 1:
        raise ValueError("need 0 <= floor < floor + effect <= 1")
    if not 0 < power < 1 or not 0 < alpha < 1:
        raise ValueError("power and alpha must lie strictly between 0 and 1")
    # One-sided: z at 1 - alpha is the two-sided quantile at confidence 1 - 2·alpha.
    z_alpha = normal_quantile(1 - 2 * alpha)
    z_power = normal_quantile(2 * power - 1)
    h = arcsine_effect(floor + effect, floor)
    return math.ceil(((z_alpha + z_power) / h) ** 2 - 1e-9)
