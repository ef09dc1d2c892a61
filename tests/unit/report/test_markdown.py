"""report.py: the headline, report.md and the terminal tables, as a CI log shows them (80
columns: rich's width when stderr is not a terminal), and the run comparison.
"""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from judgecli.report.cells import SHORT_CELL, TOO_FEW_TEXT, count_of, wrap_header
from judgecli.report.compare import compare_section, compare_tables
from judgecli.report.markdown import (
    headline,
    render_markdown,
    sections,
    terminal_tables,
)
from judgecli.result import CaseResult, CaseStatus
from judgecli.summary.agreement import AgreementSummary
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.compare import Delta
from judgecli.summary.facts import CategorySummary
from judgecli.summary.gate_records import GateMetric, GateOn, GateResult
from judgecli.summary.head import run_facts
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.refine import RefineSummary
from judgecli.summary.score import ScoreSummary

INCOMPLETE = "the judge could not grade 24 of 30 cases"


def facts(n_cases=30, n_failed=0):
    rows = [
        CaseResult(id=str(i), status=CaseStatus.OK, rubric_hash="h")
        for i in range(n_cases - n_failed)
    ]
    rows += [
        CaseResult(id=f"f{i}", status=CaseStatus.FAILED, error="HTTP 500", rubric_hash="h")
        for i in range(n_failed)
    ]
    out = run_facts(rows, rubric=None, models=["openai/gpt-4o-mini"])
    return out | {"rubric": "helpfulness", "rubric_version": 2, "rubric_hash": "abc123"}


def pairwise(wins, losses, ties, **extra):
    n = wins + losses + ties
    # Without flip: "NO — position bias not removed", a long cell that must fit 80 columns.
    return PairwiseSummary(
        **facts(n_cases=max(n, 1) if n else 3, n_failed=0 if n else 3),
        wins=wins,
        losses=losses,
        ties=ties,
        dropped=0,
        flip=False,
        flip_policy="tie",
        win_rate=(wins + ties / 2) / n if n else None,
        win_rate_ci=(0.7, 0.9) if n else (None, None),
        **extra,
    )


def calibrate():
    """Every measure of a calibrate run, a perfect accuracy among them, beside human–human."""
    measures = {
        "accuracy": 1.0,
        "within_one": 1.0,
        "cohen_kappa": 0.61,
        "weighted_kappa": 0.88,
        "krippendorff_alpha": 0.88,
        "spearman": 0.89,
        "kendall": 0.83,
        "pearson": 0.88,
        "macro_f1": 0.69,
    }
    return CalibrateSummary(
        **facts(),
        n_labels=30,
        n_labelled_cases=30,
        n_labels_total=30,
        n_unmatched_labels=0,
        **measures,
        accuracy_ci=(1.0, 1.0),
        within_one_ci=(1.0, 1.0),
        cohen_kappa_ci=(0.22, 0.86),
        weighted_kappa_ci=(0.57, 0.97),
        spearman_ci=(0.6, 1.0),
        kendall_ci=(0.59, 1.0),
        pearson_ci=(0.63, 0.98),
        human_human=AgreementSummary(n_labels=4, n_labelled_cases=2, **measures),
        judge_vs_majority=AgreementSummary(n_labels=4, n_labelled_cases=2, **measures),
    )


def score():
    small = CategorySummary(
        n=4, mean=3.0, mean_ci=None, pass_rate=1.0, pass_rate_ci=(0.5101091635454027, 1.0)
    )
    big = CategorySummary(
        n=26, mean=3.1, mean_ci=(2.9, 3.3), pass_rate=0.8, pass_rate_ci=(0.6, 0.9)
    )
    return ScoreSummary(
        **facts(),
        mean=3.04,
        mean_ci=(2.9, 3.2),
        pass_rate=0.8,
        pass_rate_ci=(0.63, 0.91),
        distribution={"1": 0, "2": 3, "3": 20, "4": 7},
        by_category={"travel": small, "science": big},
    )


