import numpy as np
import pytest
from scipy.stats import bootstrap

from judgecli.stats.calibration import brier_score
from judgecli.stats.resampling import (
    cluster_bootstrap,
    clusters_of,
    constant_in,
    each_resample,
    midranks_in,
    resampled_counts,
    totals_by_code,
)


def mean_of(values):
    """A batch statistic: the count-weighted mean of each resample."""
    values = np.asarray(values, dtype=np.float64)
    return lambda counts: counts @ values / counts.sum(axis=1)


def interval(statistic, clusters, **kwargs):
    return cluster_bootstrap({"x": statistic}, clusters, **kwargs)["x"].ci


def test_clusters_of_groups_rows_by_case_in_first_seen_order():
    assert clusters_of(["a", "b", "a", "c", "b", "a"]) == [[0, 2, 5], [1, 4], [3]]
    assert clusters_of([]) == []


def test_one_row_per_cluster_is_the_ordinary_bootstrap():
    data = np.random.default_rng(7).normal(10.0, 2.0, 200)
    low, high = interval(mean_of(data), clusters_of(range(200)), resamples=4000, seed=1)
    reference = bootstrap(
        (data,), np.mean, method="percentile", n_resamples=4000, random_state=2
    ).confidence_interval
    # Monte Carlo error of a 2.5% quantile from 4000 resamples is ~0.05 standard errors
    # per estimate; allow 0.3 (about 4 sd of the difference). The half-width is ~1.96.
    se = data.std(ddof=1) / np.sqrt(data.size)
    assert low == pytest.approx(reference.low, abs=0.3 * se)
    assert high == pytest.approx(reference.high, abs=0.3 * se)
    assert type(low) is float
    assert type(high) is float


def test_a_resample_draws_k_clusters_with_replacement_and_keeps_their_rows_together():
    # Clusters of 1, 2 and 3 rows. Each resample holds 3 draws: the counts of a cluster's
    # rows are all equal (the times it was drawn) and sum over clusters to 3.
    clusters = [[0], [1, 2], [3, 4, 5]]
    counts = np.concatenate(list(resampled_counts(clusters, resamples=500, seed=4)))
    assert counts.shape == (500, 6)
    draws = counts[:, [0, 1, 3]]
    assert (draws.sum(axis=1) == 3).all()
    assert (counts[:, 1] == counts[:, 2]).all()
    assert (counts[:, 3] == counts[:, 4]).all()
    assert (counts[:, 4] == counts[:, 5]).all()
    # The draws are numpy's integers(0, k, size=k) per resample, in order.
    rng = np.random.default_rng(4)
    first = np.bincount(rng.integers(0, 3, size=3), minlength=3)
    assert list(draws[0]) == list(first)


