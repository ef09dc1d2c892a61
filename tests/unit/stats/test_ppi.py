import json
import math
from dataclasses import asdict

import numpy as np
import pytest

from judgecli.stats.intervals import normal_quantile, wilson_interval
from judgecli.stats.ppi import (
    CorrectedMean,
    labels_needed,
    ppi_mean,
    projected_half_width,
)


def datasets():
    """Fixed datasets: (name, n labelled, y over all cases, ŷ over all cases).

    The first n cases are the labelled ones. Kept byte-identical to the oracle script
    below, which generates the same data with the same numpy (2.4) PCG64 stream.
    """
    rng = np.random.default_rng(2311_01453)
    y = (rng.random(340) < 0.55).astype(float)
    yield "binary", 40, y, np.where(rng.random(340) < 0.85, y, 1.0)
    y = rng.integers(0, 3, 560) / 2
    yield "ties-half", 60, y, np.where(rng.random(560) < 0.7, y, rng.integers(0, 3, 560) / 2)
    y = rng.integers(1, 6, 175).astype(float)
    yield "scores-1-5", 25, y, np.clip(y + rng.integers(-1, 2, 175), 1, 5)
    y = rng.integers(1, 6, 230).astype(float)
    yield "compressed", 30, y, 3 + 0.5 * (y - 3) + rng.choice([0.0, 0.5], 230, p=[0.8, 0.2])
    y = (rng.random(450) < 0.5).astype(float)
    yield "contrarian", 50, y, np.where(rng.random(450) < 0.7, 1 - y, y)


DATASETS = {name: (n, y, yhat) for name, n, y, yhat in datasets()}


def split(name):
    n, y, yhat = DATASETS[name]
    return y[:n], yhat[:n], yhat[n:]


