"""report.qualify: a qualify run's table, headline and JUnit (issue 34)."""

from __future__ import annotations

from judgecli.report.qualify import qualify_headline, render_qualify_junit, render_qualify_md, row
from judgecli.summary.facts import Usage
from judgecli.summary.qualify import QualifyGate, QualifySummary, SetQualification


def qualified(passed: bool | None, **fields) -> SetQualification:
    return SetQualification(
        name="natural",
        n=100,
        n_cases=100,
        n_failed=0,
        agreement=0.82,
        agreement_ci=(0.7333, 0.8830),
        kappa=0.67,
        kappa_ci=(0.54, 0.79),
        position_consistency=1.0,
        position_consistency_ci=(0.963, 1.0),
        passed=passed,
        file="s.jsonl",
        sha256="0" * 64,
        bundled=True,
        **fields,
    )


def summary(sets, gate=None, incomplete=None) -> QualifySummary:
    return QualifySummary(
        rubric="pairwise",
        rubric_version=1,
        rubric_hash="h",
        models=["m"],
        judge_version="t",
        n_cases=100,
        n_ok=100,
        n_failed=0,
        usage=Usage(),
        sets=sets,
        gate=gate,
        incomplete=incomplete,
    )


def test_a_row_shows_each_number_with_its_interval_and_the_floor():
    assert row(qualified(False)) == [
        "natural",
        "100",
        "82.0% [73.3%, 88.3%]",
        "0.67 [0.54, 0.79]",
        "100.0% [96.3%, 100.0%]",
        "–",
        "FAIL",
    ]


def test_a_set_below_the_floor_is_a_junit_failure_and_the_headline_names_it():
    gate = QualifyGate(passed=False, decided=True, min_agreement=0.8, failed_sets=["natural"])
    s = summary([qualified(False)], gate)
    assert qualify_headline(s).startswith("NOT QUALIFIED")
    assert "below 0.8 on natural" in qualify_headline(s)
    junit = render_qualify_junit(s)
    assert 'failures="1"' in junit
    assert "Unqualified" in junit
    assert "| natural | 100 | 82.0% [73.3%, 88.3%]" in render_qualify_md(s)


def test_an_incomplete_run_is_a_junit_error_not_a_failure():
    s = summary([qualified(None)], incomplete="the judge could not grade 90 of 100 cases")
    junit = render_qualify_junit(s)
    assert 'errors="1"' in junit
    assert 'failures="0"' in junit
    assert qualify_headline(s).startswith("INCOMPLETE")
