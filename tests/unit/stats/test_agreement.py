import numpy as np
import pytest

from judgecli.stats.agreement import (
    cohen_kappa,
    cohen_kappa_resampled,
    confusion_matrix,
    fleiss_kappa,
    kendall_tau_b,
    kendall_tau_b_resampled,
    pairwise_cohen_kappas,
    pearson,
    pearson_resampled,
    percent_agreement,
    spearman,
    spearman_resampled,
)
from judgecli.stats.krippendorff import krippendorff_alpha

# The classic 2×2 example (50 proposals, two readers): 20 yes/yes, 5 yes/no, 10 no/yes,
# 15 no/no; p_o = 0.7, p_e = 0.5·0.6 + 0.5·0.4 = 0.5, κ = (0.7 − 0.5) / (1 − 0.5) = 0.4.
READER_A = ["yes"] * 25 + ["no"] * 25
READER_B = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15

# An ordinal 1–5 example.
ORDINAL_A = [1, 2, 3, 3, 4, 5, 5, 2, 1, 4, 4, 2, 3, 5, 1]
ORDINAL_B = [1, 2, 4, 3, 4, 4, 5, 1, 2, 5, 4, 2, 2, 5, 2]
# Ratings on a 1–5 scale in which nobody used 3.
GAPPED_A = [1, 2, 4, 4, 5, 5, 2, 1, 4, 1]
GAPPED_B = [1, 2, 5, 4, 4, 5, 1, 1, 2, 2]
SCALE = [1, 2, 3, 4, 5]

# Fleiss (1971), table 1: 30 patients, 6 psychiatrists each, 5 diagnoses
# (as in statsmodels' test_inter_rater.py).
FLEISS_1971 = [
    [4, 4, 4, 4, 4, 4],
    [2, 2, 2, 5, 5, 5],
    [2, 3, 3, 3, 3, 5],
    [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4],
    [1, 1, 3, 3, 3, 3],
    [3, 3, 3, 3, 5, 5],
    [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4],
    [5, 5, 5, 5, 5, 5],
    [1, 4, 4, 4, 4, 4],
    [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3],
    [1, 4, 4, 4, 4, 4],
    [2, 2, 4, 4, 4, 5],
    [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5],
    [1, 1, 1, 1, 1, 2],
    [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5],
    [2, 4, 4, 4, 4, 4],
    [2, 2, 4, 5, 5, 5],
    [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5],
    [2, 2, 2, 2, 2, 4],
    [1, 1, 1, 1, 5, 5],
    [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3],
    [5, 5, 5, 5, 5, 5],
]
# Wikipedia's "Fleiss' kappa" worked example: 10 items, 14 raters, counts per category.
WIKIPEDIA_COUNTS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]
WIKIPEDIA_RATINGS = [
    [label for label, count in enumerate(row) for _ in range(count)] for row in WIKIPEDIA_COUNTS
]

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with
# missing values: 4 observers (rows) × 12 units (columns).
_ = None
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
    [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
]


def test_confusion_matrix_has_rows_for_the_first_rater_in_label_order():
    assert confusion_matrix(READER_A, READER_B, ["yes", "no"]) == [[20, 5], [10, 15]]
    assert confusion_matrix(READER_A, READER_B, ["no", "yes"]) == [[15, 10], [5, 20]]


def test_confusion_matrix_keeps_unused_labels_and_holds_plain_ints():
    matrix = confusion_matrix([1, 1], [1, 2], [1, 2, 3])
    assert matrix == [[1, 1, 0], [0, 0, 0], [0, 0, 0]]
    assert all(type(count) is int for row in matrix for count in row)


@pytest.mark.parametrize(
    ("a", "b", "labels", "message"),
    [
        pytest.param([1, 2], [1], [1, 2], "differ in length", id="misaligned"),
        pytest.param([1, 9], [1, 2], [1, 2], "label 9", id="unknown-label"),
        pytest.param([1], [1], [1, 1], "repeat", id="repeated-label"),
    ],
)
def test_confusion_matrix_rejects_bad_input(a, b, labels, message):
    with pytest.raises(ValueError, match=message):
        confusion_matrix(a, b, labels)


