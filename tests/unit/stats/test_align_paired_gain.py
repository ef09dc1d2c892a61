"""The paired gain of `judge align` (stats/paired_gain.py), against hand-computed values."""

from judgecli.stats.agreement import cohen_kappa
from judgecli.stats.paired_gain import GainMetric, paired_gain


def test_gain_of_a_perfect_rater_over_a_half_right_one_matches_kappa_by_hand() -> None:
    # Issue 34. Labels Y Y N N; baseline Y N N N: p_o = 3/4, p_e = (2·1 + 2·3)/16 = 1/2,
    # κ = (3/4 − 1/2)/(1 − 1/2) = 1/2. Aligned = the labels: κ = 1, accuracy 1.
    ids, labels = ["a", "b", "c", "d"], ["Y", "Y", "N", "N"]
    gains = paired_gain(ids, labels, ["Y", "N", "N", "N"], labels, categories=["Y", "N"])
    kappa = gains[GainMetric.KAPPA]
    assert kappa.baseline == 0.5 == cohen_kappa(["Y", "N", "N", "N"], labels, labels=["Y", "N"])
    assert kappa.aligned == 1.0
    assert kappa.gain == 0.5
    assert gains[GainMetric.ACCURACY].baseline == 0.75
    assert gains[GainMetric.AGREEMENT].gain == 0.25


def test_identical_raters_gain_exactly_nothing_with_an_interval_that_does_not_exclude_zero() -> (
    None
):
    ids = [str(i) for i in range(30)]
    labels = ["Y" if i % 3 else "N" for i in range(30)]
    judged = ["Y"] * 30
    gains = paired_gain(ids, labels, judged, judged, categories=["Y", "N"], resamples=200)
    for gain in gains.values():
        assert gain.gain_ci == (0.0, 0.0) or gain.gain_ci == (None, None)
        assert not gain.significant


def test_accuracy_reads_a_cases_majority_label_and_agreement_every_label_row() -> None:
    # Case a has labels Y, Y, N (majority Y); the rater says N: accuracy 0 on a, agreement 1/3.
    gains = paired_gain(
        ["a", "a", "a"], ["Y", "Y", "N"], ["N"] * 3, ["Y"] * 3, categories=["Y", "N"]
    )
    assert gains[GainMetric.ACCURACY].baseline == 0.0
    assert gains[GainMetric.ACCURACY].aligned == 1.0
    assert abs((gains[GainMetric.AGREEMENT].baseline or 0) - 1 / 3) < 1e-12