# Reference values from ppi_py 0.2.3 (Angelopoulos, Duchi & Zrnic, PPI++, arXiv:2311.01453),
# computed once with /tmp/oracle/bin/python (numpy 2.4.6, scipy 1.17.1, statsmodels), by
# this script (`python -W ignore oracle.py`; the datasets() function is the one above):
#
#     import numpy as np
#     from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
#     from ppi_py.baselines import classical_mean_ci
#     from ppi_py.ppi import _calc_lam_glm
#
#     def datasets(): ...  # as above
#
#     for name, n, y, yhat in datasets():
#         Y, Yhat, Yhat_unlabeled = y[:n], yhat[:n], yhat[n:]
#         p = ppi_mean_pointestimate(Y, Yhat, Yhat_unlabeled, lam=1)  # as in ppi_mean_ci
#         lam = _calc_lam_glm(Y - p, Yhat - p, Yhat_unlabeled - p, np.eye(1), clip=True)
#         row = [lam, ppi_mean_pointestimate(Y, Yhat, Yhat_unlabeled)]
#         row += ppi_mean_ci(Y, Yhat, Yhat_unlabeled, alpha=0.05)
#         for fixed in (1.0, 0.0):
#             row += [ppi_mean_pointestimate(Y, Yhat, Yhat_unlabeled, lam=fixed)]
#             row += ppi_mean_ci(Y, Yhat, Yhat_unlabeled, alpha=0.05, lam=fixed)
#         row += classical_mean_ci(Y, alpha=0.05)
#         row += [y.sum(), yhat.sum()]
#         print(f"{name!r}: {[float(np.asarray(v).item()) for v in row]},")
#
# Row: tuned λ, tuned estimate, tuned CI (2), λ=1 estimate, λ=1 CI (2), λ=0 estimate,
# λ=0 CI (2), classical_mean_ci of the labels (2), Σy and Σŷ (to detect a changed dataset).
# "compressed" tunes to λ = 1.18 before the clip, "contrarian" to −0.46.
ORACLE = {
    "binary": [
        0.8750090566584554,  # tuned λ
        0.5800010867990145,  # tuned estimate
        0.5112574339445438,
        0.6487447396534852,
        0.595,  # λ = 1
        0.5218035886851073,
        0.6681964113148926,
        0.475,  # λ = 0
        0.320245049076726,
        0.6297549509232739,
        0.320245049076726,  # classical_mean_ci
        0.6297549509232739,
        181.0,  # Σy, Σŷ
        206.0,
    ],
    "ties-half": [
        0.4134244733303453,  # tuned λ
        0.49716275212909,  # tuned estimate
        0.404552924458622,
        0.589772579799558,
        0.45766666666666667,  # λ = 1
        0.34672936676355026,
        0.5686039665697831,
        0.525,  # λ = 0
        0.4206090438592357,
        0.6293909561407643,
        0.4206090438592357,  # classical_mean_ci
        0.6293909561407643,
        268.0,  # Σy, Σŷ
        265.0,
    ],
    "scores-1-5": [
        0.6061676096809554,  # tuned λ
        2.9571924045383184,  # tuned estimate
        2.61624329384526,
        3.298141515231377,
        3.033333333333333,  # λ = 1
        2.646701031681034,
        3.4199656349856324,
        2.84,  # λ = 0
        2.3119870121193067,
        3.368012987880693,
        2.3119870121193067,  # classical_mean_ci
        3.368012987880693,
        511.0,  # Σy, Σŷ
        519.0,
    ],
    "compressed": [
        1.0,  # tuned λ
        2.8166666666666664,  # tuned estimate
        2.543896862057101,
        3.089436471276232,
        2.8166666666666664,  # λ = 1
        2.543896862057101,
        3.089436471276232,
        2.7,  # λ = 0
        2.2459534274505337,
        3.1540465725494666,
        2.2459534274505337,  # classical_mean_ci
        3.1540465725494666,
        666.0,  # Σy, Σŷ
        698.0,
    ],
    "contrarian": [
        0.0,  # tuned λ
        0.5,  # tuned estimate
        0.3614096175650322,
        0.6385903824349678,
        0.5375,  # λ = 1
        0.29096890518878143,
        0.7840310948112186,
        0.5,  # λ = 0
        0.3614096175650322,
        0.6385903824349678,
        0.3614096175650322,  # classical_mean_ci
        0.6385903824349678,
        212.0,  # Σy, Σŷ
        240.0,
    ],
}
NAMES = list(ORACLE)
REL = 1e-10