def in_80_columns(summary):
    console = Console(width=80, record=True, file=io.StringIO())
    for table in terminal_tables(summary):
        console.print(table)
    return console.export_text()


SUMMARIES = {
    "calibrate": calibrate,
    "score": score,
    "pairwise": lambda: pairwise(
        21,
        8,
        1,
        by_category={
            "health": CategorySummary(
                n=5, win_rate=1.0, win_rate_ci=(0.5655175352168252, 1.0), wins=5, losses=0, ties=0
            )
        },
    ),
}


# Regression (review 2026-11-23, finding 13): "quadratic-wei… κ", "Krippendorff's / α" and
# "[100.0%, / 100.0%]" in calibrate tables piped to a CI log.
@pytest.mark.parametrize("kind", list(SUMMARIES))
def test_no_label_or_number_is_cut_or_wrapped_at_80_columns(kind):
    summary = SUMMARIES[kind]()
    text = in_80_columns(summary)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in text
    for section in sections(summary):
        for row in section.rows:
            for i, cell in enumerate(row):
                if i == 0 or len(cell) <= SHORT_CELL:
                    assert any(cell in line for line in lines), (section.title, cell)


def test_calibrate_labels_and_perfect_intervals_read_whole_at_80_columns():
    lines = in_80_columns(calibrate()).splitlines()
    for text in ["quadratic-weighted κ", "Krippendorff's α", "[100.0%, 100.0%]"]:
        assert any(text in line for line in lines), text


@pytest.mark.parametrize(
    ("header", "width", "expected"),
    [
        pytest.param("judge–human", 6, "judge–\nhuman", id="en-dash"),
        pytest.param("paired cases", 6, "paired\ncases", id="space"),
        pytest.param("95% CI", 20, "95% CI", id="fits"),
        pytest.param("quadratic-weighted", 4, "quadratic-weighted", id="never-cut"),
    ],
)
def test_a_header_wraps_at_spaces_and_en_dashes_but_is_never_cut(header, width, expected):
    assert wrap_header(header, width) == expected


@pytest.mark.parametrize(
    ("n", "singular", "plural", "expected"),
    [
        pytest.param(1, "tie", None, "1 tie", id="one-tie"),
        pytest.param(0, "tie", None, "0 ties", id="no-ties"),
        pytest.param(21, "loss", "losses", "21 losses", id="losses"),
        pytest.param(1, "loss", "losses", "1 loss", id="one-loss"),
    ],
)
def test_counts_take_the_right_number(n, singular, plural, expected):
    assert count_of(n, singular, plural) == expected


# Regression (review 2026-11-23, finding 21): "21 losses, 1 ties" and "win rate n/a n/a".
def test_the_pairwise_headline_counts_in_words_that_agree():
    line = headline(pairwise(21, 8, 1))
    assert "(ties count half; 21 wins, 8 losses, 1 tie)" in line
    assert "1 loss," in headline(pairwise(3, 1, 0))


def test_a_pairwise_run_with_nothing_graded_says_there_is_no_win_rate():
    line = headline(pairwise(0, 0, 0))
    assert line == "NEW vs OLD: no win rate (no case was graded)"


def test_an_incomplete_run_heads_its_report_with_incomplete_not_pass_or_fail():
    summary = pairwise(4, 1, 1, incomplete=INCOMPLETE)
    # Never shown once the run is incomplete.
    summary.gate = GateResult(
        passed=False,
        metric=GateMetric.WIN_RATE,
        threshold=0.9,
        value=0.75,
        on=GateOn.POINT,
        checks=[],
    )
    line = headline(summary)
    assert line.startswith(f"INCOMPLETE — {INCOMPLETE}; no verdict.")
    assert "On the 6 cases graded: NEW vs OLD: win rate 75.0%" in line
    assert "FAIL" not in line
    assert "PASS" not in line
    md = render_markdown(summary)
    assert md.splitlines()[2] == f"**{line}**"


