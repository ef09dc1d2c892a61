"""`judge report`: re-render a finished run, write report.html, compare two runs; and the
report files every run writes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.integration.conftest import REPO

EXAMPLE = REPO / "datasets" / "example.jsonl"


def score(run_cli, server, out, *extra):
    return run_cli(
        server, "score", str(EXAMPLE), "--rubric", "helpfulness", "--out", out, "--quiet", *extra
    )


def test_every_run_writes_html_and_junit_reports(run_cli, judge_server):
    assert score(run_cli, judge_server, "run").exit_code == 0
    html = Path("run/report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") or html.lower().startswith("<!doctype html>")
    assert "https://" not in html
    assert "http://" not in html
    suites = ET.parse("run/results.junit.xml").getroot()
    assert int(suites.get("tests")) == 24


def test_report_reprints_a_finished_run_without_calling_a_judge(run_cli, judge_server):
    score(run_cli, judge_server, "run")
    calls = len(judge_server.requests)
    Path("run/report.html").unlink()
    again = run_cli(None, "report", "run", "--json")
    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout) == json.loads(Path("run/summary.json").read_text())
    assert "mean score" in again.stderr
    assert not Path("run/report.html").exists()
    html = run_cli(None, "report", "run", "--html")
    assert html.exit_code == 0
    assert Path("run/report.html").exists()
    assert len(judge_server.requests) == calls


def test_report_compares_two_runs_of_one_rubric_case_by_case(run_cli, judge_server):
    score(run_cli, judge_server, "a")
    # Same cases, the judge now gives every answer a 4.
    for _ in range(24):
        judge_server.enqueue('{"reasoning": "great", "score": 4, "feedback": "none"}')
    score(run_cli, judge_server, "b", "--no-cache")
    run = run_cli(None, "report", "a", "b", "--json")
    assert run.exit_code == 0, run.stderr
    deltas = {d["metric"]: d for d in json.loads(run.stdout)}
    a_mean = json.loads(Path("a/summary.json").read_text())["mean"]
    assert deltas["mean"]["n_paired"] == 24
    assert abs(deltas["mean"]["delta"] - (4 - a_mean)) < 1e-9
    assert deltas["mean"]["b"] == 4.0
    assert deltas["pass_rate"]["rate"] is True
    # Regression (review 2026-11-23, finding 20): the title said "b vs a" over columns A, B,
    # and rates showed as 0.817.
    shown = run.stderr + run.stdout  # the table, wherever the CLI prints it
    assert "A → B: a → b" in shown
    assert "B − A" in shown
    # The deltas' row (the paired tests' table has a pass_rate row of p-values too).
    (row,) = [line for line in shown.splitlines() if "pass_rate" in line and " pts" in line]
    assert "100.0%" in row
    assert "McNemar (exact)" in shown


def test_report_refuses_to_compare_different_rubrics(run_cli, judge_server):
    score(run_cli, judge_server, "a", "--limit", "2")
    old, new = REPO / "datasets" / "old.jsonl", REPO / "datasets" / "new.jsonl"
    run_cli(judge_server, "pairwise", str(old), str(new), "--out", "b", "--quiet", "--limit", "2")
    run = run_cli(None, "report", "a", "b")
    assert run.exit_code == 2
    assert "not runs of the same command and rubric" in run.stderr


def test_report_on_an_unfinished_run_points_to_resume(run_cli):
    Path("half").mkdir()
    Path("half/run.json").write_text("{}")
    run = run_cli(None, "report", "half")
    assert run.exit_code == 2
    assert "judge resume half" in run.stderr


# Regression (review 2026-11-23, finding 21): any folder got the `judge resume` hint.
def test_report_on_a_folder_that_is_no_run_does_not_suggest_resume(run_cli):
    Path("random").mkdir()
    run = run_cli(None, "report", "random")
    assert run.exit_code == 2
    assert "not a judge run directory" in run.stderr
    assert "resume" not in run.stderr
