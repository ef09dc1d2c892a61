"""Issue 29 through the real CLI: a judge that cannot tell the answers apart decides no
gate (exit 3, never 0 or 1), nor does a number the run's data left undefined; a threshold on
a number the run does not make is bad usage (exit 2).

The judge is the simulator with a first-position bias of 1.0: on a pair whose answers are
equally good it answers "A" whatever the order, as SmolLM2 did on llama.cpp in the review
(0 wins, 0 losses, all ties, 0% position consistency). The profile "sharp" on the same
server has no position bias, so it gives a tie in both orders: 100% consistent.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from judgecli.simulator.config import JudgeProfile
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.conftest import REPO, write_jsonl

UNDECIDED_LINE = (
    "UNDECIDED — the judge could not tell the answers apart (position consistency 0% < 50%); "
    "no verdict. NEW vs OLD: win rate 50.0%"
)


@pytest.fixture(scope="module")
def biased() -> Iterator[SimulatorServer]:
    config = SimulatorConfig(position_bias=1.0, profiles={"sharp": JudgeProfile(position_bias=0)})
    with SimulatorServer(config) as server:
        yield server


@pytest.fixture
def same_answers(tmp_path: Path) -> tuple[Path, Path]:
    """OLD and NEW: six cases whose two answers are the same text (equally good)."""
    cases = [
        {"id": f"c{i}", "input": f"What is {i} + {i}?", "output": f"{i} + {i} is {2 * i}."}
        for i in range(6)
    ]
    return write_jsonl(tmp_path / "old.jsonl", cases), write_jsonl(tmp_path / "new.jsonl", cases)


def pairwise(run_cli, server, pair, *extra, out="run", model="openai/sim"):
    old, new = pair
    return run_cli(server, "pairwise", str(old), str(new), "--out", out, *extra, model=model)


def verdict_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith(("PASS", "FAIL", "UNDE")))


def test_a_judge_that_always_says_a_leaves_the_gate_undecided_with_exit_3(
    run_cli, biased, same_answers, monkeypatch, tmp_path
):
    # Issue 29: this run used to say FAIL with exit 1 and no warning.
    step = tmp_path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    run = pairwise(run_cli, biased, same_answers, "--min-win-rate", "0.55", "--quiet")
    assert run.exit_code == 3, run.stderr
    assert verdict_line(run.stdout).startswith(UNDECIDED_LINE)
    assert "The gate is undecided (exit 3): use a stronger judge" in run.stdout
    assert "warning: position consistency 0% is below the floor 50%" in run.stderr
    assert "error: the gate is undecided: the judge could not tell" in run.stderr
    assert "hint: use a stronger judge" in run.stderr

    summary = json.loads(Path("run/summary.json").read_text())
    assert (summary["wins"], summary["losses"], summary["ties"]) == (0, 0, 6)
    assert (summary["consistency"], summary["first_position_rate"]) == (0.0, 1.0)
    gate = summary["gate"]
    assert (gate["passed"], gate["decided"]) == (False, False)
    assert gate["undecided"] == (
        "the judge could not tell the answers apart (position consistency 0% < 50%)"
    )
    assert "first_position_rate" in gate["hint"]
    assert gate["consistency_floor"] == {"threshold": 0.5, "value": 0.0, "met": False}
    assert [(c["passed"], c["decided"]) for c in gate["checks"]] == [(False, False)]
    assert "incomplete" not in summary
    assert any("below the floor 50%" in w for w in summary["warnings"])

    report = Path("run/report.md").read_text().splitlines()
    assert report[2].startswith(f"**{UNDECIDED_LINE}")
    assert '<p class="headline undecided">UNDECIDED — ' in Path("run/report.html").read_text()
    assert "**UNDECIDED — the judge could not tell the answers apart" in step.read_text()

    junit = ET.parse("run/results.junit.xml").getroot()
    [gate_case] = [c for c in junit.iter("testcase") if c.attrib["name"] == "gate"]
    error = gate_case.find("error")
    assert error is not None
    assert error.attrib["type"] == "GateUndecided"
    assert gate_case.find("failure") is None


def test_without_a_gate_the_run_warns_and_exits_0(run_cli, biased, same_answers):
    run = pairwise(run_cli, biased, same_answers, "--quiet")
    assert run.exit_code == 0, run.stderr
    assert "warning: position consistency 0% is below the floor 50%" in run.stderr
    assert "it chose the answer shown first 100% of the time" in run.stderr
    assert "gate" not in json.loads(Path("run/summary.json").read_text())


def test_min_consistency_0_turns_the_floor_off(run_cli, biased, same_answers):
    run = pairwise(
        run_cli, biased, same_answers, "--min-win-rate", "0.55", "--min-consistency", "0"
    )
    assert run.exit_code == 1, run.stderr
    assert verdict_line(run.stdout).startswith("FAIL — NEW vs OLD: win rate 50.0%")
    assert "below the floor" not in run.stderr


def test_an_explicit_floor_above_the_judge_is_undecided_not_failed(run_cli):
    # Issue 29: --min-consistency used to be a plain threshold (exit 1 below it); it is now
    # the floor itself, so a judge below it decides nothing. This judge is above the default
    # floor (it prefers "A" on half of the close pairs) but below the bar given.
    old, new = REPO / "datasets" / "old.jsonl", REPO / "datasets" / "new.jsonl"
    with SimulatorServer(SimulatorConfig(position_bias=0.5)) as server:
        run = pairwise(run_cli, server, (old, new), "--min-consistency", "0.95", "--json", "-q")
        default = pairwise(run_cli, server, (old, new), "--min-win-rate", "0.5", out="d")
    assert 0.5 <= run.summary["consistency"] < 0.95
    assert run.exit_code == 3, run.stderr
    gate = run.summary["gate"]
    assert (gate["passed"], gate["decided"]) == (False, False)
    [check] = gate["checks"]
    assert (check["metric"], check["threshold"], check["decided"]) == ("consistency", 0.95, False)
    assert default.exit_code == 0, default.stderr


def test_judge_gate_rechecks_the_floor(run_cli, biased, same_answers):
    assert pairwise(run_cli, biased, same_answers, "--quiet").exit_code == 0
    undecided = run_cli(None, "gate", "run/summary.json", "--min-win-rate", "0.55", "--json")
    assert undecided.exit_code == 3, undecided.stderr
    assert json.loads(undecided.stdout)["decided"] is False
    assert "error: the gate is undecided" in undecided.stderr
    off = run_cli(
        None, "gate", "run/summary.json", "--min-win-rate", "0.55", "--min-consistency", "0"
    )
    assert off.exit_code == 1, off.stderr
    assert verdict_line(off.stdout).startswith("FAIL")


def panel(run_cli, server, pair, *models):
    """A gated pairwise run of a panel of `models` judges."""
    judges = [word for model in models for word in ("--model", model)]
    return run_cli(
        server,
        "pairwise",
        *map(str, pair),
        *judges,
        "--min-win-rate",
        "0.45",
        "--quiet",
        "--out",
        "run",
        model=None,
    )


def test_a_panel_stands_while_one_judge_can_tell_the_answers_apart(run_cli, biased, same_answers):
    run = panel(run_cli, biased, same_answers, "openai/sim", "openai/sharp")
    assert run.exit_code == 0, run.stderr
    assert "below the floor 50% (--min-consistency) for openai/sim 0%" in run.stderr
    floor = json.loads(Path("run/summary.json").read_text())["gate"]["consistency_floor"]
    assert floor["judges"] == {"openai/sim": 0.0, "openai/sharp": 1.0}
    assert (floor["below"], floor["met"]) == (["openai/sim"], True)


def test_a_panel_whose_judges_all_fail_the_floor_is_undecided(run_cli, biased, same_answers):
    run = panel(run_cli, biased, same_answers, "openai/sim", "openai/other")
    assert run.exit_code == 3, run.stderr
    assert verdict_line(run.stdout).startswith(
        "UNDECIDED — no judge of the panel could tell the answers apart (position "
        "consistency openai/sim 0%, openai/other 0% < 50%)"
    )


def test_no_flip_measures_no_consistency(run_cli, biased, same_answers):
    # The floor does not apply (there is a --no-flip warning instead) ...
    run = pairwise(run_cli, biased, same_answers, "--no-flip", "--min-win-rate", "0.55")
    assert run.exit_code in (0, 1), run.stderr
    assert "below the floor" not in run.stderr
    # ... and asking for one is bad usage, before anything is judged.
    asked = pairwise(
        run_cli, biased, same_answers, "--no-flip", "--min-consistency", "0.5", out="x"
    )
    assert asked.exit_code == 2
    assert "error: --min-consistency with --no-flip" in asked.stderr
    assert not Path("x").exists()


def test_an_arena_below_the_floor_is_undecided(run_cli, biased, same_answers, tmp_path):
    third = write_jsonl(
        tmp_path / "third.jsonl", map(json.loads, same_answers[0].read_text().splitlines())
    )
    run = run_cli(
        biased, "arena", *map(str, [*same_answers, third]), "--beats", "old", "--out", "run"
    )
    assert run.exit_code == 3, run.stderr
    line = verdict_line(run.stdout)
    assert line.startswith("UNDECIDED — the judge could not tell the answers apart")
    gate = json.loads(Path("run/summary.json").read_text())["gate"]
    assert (gate["passed"], gate["decided"]) == (False, False)
    assert "first_position_rate" not in gate["hint"]


def test_judge_gate_on_a_metric_the_run_lacks_exits_2_before_a_verdict(run_cli, judge_server):
    # Issue 29: a score run has no win rate; this used to print FAIL and exit 1.
    example = REPO / "datasets" / "example.jsonl"
    score = run_cli(judge_server, "score", str(example), "--rubric", "helpfulness", "--out", "s")
    assert score.exit_code == 0, score.stderr
    run = run_cli(None, "gate", "s/summary.json", "--min-win-rate", "0.55")
    assert run.exit_code == 2
    assert run.stdout == ""
    assert "error: --min-win-rate needs a pairwise run; s/summary.json is a score run" in (
        run.stderr
    )
    assert "hint: gate a score run with --min-pass-rate or --min-mean" in run.stderr
    kappa = run_cli(None, "gate", "s/summary.json", "--min-kappa", "0.5")
    assert kappa.exit_code == 2
    assert "--min-kappa needs a calibrate run" in kappa.stderr


def test_calibrate_with_labels_of_one_class_and_min_kappa_is_undecided(run_cli, judge_server):
    # Issue 29: κ of five labels that are all "new" is undefined; this used to exit 1.
    old, new = REPO / "datasets" / "old.jsonl", REPO / "datasets" / "new.jsonl"
    assert pairwise(run_cli, judge_server, (old, new), "--quiet", out="first").exit_code == 0
    labels = write_jsonl(
        Path("five.jsonl"), [{"id": f"p-0{i}", "label": "new"} for i in (1, 2, 3, 5, 6)]
    )
    run = run_cli(
        None,
        "calibrate",
        "--results",
        "first/results.jsonl",
        "--labels",
        str(labels),
        "--min-kappa",
        "0.5",
        "--out",
        "cal",
    )
    assert run.exit_code == 3, run.stderr
    assert verdict_line(run.stdout).startswith(
        "UNDECIDED — κ is undefined: every human label is 'new' (one class)"
    )
    gate = json.loads(Path("cal/summary.json").read_text())["gate"]
    assert (gate["passed"], gate["decided"]) == (False, False)
    assert "--min-accuracy" in gate["hint"]
    regate = run_cli(None, "gate", "cal/summary.json", "--min-kappa", "0.5")
    assert regate.exit_code == 3, regate.stderr