def test_an_incomplete_run_with_nothing_graded_gives_no_numbers():
    summary = pairwise(0, 0, 0, incomplete="the judge could not grade 3 of 3 cases")
    assert headline(summary) == "INCOMPLETE — the judge could not grade 3 of 3 cases; no verdict."


# Regression (review 2026-11-23, finding 19): "mean attempts 0.29" counted regenerations.
def test_refine_reports_regenerations_per_case():
    summary = RefineSummary(
        **facts(),
        generator="gen/model",
        max_attempts=3,
        mean_attempts=0.29,
        pass_rate_first=0.5,
        pass_rate_first_ci=(0.33, 0.67),
        pass_rate_final=0.8,
        pass_rate_final_ci=(0.63, 0.9),
        n_passed=24,
        n_exhausted=6,
        lift=0.4,
        lift_ci=(0.2, 0.6),
        lift_ci_t=(0.19, 0.61),
        by_attempt={},
        cost_generation_usd=0.0,
        cost_judging_usd=0.0,
        never_passed=[],
    )
    assert "0.29 regenerations per case" in headline(summary)
    rows = {row[0]: row[1] for row in sections(summary)[0].rows}
    assert rows["regenerations per case"] == "0.29"
    assert "mean attempts" not in render_markdown(summary)


# Regression (review 2026-11-23, finding 9): "travel 3.00 [3.00, 3.00]" and
# "health 100.0% [100.0%, 100.0%]" over 4 and 5 cases.
@pytest.mark.parametrize("kind", ["score", "pairwise"])
def test_categories_under_ten_cases_are_too_few_to_tell(kind):
    summary = SUMMARIES[kind]()
    (table,) = [s for s in sections(summary) if s.title == "by category"]
    for row in table.rows:
        small = int(row[1]) < 10
        assert (TOO_FEW_TEXT in row) is small, row
        assert not any(re.fullmatch(r"\[(.+), \1\]", cell) for cell in row), row
    assert TOO_FEW_TEXT in render_markdown(summary)
    assert TOO_FEW_TEXT in in_80_columns(summary)


DELTAS = [
    Delta("win_rate", a=0.817, b=0.45, delta=-0.367, ci=(-0.5, -0.2), n_paired=30, rate=True),
    Delta("mean", a=3.04, b=3.5, delta=0.46, ci=(0.2, 0.7), n_paired=24),
]


# Regression (review 2026-11-23, finding 20): the header said "B vs A" over columns A, B,
# and rates showed as 0.817 where every other report says 81.7%.
def test_the_run_comparison_reads_a_then_b_with_rates_as_percentages():
    section = compare_section(DELTAS, "runs/pw-pass", "runs/pw-fail")
    assert section.title.startswith("A → B: runs/pw-pass → runs/pw-fail")
    assert section.header[1:4] == ["A", "B", "B − A"]
    assert section.rows[0] == (
        "win_rate",
        "81.7%",
        "45.0%",
        "-36.7 pts",
        "[-50.0, -20.0] pts",
        "30",
    )
    assert section.rows[1] == ("mean", "3.040", "3.500", "+0.460", "[0.20, 0.70]", "24")
    console = Console(width=80, record=True, file=io.StringIO())
    for table in compare_tables(DELTAS, "runs/pw-pass", "runs/pw-fail"):
        console.print(table)
    assert "[-50.0, -20.0] pts" in console.export_text()


def test_a_score_headline_leaves_out_a_mean_interval_that_does_not_exist():
    # Every score equal: the t interval is undefined, and "mean 3.00 n/a" reads as a glitch.
    summary = score().model_copy(update={"mean": 3.0, "mean_ci": (None, None)})
    assert "30 of 30 cases graded, mean 3.00, pass rate 80.0%" in headline(summary)