def approx(value):
    return pytest.approx(value, rel=REL, abs=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_the_datasets_are_the_ones_the_oracle_saw(name):
    n, y, yhat = DATASETS[name]
    assert (float(y.sum()), float(yhat.sum())) == tuple(ORACLE[name][12:14])


@pytest.mark.parametrize("name", NAMES)
def test_tuned_estimate_interval_and_lambda_match_ppi_py(name):
    lam, estimate, low, high = ORACLE[name][0:4]
    result = ppi_mean(*split(name))
    assert result.lam == approx(lam)
    assert result.estimate == approx(estimate)
    assert result.ci == approx((low, high))


@pytest.mark.parametrize("name", NAMES)
def test_plain_ppi_with_lambda_one_matches_ppi_py(name):
    estimate, low, high = ORACLE[name][4:7]
    result = ppi_mean(*split(name), lam=1.0)
    assert result.lam == 1.0
    assert result.estimate == approx(estimate)
    assert result.ci == approx((low, high))


@pytest.mark.parametrize("name", NAMES)
def test_lambda_zero_is_the_classical_labels_only_mean(name):
    estimate, low, high, classical_low, classical_high = ORACLE[name][7:12]
    y, yhat, yhat_unlabeled = split(name)
    result = ppi_mean(y, yhat, yhat_unlabeled, lam=0.0)
    assert result.estimate == approx(estimate)
    assert result.estimate == pytest.approx(float(y.mean()), rel=1e-15)
    assert result.ci == approx((low, high))
    assert result.ci == approx((classical_low, classical_high))


def test_lambda_is_clipped_to_one_and_to_zero():
    assert ppi_mean(*split("compressed")).lam == 1.0
    assert ppi_mean(*split("contrarian")).lam == 0.0


@pytest.mark.parametrize("name", NAMES)
def test_raw_judge_mean_bias_and_counts(name):
    n, y, yhat = DATASETS[name]
    result = ppi_mean(*split(name))
    assert result.n_labeled == n
    assert result.n_unlabeled == y.size - n
    assert result.judge_mean == pytest.approx(float(yhat.mean()), rel=1e-12)
    assert result.bias == pytest.approx(float(yhat[:n].mean() - y[:n].mean()), abs=1e-12)


def test_results_are_plain_floats_ready_for_json():
    result = ppi_mean(*split("binary"))
    for value in (result.estimate, result.lam, result.judge_mean, result.bias, *result.ci):
        assert type(value) is float
    json.dumps(asdict(result))


def test_lists_and_arrays_give_the_same_result():
    y, yhat, yhat_unlabeled = split("ties-half")
    assert ppi_mean(list(y), list(yhat), list(yhat_unlabeled)) == ppi_mean(y, yhat, yhat_unlabeled)


def test_confidence_sets_the_normal_quantile():
    y, yhat, yhat_unlabeled = split("binary")
    wide = ppi_mean(y, yhat, yhat_unlabeled, confidence=0.99)
    narrow = ppi_mean(y, yhat, yhat_unlabeled, confidence=0.90)
    ratio = (wide.ci[1] - wide.ci[0]) / (narrow.ci[1] - narrow.ci[0])
    assert ratio == pytest.approx(normal_quantile(0.99) / normal_quantile(0.90), rel=1e-12)
    assert wide.estimate == narrow.estimate


# --- simulation ---------------------------------------------------------------------

TRUTH = 0.6
REPLICATES = 2000
TOTAL, LABELLED = 2000, 200


def biased_judge(rng, size):
    """Human y ~ Bernoulli(0.6); the judge agrees 84% of the time but leans up.

    P(ŷ=1 | y=1) = 0.95 and P(ŷ=1 | y=0) = 0.325, so E[ŷ] = 0.6·0.95 + 0.4·0.325 = 0.7:
    the judge's mean sits 0.1 above the humans'.
    """
    y = (rng.random(size) < TRUTH).astype(float)
    u = rng.random(size)
    yhat = np.where(y == 1.0, u < 0.95, u < 0.325).astype(float)
    return y, yhat


def test_a_biased_judge_is_corrected_to_nominal_coverage():
    """2,000 judged cases, 200 with human labels, 2,000 replicates."""
    rng = np.random.default_rng(0)
    raw_covers = corrected_covers = 0
    for _ in range(REPLICATES):
        y, yhat = biased_judge(rng, TOTAL)
        low, high = wilson_interval(float(yhat.sum()), TOTAL)
        raw_covers += low <= TRUTH <= high
        result = ppi_mean(y[:LABELLED], yhat[:LABELLED], yhat[LABELLED:])
        corrected_covers += result.ci[0] <= TRUTH <= result.ci[1]
    raw, corrected = raw_covers / REPLICATES, corrected_covers / REPLICATES
    raw_ci = wilson_interval(raw_covers, REPLICATES)
    corrected_ci = wilson_interval(corrected_covers, REPLICATES)
    print(
        f"\ncoverage of the truth {TRUTH} over {REPLICATES} replicates: "
        f"raw judge Wilson {raw:.4f} (95% CI {raw_ci[0]:.4f}–{raw_ci[1]:.4f}), "
        f"PPI++ corrected {corrected:.4f} (95% CI {corrected_ci[0]:.4f}–{corrected_ci[1]:.4f})"
    )
    assert raw < 0.05
    assert corrected >= 0.94


def test_a_perfect_judge_makes_the_interval_much_narrower_than_labels_alone():
    rng = np.random.default_rng(1)
    y = (rng.random(20_000) < TRUTH).astype(float)
    result = ppi_mean(y[:LABELLED], y[:LABELLED], y[LABELLED:])
    labels_only = ppi_mean(y[:LABELLED], y[:LABELLED], y[LABELLED:], lam=0.0)
    assert result.lam > 0.95
    assert result.bias == 0.0
    width = result.ci[1] - result.ci[0]
    assert width < 0.2 * (labels_only.ci[1] - labels_only.ci[0])


# --- labels_needed --------------------------------------------------------------------


def judge_with_pool(seed=3, labelled=50, total=2000):
    rng = np.random.default_rng(seed)
    y, yhat = biased_judge(rng, total)
    return y[:labelled], yhat[:labelled], yhat[labelled:]


def current_half_width(data, **kwargs):
    low, high = ppi_mean(*data, **kwargs).ci
    return (high - low) / 2


def test_projection_at_the_current_labels_is_the_current_half_width():
    data = judge_with_pool()
    assert projected_half_width(*data, labeled=50) == pytest.approx(
        current_half_width(data), rel=1e-9
    )
    assert projected_half_width(*data, labeled=50, lam=1.0) == pytest.approx(
        current_half_width(data, lam=1.0), rel=1e-9
    )


def test_projection_with_every_case_labelled_is_the_classical_half_width():
    y, yhat, yhat_unlabeled = data = judge_with_pool()
    classical = normal_quantile(0.95) * float(y.std()) / math.sqrt(2000)
    assert projected_half_width(*data, labeled=2000) == pytest.approx(classical, rel=1e-9)


def test_no_more_labels_are_needed_when_already_narrow_enough():
    data = judge_with_pool()
    assert labels_needed(*data, half_width=1.5 * current_half_width(data)) == 0
    assert labels_needed(*data, half_width=1.0) == 0


def test_labels_needed_is_the_smallest_count_that_reaches_the_target():
    data = judge_with_pool()
    target = 0.5 * current_half_width(data)
    more = labels_needed(*data, half_width=target)
    assert more is not None
    assert more > 0
    assert projected_half_width(*data, labeled=50 + more) <= target
    assert projected_half_width(*data, labeled=50 + more - 1) > target


def test_labels_needed_falls_as_the_target_widens():
    data = judge_with_pool()
    now = current_half_width(data)
    needed = [labels_needed(*data, half_width=now * f) for f in np.linspace(0.3, 1.2, 19)]
    assert None not in needed
    assert needed == sorted(needed, reverse=True)
    assert needed[-1] == 0


def test_a_target_beyond_labelling_every_case_is_unreachable():
    y, yhat, yhat_unlabeled = data = judge_with_pool()
    everything = projected_half_width(*data, labeled=2000)
    assert labels_needed(*data, half_width=0.99 * everything) is None
    assert labels_needed(*data, half_width=everything) is not None


def test_a_fixed_lambda_is_held_and_every_count_is_tried():
    """A perfect judge at fixed λ = 1: labelling more shrinks the unlabelled pool, so
    the half-width z·sd(ŷ)/√N' GROWS until every case is labelled and it falls to the
    classical one. The answer is then all N remaining cases, not a bisection's guess."""
    rng = np.random.default_rng(4)
    y = (rng.random(500) < TRUTH).astype(float)
    data = (y[:50], y[:50], y[50:])
    now = current_half_width(data, lam=1.0)
    everything = projected_half_width(*data, labeled=500, lam=1.0)
    assert projected_half_width(*data, labeled=300, lam=1.0) > now > everything
    assert labels_needed(*data, half_width=(now + everything) / 2, lam=1.0) == 450


# --- edge cases -----------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1])
def test_fewer_than_two_labels_give_no_estimate(n):
    result = ppi_mean([1.0] * n, [0.0] * n, [1.0, 0.0, 1.0])
    assert result == CorrectedMean(
        estimate=None,
        ci=(None, None),
        lam=None,
        n_labeled=n,
        n_unlabeled=3,
        judge_mean=2 / 3 if n == 0 else 0.5,
        bias=None if n == 0 else -1.0,
    )
    assert labels_needed([1.0] * n, [0.0] * n, [1.0, 0.0, 1.0], half_width=0.1) is None


def test_no_cases_at_all():
    assert ppi_mean([], [], []) == CorrectedMean(None, (None, None), None, 0, 0, None, None)


@pytest.mark.parametrize("lam", [None, 1.0, 0.3])
def test_no_unlabelled_cases_give_the_classical_mean_and_interval(lam):
    y, yhat, _ = split("binary")
    _, _, _, _, _, _, _, _, _, _, low, high, _, _ = ORACLE["binary"]
    result = ppi_mean(y, yhat, [], lam=lam)
    assert result.lam == 0.0
    assert result.estimate == pytest.approx(float(y.mean()), rel=1e-15)
    assert result.ci == approx((low, high))
    assert result.n_unlabeled == 0
    assert labels_needed(y, yhat, [], half_width=1.0) == 0
    assert labels_needed(y, yhat, [], half_width=0.01) is None


def test_a_constant_judge_gets_lambda_zero():
    y, _, _ = split("binary")
    result = ppi_mean(y, np.ones(y.size), np.ones(300))
    classical = ppi_mean(y, np.ones(y.size), np.ones(300), lam=0.0)
    assert result.lam == 0.0
    assert result.estimate == classical.estimate == pytest.approx(float(y.mean()))
    assert result.ci == classical.ci


def test_constant_labels_and_verdicts_give_an_estimate_but_no_interval():
    result = ppi_mean([1.0] * 20, [1.0] * 20, [1.0] * 100)
    assert result.estimate == 1.0
    assert result.ci == (None, None)
    assert result.bias == 0.0
    assert labels_needed([1.0] * 20, [1.0] * 20, [1.0] * 100, half_width=0.1) is None
    assert projected_half_width([1.0] * 20, [1.0] * 20, [1.0] * 100, labeled=30) is None


def test_constant_labels_with_a_varying_judge_still_get_an_interval_at_lambda_one():
    result = ppi_mean([1.0] * 20, [1.0] * 20, [1.0, 0.0] * 50, lam=1.0)
    assert result.estimate == pytest.approx(0.5)
    half = normal_quantile(0.95) * 0.5 / math.sqrt(100)
    assert result.ci == pytest.approx((0.5 - half, 0.5 + half), rel=1e-12)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param(([1.0, 0.0], [1.0], [1.0]), "differ in length", id="length-mismatch"),
        pytest.param(([1.0, float("nan")], [1.0, 0.0], [1.0]), "finite", id="nan-label"),
        pytest.param(([1.0, 0.0], [1.0, 0.0], [float("inf")]), "finite", id="inf-verdict"),
        pytest.param(([[1.0, 0.0]], [[1.0, 0.0]], [1.0]), "one-dimensional", id="2-d"),
    ],
)
def test_bad_data_is_rejected(arguments, message):
    with pytest.raises(ValueError, match=message):
        ppi_mean(*arguments)
    with pytest.raises(ValueError, match=message):
        labels_needed(*arguments, half_width=0.1)


@pytest.mark.parametrize("confidence", [0.0, 1.0, 95])
def test_a_bad_confidence_is_rejected(confidence):
    with pytest.raises(ValueError, match="confidence"):
        ppi_mean(*split("binary"), confidence=confidence)


def test_a_non_finite_lambda_is_rejected():
    with pytest.raises(ValueError, match="lam"):
        ppi_mean(*split("binary"), lam=float("nan"))


@pytest.mark.parametrize("half_width", [0.0, -0.1, float("nan"), float("inf")])
def test_a_bad_target_half_width_is_rejected(half_width):
    with pytest.raises(ValueError, match="half_width"):
        labels_needed(*split("binary"), half_width=half_width)


@pytest.mark.parametrize("labeled", [39, 341])
def test_a_projection_outside_the_cases_is_rejected(labeled):
    with pytest.raises(ValueError, match="labeled"):
        projected_half_width(*split("binary"), labeled=labeled)
