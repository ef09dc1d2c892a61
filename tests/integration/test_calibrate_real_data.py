"""`judge calibrate --results` on published judge verdicts with human labels.

LLMBar (tests/llmbar.py): GPT-4's and ChatGPT's pairwise verdicts, in both orders, on the
three human-labelled Processed sets. judge's `by_order` is the authors' per-order accuracy
(`correct_False`, `correct_True`) and its mean is their Acc. (`correct_average`), counted
exactly; judge's Cohen's κ is the correctly encoded one, which the authors' `kappa_*`
fields are not (tests/data/llmbar/SOURCE.md).

How unparsed replies count (tests/unit/summary/test_llmbar.py found it; `Unparsed` counts it): the
authors keep an instance with a null winner in n and call the null wrong, while judge fails
the case and leaves it out, with both its orders, of every calibrate number. So where a run
has nulls (only the LLMEval^2 runs do), with f failed cases and e_o of them right in order o,
    judge's by_order[o] = (authors' correct_o − e_o) / (n − f),
and n_labels = n − f. The denominators differ on purpose: counting a null as wrong would
guess a verdict, which judge never does.

OpenMEVA (tests/openmeva.py): ChatGPT's 1–5 stars against mean human ratings of 1,000
story continuations. judge's correlations are scipy's over the same pairs and the
dataset-level values recorded when the file was fetched (RECOMPUTED); the human means are
not whole points, so there is no κ. Opt-in: the file cannot be in the repository (no
licence), and these tests skip saying where to get it ($JUDGE_TEST_DATA).

Each input goes through the CLI once (RUN_CACHE) and several tests read the run.
"""

from __future__ import annotations

import json
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from scipy.stats import kendalltau, pearsonr, spearmanr
from sklearn.metrics import cohen_kappa_score

from tests.llmbar import (
    LABEL_MAP,
    Replay,
    Statistics,
    Unparsed,
    count_unparsed,
    load_replay,
    read_raw_verdicts,
    read_statistics,
    run_dir,
    write_calibration_files,
)
from tests.openmeva import MISSING, OPENMEVA, Rating, read_ratings, write_files

needs_openmeva = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

SETS = {"MT-Bench": "mtbench", "FairEval": "faireval", "LLMEval^2": "llmeval2"}
STRATEGIES = {"Vanilla_NoRules": "norules", "Metrics_Reference": "metrics-ref"}
EVALUATORS = {"GPT-4": "gpt4", "ChatGPT": "chatgpt"}

# Every Processed run with a result.json. The Metrics_Reference runs write LLMBar's own
# 1/2 labels and read them with --label-map; the others write "old"/"new".
RUNS = [
    pytest.param(
        f"Processed/{name}",
        evaluator,
        strategy,
        strategy == "Metrics_Reference",
        id=f"{short}-{EVALUATORS[evaluator]}-{STRATEGIES[strategy]}",
    )
    for name, short in SETS.items()
    for evaluator in EVALUATORS
    for strategy in STRATEGIES
]

# Cohen's κ of the case-level verdict (old/new when both orders agree, tie when they
# differ; failed cases left out) against the gold label, pinned once from
# sklearn.metrics.cohen_kappa_score(gold, verdict, labels=["old", "new", "tie"]); the
# recomputation is test_the_pinned_kappa_is_sklearns_on_the_raw_verdicts.
KAPPA = {
    ("Processed/MT-Bench", "GPT-4", "Vanilla_NoRules"): 0.5486725663716814,
    ("Processed/MT-Bench", "GPT-4", "Metrics_Reference"): 0.5343221800620904,
    ("Processed/MT-Bench", "ChatGPT", "Vanilla_NoRules"): 0.298122477627654,
    ("Processed/MT-Bench", "ChatGPT", "Metrics_Reference"): 0.3017420082190785,
    ("Processed/FairEval", "GPT-4", "Vanilla_NoRules"): 0.34514528703047487,
    ("Processed/FairEval", "GPT-4", "Metrics_Reference"): 0.20998632010943918,
    ("Processed/FairEval", "ChatGPT", "Vanilla_NoRules"): 0.0796146044624747,
    ("Processed/FairEval", "ChatGPT", "Metrics_Reference"): 0.11314162859446375,
    ("Processed/LLMEval^2", "GPT-4", "Vanilla_NoRules"): 0.4934966296401785,
    ("Processed/LLMEval^2", "GPT-4", "Metrics_Reference"): 0.46962769431743956,
    ("Processed/LLMEval^2", "ChatGPT", "Vanilla_NoRules"): 0.34658405754917043,
    ("Processed/LLMEval^2", "ChatGPT", "Metrics_Reference"): 0.36400792667822646,
}
KAPPA_FIELDS = ("kappa_False", "kappa_True", "kappa_average", "kappa_agreement")
CASE_LABELS = ["old", "new", "tie"]
WINNER = {"1": "old", "2": "new"}