# Pinned from sklearn.metrics.cohen_kappa_score(a, b, labels=labels, weights=weights).
@pytest.mark.parametrize(
    ("a", "b", "labels", "weights", "expected"),
    [
        pytest.param(READER_A, READER_B, ["yes", "no"], None, 0.4, id="classic-2x2"),
        pytest.param(ORDINAL_A, ORDINAL_B, SCALE, None, 0.41666666666666663, id="ordinal"),
        pytest.param(
            ORDINAL_A, ORDINAL_B, SCALE, "linear", 0.7058823529411764, id="ordinal-linear"
        ),
        pytest.param(
            ORDINAL_A, ORDINAL_B, SCALE, "quadratic", 0.8813559322033898, id="ordinal-quadratic"
        ),
        pytest.param(GAPPED_A, GAPPED_B, SCALE, None, 0.33333333333333337, id="gap"),
        pytest.param(GAPPED_A, GAPPED_B, SCALE, "linear", 0.6551724137931034, id="gap-linear"),
        pytest.param(
            GAPPED_A, GAPPED_B, SCALE, "quadratic", 0.8380566801619433, id="gap-quadratic"
        ),
    ],
)
def test_cohen_kappa_matches_scikit_learn(a, b, labels, weights, expected):
    assert cohen_kappa(a, b, labels=labels, weights=weights) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_an_unused_label_still_sets_the_weights(weights):
    full = cohen_kappa(GAPPED_A, GAPPED_B, labels=SCALE, weights=weights)
    shrunk = cohen_kappa(GAPPED_A, GAPPED_B, labels=[1, 2, 4, 5], weights=weights)
    # sklearn without labels= infers [1, 2, 4, 5] and gives these smaller values.
    assert shrunk == pytest.approx(
        {"linear": 0.5967741935483871, "quadratic": 0.7967479674796748}[weights], rel=1e-12
    )
    assert full is not None
    assert full > shrunk


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        pytest.param([], [], None, id="no-pairs"),
        pytest.param(["pass"] * 4, ["pass"] * 4, None, id="both-constant-same-label-is-0/0"),
        pytest.param(["pass"] * 4, ["fail"] * 4, 0.0, id="both-constant-different-labels"),
        pytest.param(["pass", "fail"], ["pass", "fail"], 1.0, id="perfect-agreement"),
        pytest.param(["pass", "fail"], ["fail", "pass"], -1.0, id="perfect-disagreement"),
    ],
)
def test_cohen_kappa_edge_cases(a, b, expected):
    assert cohen_kappa(a, b, labels=["pass", "fail"]) == expected


def test_cohen_kappa_agrees_with_scikit_learn_on_random_ratings():
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(0)
    for _trial in range(20):
        truth = rng.integers(1, 6, size=int(rng.integers(5, 200)))
        a = np.clip(truth + rng.integers(-1, 2, size=truth.size), 1, 5).tolist()
        b = np.clip(truth + rng.integers(-2, 3, size=truth.size), 1, 5).tolist()
        for weights in (None, "linear", "quadratic"):
            expected = cohen_kappa_score(a, b, labels=SCALE, weights=weights)
            assert cohen_kappa(a, b, labels=SCALE, weights=weights) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        pytest.param(READER_A, READER_B, 0.7, id="classic-2x2"),
        pytest.param(["x"], ["x"], 1.0, id="one-item"),
        pytest.param([], [], None, id="no-items"),
    ],
)
def test_percent_agreement_is_the_share_of_equal_labels(a, b, expected):
    assert percent_agreement(a, b) == expected


def test_pairwise_cohen_kappas_are_keyed_by_sorted_names_and_skip_missing_ratings():
    raters = {
        "gpt": READER_B,
        "claude": READER_A,
        "gemini": READER_A[:-1] + [None],
    }
    result = pairwise_cohen_kappas(raters, labels=["yes", "no"])
    assert list(result) == ["claude~gemini", "claude~gpt", "gemini~gpt"]
    assert result["claude~gpt"] == pytest.approx(0.4)
    assert result["claude~gemini"] == pytest.approx(1.0)
    assert result["gemini~gpt"] == pytest.approx(
        cohen_kappa(READER_A[:-1], READER_B[:-1], labels=["yes", "no"])
    )


def test_a_pair_of_raters_without_a_common_rated_item_has_undefined_kappa():
    result = pairwise_cohen_kappas({"a": [1, None], "b": [None, 2]}, labels=[1, 2])
    assert result == {"a~b": None}


def test_pairwise_cohen_kappas_of_one_rater_is_empty():
    assert pairwise_cohen_kappas({"solo": [1, 2]}, labels=[1, 2]) == {}


