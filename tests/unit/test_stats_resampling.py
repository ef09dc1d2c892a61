import numpy as np
import pytest
from scipy.stats import bootstrap

from judgecli.stats.calibration import brier_score
from judgecli.stats.resampling import cluster_bootstrap_interval, clusters_of


def mean_of(values):
    values = np.asarray(values, dtype=np.float64)

    def statistic(rows):
        return float(values[rows].mean()) if rows.size else None

    return statistic


def test_clusters_of_groups_rows_by_case_in_first_seen_order():
    assert clusters_of(["a", "b", "a", "c", "b", "a"]) == [[0, 2, 5], [1, 4], [3]]
    assert clusters_of([]) == []


def test_one_row_per_cluster_is_the_ordinary_bootstrap():
    data = np.random.default_rng(7).normal(10.0, 2.0, 200)
    low, high = cluster_bootstrap_interval(
        mean_of(data), clusters_of([str(i) for i in range(200)]), resamples=4000, seed=1
    )
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


def test_the_interval_is_deterministic_for_a_seed():
    data = np.random.default_rng(0).normal(size=60)
    clusters = clusters_of([str(i // 3) for i in range(60)])
    first = cluster_bootstrap_interval(mean_of(data), clusters, resamples=300, seed=5)
    again = cluster_bootstrap_interval(mean_of(data), clusters, resamples=300, seed=5)
    other = cluster_bootstrap_interval(mean_of(data), clusters, resamples=300, seed=6)
    assert first == again
    assert first != other


def test_correlated_rows_give_a_wider_interval_than_independent_rows():
    # 20 cases with 10 labels each; the labels of a case are all the same value (the
    # case's effect), so there are 20 independent observations, not 200. The cluster
    # standard error is sd/√20, the row bootstrap's sd/√200: √10 ≈ 3.2 times narrower.
    rng = np.random.default_rng(11)
    effects = rng.normal(0.0, 1.0, 20)
    values = np.repeat(effects, 10)
    case_ids = [str(i) for i in np.repeat(np.arange(20), 10)]
    by_case = cluster_bootstrap_interval(mean_of(values), clusters_of(case_ids), seed=0)
    by_row = cluster_bootstrap_interval(
        mean_of(values), clusters_of([str(i) for i in range(200)]), seed=0
    )
    assert by_case[1] - by_case[0] > 2.0 * (by_row[1] - by_row[0])


def test_clusters_keep_their_rows_together():
    # Each case has one right and one wrong row; a resample of whole cases is always
    # half right, so the interval of the share right is the single point 0.5.
    correct = np.array([1.0, 0.0] * 8)
    clusters = clusters_of([str(i // 2) for i in range(16)])
    assert cluster_bootstrap_interval(mean_of(correct), clusters, resamples=200) == (0.5, 0.5)


def test_a_calibration_statistic_through_a_closure():
    rng = np.random.default_rng(4)
    confidence = rng.uniform(0.5, 1.0, 300)
    correct = rng.uniform(size=300) < confidence
    clusters = clusters_of([str(i // 3) for i in range(300)])
    low, high = cluster_bootstrap_interval(
        lambda rows: brier_score(confidence[rows], correct[rows]), clusters, resamples=500
    )
    assert low < brier_score(confidence, correct) < high


@pytest.mark.parametrize(
    "clusters",
    [pytest.param([], id="no-clusters"), pytest.param([[0, 1, 2]], id="one-cluster")],
)
def test_fewer_than_two_clusters_give_no_interval(clusters):
    assert cluster_bootstrap_interval(mean_of([1.0, 2.0, 3.0]), clusters) == (None, None)


def test_resamples_without_a_value_are_dropped():
    # None unless cluster 0 is drawn: 1 − (1/2)² = 3/4 of resamples keep a value, and
    # they all equal 1.0; the nan ones (cluster 0 missing) must not poison the quantiles.
    def statistic(rows):
        return 1.0 if 0 in rows else float("nan")

    assert cluster_bootstrap_interval(statistic, [[0], [1]], resamples=400) == (1.0, 1.0)


def test_no_interval_when_fewer_than_half_the_resamples_give_a_value():
    # A value only when all 4 clusters are drawn: 4!/4⁴ ≈ 9% of resamples.
    def statistic(rows):
        return 1.0 if len(set(rows.tolist())) == 4 else None

    assert cluster_bootstrap_interval(statistic, [[0], [1], [2], [3]], resamples=400) == (
        None,
        None,
    )


@pytest.mark.parametrize(
    ("kwargs", "clusters", "message"),
    [
        pytest.param({"resamples": 0}, [[0], [1]], "resamples", id="no-resamples"),
        pytest.param({"confidence": 1.0}, [[0], [1]], "confidence", id="confidence-one"),
        pytest.param({}, [[0], []], "at least one row", id="empty-cluster"),
    ],
)
def test_bad_arguments_are_rejected(kwargs, clusters, message):
    with pytest.raises(ValueError, match=message):
        cluster_bootstrap_interval(mean_of([1.0, 2.0]), clusters, **kwargs)