def fraction(x: float, max_denominator: int) -> Fraction:
    """The count ratio k/m (m ≤ max_denominator) that the float x holds.

    Exact: two such ratios differ by at least 1/max_denominator² (≥ 1/160,000 here), while
    x is within a few ulps (~1e-16) of its ratio, so limit_denominator finds that ratio and
    no other; the assertion checks x really is that close to it.
    """
    found = Fraction(x).limit_denominator(max_denominator)
    assert abs(float(found) - x) < 1e-12
    return found


@cache
def replayed(subset: str, evaluator: str, strategy: str) -> tuple[Replay, Statistics, Unparsed]:
    directory = run_dir(subset, evaluator, strategy)
    return (
        load_replay(directory, model=evaluator),
        read_statistics(directory),
        count_unparsed(directory),
    )


# One CLI run per input, read by several tests.
RUN_CACHE: dict[tuple[str, ...], tuple[dict[str, Any], Path]] = {}


def calibrated(run_cli, directory: Path, *args: str) -> tuple[dict[str, Any], Path]:
    """`judge calibrate --results --labels --json` on directory/{results,labels}.jsonl;
    (the --json summary, the run directory)."""
    out = directory / "run"
    run = run_cli(
        None,
        "calibrate",
        "--results",
        str(directory / "results.jsonl"),
        "--labels",
        str(directory / "labels.jsonl"),
        "--out",
        str(out),
        "--json",
        "--quiet",
        *args,
    )
    assert run.exit_code == 0, run.stderr
    # stdout is summary.json exactly.
    assert run.summary == json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return run.summary, out


def calibrate_llmbar(
    run_cli, tmp_path_factory, subset: str, evaluator: str, strategy: str, numbered: bool
) -> tuple[dict[str, Any], Path, Statistics, Unparsed]:
    replay, stats, unparsed = replayed(subset, evaluator, strategy)
    key = (subset, evaluator, strategy, str(numbered))
    if key not in RUN_CACHE:
        directory = tmp_path_factory.mktemp("llmbar")
        write_calibration_files(directory, replay, numbered=numbered)
        args = ("--label-map", LABEL_MAP) if numbered else ()
        RUN_CACHE[key] = calibrated(run_cli, directory, *args)
    summary, out = RUN_CACHE[key]
    return summary, out, stats, unparsed


@pytest.mark.parametrize(("subset", "evaluator", "strategy", "numbered"), RUNS)
def test_accuracy_in_each_order_is_the_authors_correct_false_and_true_over_graded_cases(
    run_cli, tmp_path_factory, subset, evaluator, strategy, numbered
):
    """by_order counts the cases judge graded (n − f); without nulls that is the authors' n
    and the three numbers are theirs exactly; with nulls, the exact relation of the module
    docstring."""
    summary, _, stats, unparsed = calibrate_llmbar(
        run_cli, tmp_path_factory, subset, evaluator, strategy, numbered
    )
    graded = stats.n - unparsed.failed
    correct_false = stats.correct_false - unparsed.correct_false
    correct_true = stats.correct_true - unparsed.correct_true
    by_order = summary["by_order"][evaluator]
    assert set(summary["by_order"]) == {evaluator}
    assert fraction(by_order["old-new"], graded) == Fraction(correct_false, graded)
    assert fraction(by_order["new-old"], graded) == Fraction(correct_true, graded)
    assert fraction(by_order["mean"], 2 * graded) == Fraction(
        correct_false + correct_true, 2 * graded
    )
    # The authors' Acc. is (correct_False + correct_True) / 2n in percent.
    authors_mean = Fraction(stats.correct_average) / 100
    assert fraction(float(authors_mean), 2 * stats.n) == Fraction(
        stats.correct_false + stats.correct_true, 2 * stats.n
    )
    if unparsed.failed == 0:
        assert fraction(by_order["old-new"], stats.n) == Fraction(stats.correct_false, stats.n)
        assert fraction(by_order["new-old"], stats.n) == Fraction(stats.correct_true, stats.n)
        assert fraction(by_order["mean"], 2 * stats.n) == fraction(float(authors_mean), 2 * stats.n)