# Pinned from statsmodels fleiss_kappa(aggregate_raters(...)[0]) / fleiss_kappa(counts).
@pytest.mark.parametrize(
    ("ratings", "labels", "expected"),
    [
        pytest.param(FLEISS_1971, SCALE, 0.43024452006014074, id="fleiss-1971"),
        pytest.param(WIKIPEDIA_RATINGS, range(5), 0.20993070442195522, id="wikipedia"),
    ],
)
def test_fleiss_kappa_matches_statsmodels(ratings, labels, expected):
    assert fleiss_kappa(ratings, labels=list(labels)) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("ratings", "expected"),
    [
        pytest.param([], None, id="no-items"),
        pytest.param([["a"], ["b"]], None, id="one-rater"),
        pytest.param([["a", "a"], ["a", "a"]], None, id="one-category-throughout"),
        pytest.param([["a", "a"], ["b", "b"]], 1.0, id="perfect-agreement"),
    ],
)
def test_fleiss_kappa_edge_cases(ratings, expected):
    assert fleiss_kappa(ratings, labels=["a", "b"]) == expected


def test_fleiss_kappa_needs_the_same_number_of_raters_per_item():
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([["a", "b"], ["a"]], labels=["a", "b"])


def test_fleiss_kappa_agrees_with_statsmodels_on_random_ratings():
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

    rng = np.random.default_rng(0)
    for raters in (2, 3, 7):
        data = rng.integers(0, 4, size=(50, raters))
        table = aggregate_raters(data, n_cat=4)[0]
        expected = statsmodels_fleiss(table)
        assert fleiss_kappa(data.tolist(), labels=[0, 1, 2, 3]) == pytest.approx(expected)


# Pinned from krippendorff.alpha(reliability_data, level_of_measurement=level) (package 0.8+);
# Krippendorff (2011) reports 0.743 (nominal), 0.815 (ordinal), 0.849 (interval).
@pytest.mark.parametrize(
    ("level", "expected"),
    [
        pytest.param("nominal", 0.743421052631579, id="nominal"),
        pytest.param("ordinal", 0.8153875037548814, id="ordinal"),
        pytest.param("interval", 0.8491071428571428, id="interval"),
    ],
)
def test_krippendorff_alpha_matches_the_worked_example(level, expected):
    assert krippendorff_alpha(KRIPPENDORFF_2011, level=level) == pytest.approx(expected, rel=1e-12)


def test_krippendorff_alpha_treats_nan_as_missing():
    with_nan = [[np.nan if v is None else v for v in row] for row in KRIPPENDORFF_2011]
    assert krippendorff_alpha(with_nan, level="nominal") == pytest.approx(0.743421052631579)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param([], id="no-raters"),
        pytest.param([[]], id="no-units"),
        pytest.param([[1, None], [None, 2]], id="no-unit-with-two-values"),
        pytest.param([[3, 3, None], [3, 3, 3]], id="no-variation"),
    ],
)
def test_krippendorff_alpha_is_undefined_without_pairable_variation(data):
    assert krippendorff_alpha(data, level="interval") is None


def test_krippendorff_alpha_needs_one_entry_per_unit_in_every_row():
    with pytest.raises(ValueError, match="one entry per unit"):
        krippendorff_alpha([[1, 2, 3], [1, 2]], level="nominal")


def test_krippendorff_alpha_agrees_with_the_krippendorff_package_on_random_data():
    import krippendorff

    rng = np.random.default_rng(0)
    for _trial in range(10):
        truth = rng.integers(1, 6, size=40)
        data = np.clip(truth + rng.integers(-1, 2, size=(4, 40)), 1, 5).astype(np.float64)
        data[rng.random(data.shape) < 0.2] = np.nan
        ours_input = [[None if np.isnan(v) else float(v) for v in row] for row in data]
        for level in ("nominal", "ordinal", "interval"):
            expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
            assert krippendorff_alpha(ours_input, level=level) == pytest.approx(expected)


# Pinned from scipy.stats spearmanr / kendalltau(variant="b") / pearsonr.
@pytest.mark.parametrize(
    ("function", "expected"),
    [
        pytest.param(spearman, 0.9221722216732094, id="spearman"),
        pytest.param(kendall_tau_b, 0.7637626158259733, id="kendall-tau-b"),
        pytest.param(pearson, 0.9254843048684035, id="pearson"),
    ],
)
def test_correlations_match_scipy_with_ties(function, expected):
    x = [1, 2, 3, 4, 5, 6, 7, 8]
    y = [2, 1, 4, 3, 6, 5, 8, 8]
    result = function(x, y)
    assert result == pytest.approx(expected, rel=1e-12)
    assert type(result) is float