def test_the_interval_is_deterministic_for_a_seed():
    data = np.random.default_rng(0).normal(size=60)
    clusters = clusters_of([i // 3 for i in range(60)])
    first = interval(mean_of(data), clusters, resamples=300, seed=5)
    again = interval(mean_of(data), clusters, resamples=300, seed=5)
    other = interval(mean_of(data), clusters, resamples=300, seed=6)
    assert first == again
    assert first != other


def test_chunks_of_resamples_do_not_change_the_interval(monkeypatch):
    data = np.random.default_rng(1).normal(size=50)
    clusters = clusters_of([i // 2 for i in range(50)])
    whole = interval(mean_of(data), clusters, resamples=500, seed=3)
    # A memory budget that fits 7 resamples per chunk: the same draws, in 72 chunks.
    monkeypatch.setattr("judgecli.stats.resampling.CHUNK_BYTES", 8 * 50 * 8 * 7)
    assert interval(mean_of(data), clusters, resamples=500, seed=3) == whole


def test_correlated_rows_give_a_wider_interval_than_independent_rows():
    # 20 cases with 10 labels each; the labels of a case are all the same value (the
    # case's effect), so there are 20 independent observations, not 200. The cluster
    # standard error is sd/√20, the row bootstrap's sd/√200: √10 ≈ 3.2 times narrower.
    rng = np.random.default_rng(11)
    effects = rng.normal(0.0, 1.0, 20)
    values = np.repeat(effects, 10)
    by_case = interval(mean_of(values), clusters_of(np.repeat(np.arange(20), 10)), seed=0)
    by_row = interval(mean_of(values), clusters_of(range(200)), seed=0)
    assert by_case[1] - by_case[0] > 2.0 * (by_row[1] - by_row[0])


def test_clusters_keep_their_rows_together():
    # Each case has one right and one wrong row; a resample of whole cases is always
    # half right, so the interval of the share right is the single point 0.5.
    correct = np.array([1.0, 0.0] * 8)
    clusters = clusters_of([i // 2 for i in range(16)])
    assert interval(mean_of(correct), clusters, resamples=200) == (0.5, 0.5)


def test_a_statistic_of_row_indices_through_each_resample():
    rng = np.random.default_rng(4)
    confidence = rng.uniform(0.5, 1.0, 300)
    correct = rng.uniform(size=300) < confidence
    clusters = clusters_of([i // 3 for i in range(300)])
    statistic = each_resample(lambda rows: brier_score(confidence[rows], correct[rows]))
    low, high = interval(statistic, clusters, resamples=500)
    assert low < brier_score(confidence, correct) < high


def test_every_statistic_sees_the_same_resamples():
    data = np.random.default_rng(9).normal(size=40)
    clusters = clusters_of([i // 2 for i in range(40)])
    both = cluster_bootstrap(
        {"mean": mean_of(data), "twice": lambda c: 2 * mean_of(data)(c)}, clusters, seed=2
    )
    twice, once = both["twice"].ci, both["mean"].ci
    assert twice == pytest.approx(tuple(2 * x for x in once), abs=1e-12)


@pytest.mark.parametrize(
    "clusters",
    [pytest.param([], id="no-clusters"), pytest.param([[0, 1, 2]], id="one-cluster")],
)
def test_fewer_than_two_clusters_give_no_interval(clusters):
    assert interval(mean_of([1.0, 2.0, 3.0]), clusters) == (None, None)


def test_resamples_without_a_value_are_dropped():
    # nan unless cluster 0 is drawn: 1 − (1/2)² = 3/4 of resamples keep a value, and
    # they all equal 1.0; the nan ones (cluster 0 missing) must not poison the quantiles.
    def statistic(counts):
        return np.where(counts[:, 0] > 0, 1.0, np.nan)

    assert interval(statistic, [[0], [1]], resamples=400) == (1.0, 1.0)


def test_no_interval_when_fewer_than_half_the_resamples_give_a_value():
    # A value only when all 4 clusters are drawn: 4!/4⁴ ≈ 9% of resamples.
    def statistic(counts):
        return np.where((counts > 0).all(axis=1), 1.0, np.nan)

    assert interval(statistic, [[0], [1], [2], [3]], resamples=400) == (None, None)


@pytest.mark.parametrize(
    ("kwargs", "clusters", "message"),
    [
        pytest.param({"resamples": 0}, [[0], [1]], "resamples", id="no-resamples"),
        pytest.param({"confidence": 1.0}, [[0], [1]], "confidence", id="confidence-one"),
        pytest.param({}, [[0], []], "at least one row", id="empty-cluster"),
        pytest.param({}, [[0], [0, 1]], "each row once", id="row-twice"),
        pytest.param({}, [[0], [2]], "each row once", id="row-missing"),
    ],
)
def test_bad_arguments_are_rejected(kwargs, clusters, message):
    with pytest.raises(ValueError, match=message):
        interval(mean_of([1.0, 2.0, 3.0]), clusters, **kwargs)


def test_totals_by_code_sum_the_counts_of_each_code_per_resample():
    counts = np.array([[1.0, 2.0, 0.0, 1.0], [0.0, 0.0, 3.0, 1.0]])
    got = totals_by_code(np.array([0, 2, 2, 1]), counts, 3)
    np.testing.assert_array_equal(got, [[1.0, 1.0, 2.0], [0.0, 1.0, 3.0]])


def test_constant_in_looks_only_at_the_rows_a_resample_holds():
    x = np.array([1.0, 1.0, 2.0])
    counts = np.array([[2.0, 1.0, 0.0], [1.0, 0.0, 2.0]])
    assert list(constant_in(x, counts)) == [True, False]


def test_midranks_are_scipy_rankdata_of_the_resampled_rows():
    from scipy.stats import rankdata

    x = np.array([3.0, 1.0, 3.0, 2.0])
    counts = np.array([[1.0, 2.0, 0.0, 1.0]])  # rows 0, 1, 1, 3 → values 3, 1, 1, 2
    ranks = midranks_in(x, counts)[0]
    expected = rankdata([3.0, 1.0, 1.0, 2.0])  # 4, 1.5, 1.5, 3
    assert [ranks[0], ranks[1], ranks[3]] == [expected[0], expected[1], expected[3]]