@pytest.mark.parametrize(("subset", "evaluator", "strategy", "numbered"), RUNS)
def test_labels_of_failed_cases_are_counted_and_left_out(
    run_cli, tmp_path_factory, subset, evaluator, strategy, numbered
):
    summary, _, stats, unparsed = calibrate_llmbar(
        run_cli, tmp_path_factory, subset, evaluator, strategy, numbered
    )
    assert (summary["n_labels_total"], summary["n_labels"], summary["n_unmatched_labels"]) == (
        stats.n,
        stats.n - unparsed.failed,
        unparsed.failed,
    )
    assert (summary["n_ok"], summary["n_failed"]) == (stats.n - unparsed.failed, unparsed.failed)
    warned = [w for w in summary["warnings"] if "have no judge verdict" in w]
    assert len(warned) == (1 if unparsed.failed else 0)


@pytest.mark.parametrize(("subset", "evaluator", "strategy", "numbered"), RUNS)
def test_case_level_agreement_is_the_authors_both_orders_correct(
    run_cli, tmp_path_factory, subset, evaluator, strategy, numbered
):
    """A case-level verdict is gold only when both orders named gold (a flip is a tie, and
    humans never said tie), so accuracy = correct_both / graded cases; leaving ties out
    leaves the position-consistent cases, the authors' `equal` less the both-null ones."""
    summary, out, stats, unparsed = calibrate_llmbar(
        run_cli, tmp_path_factory, subset, evaluator, strategy, numbered
    )
    graded = stats.n - unparsed.failed
    consistent = stats.equal - unparsed.both
    assert fraction(summary["accuracy"], graded) == Fraction(stats.correct_both, graded)
    assert summary["agreement_with_ties"] == summary["accuracy"]
    assert fraction(summary["agreement_without_ties"], consistent) == Fraction(
        stats.correct_both, consistent
    )
    assert summary["confusion"]["matrix"][0][2] + summary["confusion"]["matrix"][1][2] == (
        graded - consistent
    )
    disagreements = (out / "disagreements.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(disagreements) == graded - stats.correct_both


@pytest.mark.parametrize(("subset", "evaluator", "strategy", "numbered"), RUNS)
def test_cohen_kappa_is_the_correctly_encoded_one_not_the_authors_kappa_fields(
    run_cli, tmp_path_factory, subset, evaluator, strategy, numbered
):
    summary, _, _, _ = calibrate_llmbar(
        run_cli, tmp_path_factory, subset, evaluator, strategy, numbered
    )
    kappa = KAPPA[subset, evaluator, strategy]
    # judge sums the confusion matrix in another order than sklearn: last-bit differences.
    assert summary["cohen_kappa"] == pytest.approx(kappa, rel=0, abs=1e-12)
    authors = json.loads((run_dir(subset, evaluator, strategy) / "statistics.json").read_text())
    for field in KAPPA_FIELDS:
        # The closest pair over the 12 runs is 0.0042 apart (FairEval ChatGPT).
        assert abs(summary["cohen_kappa"] - authors[field]) > 1e-3, field


@pytest.mark.parametrize(("subset", "evaluator", "strategy", "numbered"), RUNS)
def test_the_pinned_kappa_is_sklearns_on_the_raw_verdicts(subset, evaluator, strategy, numbered):
    graded = [
        (WINNER[str(v.label)], WINNER[v.unswapped] if v.unswapped == v.swapped else "tie")
        for v in read_raw_verdicts(run_dir(subset, evaluator, strategy))
        if v.unswapped is not None and v.swapped is not None
    ]
    gold, verdict = zip(*graded, strict=True)
    assert (
        cohen_kappa_score(gold, verdict, labels=CASE_LABELS) == KAPPA[subset, evaluator, strategy]
    )


@pytest.mark.parametrize(("subset", "evaluator", "strategy", "numbered"), RUNS)
def test_the_authors_kappa_fields_score_a_verdict_of_2_as_0(subset, evaluator, strategy, numbered):
    """LLMEvaluator/evaluate.py codes a verdict `int(v) if v in ("0", "1") else 0` against
    gold 1/2: "2" and null both become 0, which the gold never is. That reproduces every
    kappa_* field to the last bit; kept as 2, the same per-order κ is another number."""
    verdicts = read_raw_verdicts(run_dir(subset, evaluator, strategy))
    authors = json.loads((run_dir(subset, evaluator, strategy) / "statistics.json").read_text())

    def broken(v: str | None) -> int:
        return int(v) if v in ("0", "1") else 0

    gold = [v.label for v in verdicts]
    unswapped = [broken(v.unswapped) for v in verdicts]
    swapped = [broken(v.swapped) for v in verdicts]
    kappa_false = cohen_kappa_score(gold, unswapped)
    kappa_true = cohen_kappa_score(gold, swapped)
    assert (kappa_false, kappa_true, (kappa_false + kappa_true) / 2) == (
        authors["kappa_False"],
        authors["kappa_True"],
        authors["kappa_average"],
    )
    assert cohen_kappa_score(unswapped, swapped) == authors["kappa_agreement"]
    parsed = [(v.label, int(v.unswapped)) for v in verdicts if v.unswapped is not None]
    correct = cohen_kappa_score(*zip(*parsed, strict=True))
    assert abs(correct - authors["kappa_False"]) > 1e-3


# OpenMEVA ---------------------------------------------------------------------------------

# Dataset-level correlations of ChatGPT with humans over all 1,000, computed once with
# scipy.stats (spearmanr, kendalltau, pearsonr) when the file was fetched, to 4 places. The
# paper's table (arXiv 2303.04048) could not be read to compare them with.
RECOMPUTED = {"spearman": 0.4153, "kendall": 0.3421, "pearson": 0.4385}


@cache
def ratings() -> list[Rating]:
    assert OPENMEVA is not None
    return read_ratings(OPENMEVA)


def calibrate_openmeva(run_cli, tmp_path_factory) -> tuple[dict[str, Any], Path]:
    key = ("openmeva",)
    if key not in RUN_CACHE:
        directory = tmp_path_factory.mktemp("openmeva")
        write_files(directory, ratings())
        RUN_CACHE[key] = calibrated(run_cli, directory)
    return RUN_CACHE[key]


def columns() -> tuple[np.ndarray, np.ndarray]:
    """(human means, ChatGPT stars) over the 1,000 continuations."""
    return (
        np.array([r.human for r in ratings()], dtype=float),
        np.array([r.stars for r in ratings()], dtype=float),
    )


@needs_openmeva
def test_the_openmeva_files_hold_1000_rated_continuations_with_fractional_human_means():
    human, stars = columns()
    assert len({r.id for r in ratings()}) == len(human) == 1000
    assert set(stars) == {1.0, 2.0, 3.0, 4.0}  # ChatGPT gave no 5 stars
    assert not all(h.is_integer() for h in human)


@needs_openmeva
@pytest.mark.parametrize(
    ("name", "scipy_statistic"),
    [
        pytest.param("spearman", spearmanr, id="spearman"),
        pytest.param("kendall", lambda x, y: kendalltau(x, y, variant="b"), id="kendall-tau-b"),
        pytest.param("pearson", pearsonr, id="pearson"),
    ],
)
def test_correlations_are_scipys_and_the_recorded_dataset_level_values(
    run_cli, tmp_path_factory, name, scipy_statistic
):
    summary, _ = calibrate_openmeva(run_cli, tmp_path_factory)
    human, stars = columns()
    assert summary["n_labels"] == 1000
    assert summary[name] == pytest.approx(scipy_statistic(human, stars).statistic, abs=1e-9)
    assert round(summary[name], 4) == RECOMPUTED[name]
    low, high = summary[f"{name}_ci"]
    assert low < summary[name] < high


@needs_openmeva
def test_fractional_human_means_get_correlations_and_alpha_but_no_kappa_or_accuracy(
    run_cli, tmp_path_factory
):
    """κ and accuracy need the human label and the judge's score on one set of categories;
    a mean of raters such as 2.2 is on no whole-point scale, and rounding it would invent a
    label nobody gave (a weighted κ on the raw means would treat 2.2 as a category). judge
    reports neither (absent from --json and summary.json), keeps the rank and linear
    correlations, and takes Krippendorff's α at the interval level."""
    summary, _ = calibrate_openmeva(run_cli, tmp_path_factory)
    for absent in ("accuracy", "cohen_kappa", "weighted_kappa", "confusion", "per_class"):
        assert absent not in summary
    human, stars = columns()
    assert summary["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(np.vstack([stars, human]), level_of_measurement="interval"), abs=1e-12
    )
    # Adjacent agreement still has a meaning on fractional means: |human − stars| ≤ 1.
    assert fraction(summary["within_one"], 1000) == Fraction(
        int(np.count_nonzero(np.abs(human - stars) <= 1 + 1e-9)), 1000
    )


@needs_openmeva
def test_every_continuation_whose_mean_is_not_chatgpts_star_count_is_a_disagreement(
    run_cli, tmp_path_factory
):
    """On means in steps of 0.2 "judge ≠ human" is nearly every row: disagreements.jsonl is
    useful here only for its order, largest gap first."""
    _, out = calibrate_openmeva(run_cli, tmp_path_factory)
    human, stars = columns()
    rows = [json.loads(line) for line in (out / "disagreements.jsonl").read_text().splitlines()]
    assert len(rows) == int(np.count_nonzero(human != stars)) == 900
    gaps = [row["gap"] for row in rows]
    assert gaps == sorted(gaps, reverse=True)
    assert gaps[0] == pytest.approx(float(np.max(np.abs(human - stars))))
