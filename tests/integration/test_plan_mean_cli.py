"""`judge plan score ... --min-mean --sequential` through the CLI (issue 35): a real pilot
run's scores, mapped onto 0..1 by the rubric's scale as the sequential gate maps them, size
the sequence's expected and 95th-percentile cases; no judge is called; a rubric that cannot
map them is exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

from judgecli.deciding.planning import make_plan, pilot_of
from judgecli.summary.gate_records import GateMetric
from tests.integration.conftest import REPO

DATA = REPO / "datasets" / "example.jsonl"


def test_a_means_sequential_plan_is_sized_from_the_pilots_scores_on_the_rubrics_scale(
    run_cli, judge_server, tmp_path: Path
) -> None:
    pilot = tmp_path / "pilot"
    words = ["score", str(DATA), "--rubric", "helpfulness", "--out", str(pilot), "--quiet"]
    made = run_cli(judge_server, *words)
    assert made.exit_code in (0, 1), made.stderr
    judge_server.reset()
    results = [json.loads(line) for line in (pilot / "results.jsonl").read_text().splitlines()]
    scores = [float(r["score"]) for r in results if r.get("score") is not None]
    floor = round(sum(scores) / len(scores) - 0.2, 2)
    effect = round(floor + 0.3, 2)
    command = ["score", str(DATA), "--rubric", "helpfulness", "--model", "openai/sim"]
    command += ["--min-mean", str(floor), "--sequential"]

    run = run_cli(None, "plan", *command, "--effect", str(effect), "--pilot", str(pilot), "--json")

    assert run.exit_code == 0, run.stderr
    plan = json.loads(run.stdout)
    assert plan["on"] == "sequential"
    assert plan["sequential_expected"] <= plan["sequential_p95"] == plan["cases_needed"]
    # The same plan in-process from the scores read here (the rubric's 1..4 scale).
    expected = make_plan(command, effect=effect, pilot=pilot_of(pilot, scores, GateMetric.MEAN))
    assert plan["sequential_p95"] == expected.sequential_p95
    assert plan["sequential_expected"] == expected.sequential_expected
    assert judge_server.requests == []
    printed = run_cli(None, "plan", *command, "--effect", str(effect), "--pilot", str(pilot))
    assert f"{plan['sequential_p95']} at the 95th percentile" in printed.stdout


def test_a_means_sequence_without_a_scale_to_map_it_is_exit_2(
    run_cli, judge_server, tmp_path: Path
) -> None:
    pilot = tmp_path / "pilot"
    words = ["score", str(DATA), "--rubric", "helpfulness", "--out", str(pilot), "--quiet"]
    assert run_cli(judge_server, *words).exit_code in (0, 1)
    # A bar at the top of helpfulness's 1..4 scale leaves the sequence nothing to decide.
    command = ["score", str(DATA), "--rubric", "helpfulness", "--min-mean", "4", "--sequential"]
    run = run_cli(None, "plan", *command, "--effect", "4.5", "--pilot", str(pilot))
    assert run.exit_code == 2
    assert "nothing to decide on the scale 1..4" in run.stderr
    assert run.stdout == ""