@pytest.mark.parametrize("function", [spearman, kendall_tau_b, pearson])
@pytest.mark.parametrize(
    ("x", "y"),
    [
        pytest.param([], [], id="empty"),
        pytest.param([1.0], [2.0], id="one-pair"),
        pytest.param([3, 3, 3], [1, 2, 3], id="constant-x"),
        pytest.param([1, 2, 3], [4, 4, 4], id="constant-y"),
    ],
)
def test_correlations_are_undefined_for_too_little_or_constant_data(function, x, y):
    assert function(x, y) is None


def test_correlations_reject_inputs_of_different_length():
    with pytest.raises(ValueError, match="differ in length"):
        spearman([1, 2, 3], [1, 2])


def test_correlations_match_scipy_on_random_and_continuous_data():
    from scipy.stats import kendalltau, pearsonr, spearmanr

    rng = np.random.default_rng(21)
    for x, y in [
        (rng.integers(1, 5, 60), rng.integers(1, 5, 60)),  # a rating scale: many ties
        (rng.normal(size=40), rng.normal(size=40)),  # continuous: no ties
    ]:
        assert spearman(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-14)
        assert kendall_tau_b(x, y) == kendalltau(x, y).statistic  # exact: whole counts
        assert pearson(x, y) == pytest.approx(pearsonr(x, y).statistic, abs=1e-14)


# The resampled forms must give, for every resample, what the one-sample functions (and
# so scipy and scikit-learn) give on that resample's rows. Regression for issue 13 §6:
# calibrate called scipy 2,000 times per interval; the numbers must not move.
def resamples(n, size=50, seed=3):
    counts = np.random.default_rng(seed).multinomial(n, np.full(n, 1 / n), size=size)
    return counts.astype(np.float64)


def rows_of(counts):
    return [np.repeat(np.arange(counts.shape[1]), c.astype(int)) for c in counts]


def as_float(value):
    return np.nan if value is None else value


@pytest.mark.parametrize(
    ("x", "y"),
    [
        pytest.param(ORDINAL_A, ORDINAL_B, id="ordinal"),
        pytest.param(GAPPED_A, GAPPED_B, id="gapped"),
        pytest.param([1, 1, 1, 2], [1, 2, 3, 3], id="often-constant"),
        pytest.param(
            list(np.random.default_rng(5).normal(size=30)),
            list(np.random.default_rng(6).normal(size=30)),
            id="continuous",
        ),
    ],
)
@pytest.mark.parametrize(
    ("resampled", "one"),
    [
        pytest.param(spearman_resampled, spearman, id="spearman"),
        pytest.param(kendall_tau_b_resampled, kendall_tau_b, id="kendall"),
        pytest.param(pearson_resampled, pearson, id="pearson"),
    ],
)
def test_resampled_correlations_equal_the_statistic_of_each_resample(x, y, resampled, one):
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    counts = resamples(x.size)
    expected = [as_float(one(x[rows], y[rows])) for rows in rows_of(counts)]
    np.testing.assert_allclose(resampled(x, y, counts), expected, rtol=0, atol=1e-14)


def test_kendall_falls_back_to_one_resample_at_a_time_beyond_max_cells():
    rng = np.random.default_rng(8)
    x, y = rng.normal(size=25), rng.normal(size=25)
    counts = resamples(25)
    table = kendall_tau_b_resampled(x, y, counts)
    one_by_one = kendall_tau_b_resampled(x, y, counts, max_cells=10)
    np.testing.assert_array_equal(table, one_by_one)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_resampled_kappa_equals_scikit_learn_on_each_resample(weights):
    from sklearn.metrics import cohen_kappa_score

    a, b = np.asarray(ORDINAL_A) - 1, np.asarray(ORDINAL_B) - 1
    counts = resamples(a.size, size=40)
    expected = [
        cohen_kappa_score(a[rows], b[rows], labels=range(5), weights=weights)
        for rows in rows_of(counts)
    ]
    got = cohen_kappa_resampled(a, b, counts, k=5, weights=weights)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-14)


def test_resampled_kappa_is_nan_where_one_label_fills_the_resample():
    # Resample 0 holds row 0 only (both raters said label 0): κ is 0/0.
    counts = np.array([[3.0, 0.0], [1.0, 1.0]])
    got = cohen_kappa_resampled(np.array([0, 1]), np.array([0, 1]), counts, k=2)
    assert np.isnan(got[0])
    assert got[1] == 1.0
