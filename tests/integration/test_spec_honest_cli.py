"""The spec, honest end to end, through the real CLI against the simulator (issue 35):
run.json pins the bytes judged (data edited after a run is no departure), --write-spec
pins the planned n and `judge run` refuses data shorter than it, an alpha the gate cannot
apply is refused while a sequential one is applied, and a hand-written --spec on an
ordinary command line is checked against that line before any call."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from judgecli.simulator.server import SimulatorServer
from tests.integration.conftest import REPO

SCORE = ["example.jsonl", "--rubric", "helpfulness", "--model", "openai/sim"]


@pytest.fixture
def folder(tmp_path: Path, judge_server: SimulatorServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder with copies of the example score data (24 cases) and OLD/NEW (30)."""
    monkeypatch.chdir(tmp_path)
    for name in ("example.jsonl", "old.jsonl", "new.jsonl"):
        shutil.copy(REPO / "datasets" / name, tmp_path / name)
    return tmp_path


def score_line(server: SimulatorServer, *extra: str) -> list[str]:
    return [*SCORE, "--api-base", f"{server.url}/v1", *extra]


def planned(
    run_cli, server: SimulatorServer, *extra: str, spec: str = "judge.yaml", effect: str = "0.9"
):
    """`judge plan score ... --write-spec SPEC`: a pass rate of 0.5 on its lower bound (on
    the point with --sequential), sized for a true 0.9 (a rate needs no pilot)."""
    on = [] if "--sequential" in extra else ["--on", "lower-bound"]
    line = score_line(server, "--min-pass-rate", "0.5", *on, *extra)
    return run_cli(None, "plan", "score", *line, "--effect", effect, "--write-spec", spec)


def test_data_edited_after_the_run_is_no_departure_but_a_run_without_pins_says_so(
    folder: Path, judge_server: SimulatorServer, run_cli
) -> None:
    assert planned(run_cli, judge_server, "--limit", "6").exit_code == 0
    made = run_cli(None, "run", "judge.yaml", "--out", "run", "-q")
    assert made.exit_code in (0, 1), made.stderr
    info = json.loads(Path("run/run.json").read_text(encoding="utf-8"))
    [pin] = info["datasets"]
    assert pin["path"] == str(folder / "example.jsonl") or pin["path"] == "example.jsonl"
    with Path("example.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"id": "late", "input": "q", "output": "added after the run"}\n')

    kept = run_cli(None, "verify", "run", "--spec", "judge.yaml", "--json")
    assert (kept.exit_code, json.loads(kept.stdout)["unverified"]) == (0, []), kept.stderr

    del info["datasets"]  # a run made before run.json pinned its data
    Path("run/run.json").write_text(json.dumps(info), encoding="utf-8")
    old = run_cli(None, "verify", "run", "--spec", "judge.yaml", "--json")
    assert old.exit_code == 1
    assert json.loads(old.stdout)["unverified"] == ["datasets[0].sha256"]
    assert "note: datasets[0].sha256: hashed now" in old.stderr


def test_the_written_spec_pins_the_planned_n_and_judge_run_refuses_shorter_data(
    folder: Path, judge_server: SimulatorServer, run_cli
) -> None:
    plan = planned(run_cli, judge_server, effect="0.7")
    assert plan.exit_code == 0, plan.stderr
    needed = int(plan.stdout.rsplit("cases needed: ", 1)[1])
    assert needed > 24
    assert f"the data holds 24 cases, fewer than the {needed}" in plan.stderr
    assert f"  n: {needed}\n" in Path("judge.yaml").read_text(encoding="utf-8")

    refused = run_cli(None, "run", "judge.yaml", "--out", "run")
    assert refused.exit_code == 2
    assert f"example.jsonl: 24 cases, fewer than the {needed} the spec" in refused.stderr
    assert "hint: add cases to the data, or plan again with --limit 24" in refused.stderr
    assert judge_server.requests == []
    assert not Path("run").exists()

    limited = planned(run_cli, judge_server, "--limit", "10", spec="j10.yaml", effect="0.7")
    assert f"--limit 10 is below the {needed} cases" in limited.stderr
    done = run_cli(None, "run", "j10.yaml", "--out", "r10", "--json")
    assert done.exit_code in (0, 1), done.stderr
    assert done.summary["n_cases"] == 10  # exactly the first n

    sequential = planned(run_cli, judge_server, "--sequential", spec="seq.yaml")
    assert sequential.exit_code == 0, sequential.stderr
    assert "rule: sequential" in Path("seq.yaml").read_text(encoding="utf-8")


def test_an_alpha_the_gate_cannot_apply_is_refused_and_a_sequential_one_applied(
    folder: Path, judge_server: SimulatorServer, run_cli
) -> None:
    assert planned(run_cli, judge_server, "--limit", "6").exit_code == 0
    text = Path("judge.yaml").read_text(encoding="utf-8")
    Path("a10.yaml").write_text(text.replace("alpha: 0.05", "alpha: 0.1"), encoding="utf-8")
    for argv in (["run", "a10.yaml", "--out", "run"], ["plan", "a10.yaml", "--effect", "0.9"]):
        refused = run_cli(None, *argv)
        assert refused.exit_code == 2, refused.stderr
        assert "error: a10.yaml: alpha: 0.1 cannot be applied" in refused.stderr
    assert not Path("run").exists()
    assert judge_server.requests == []

    assert planned(run_cli, judge_server, "--sequential", spec="seq.yaml").exit_code == 0
    text = Path("seq.yaml").read_text(encoding="utf-8").replace("alpha: 0.05", "alpha: 0.2")
    Path("seq.yaml").write_text(text, encoding="utf-8")
    done = run_cli(None, "run", "seq.yaml", "--out", "run", "--json")
    assert done.exit_code in (0, 1), done.stderr
    assert done.summary["sequential"]["alpha"] == 0.2
    kept = run_cli(None, "verify", "run", "--spec", "seq.yaml")
    assert kept.exit_code == 0, kept.stderr

    line = score_line(judge_server, "--min-pass-rate", "0.5", "--on", "lower-bound")
    unplanned = run_cli(
        None, "plan", "score", *line, "--effect", "0.9", "--alpha", "0.1", "--write-spec", "x.yaml"
    )
    assert unplanned.exit_code == 2  # a spec its run would refuse is not written
    assert "alpha: 0.1 cannot be applied" in unplanned.stderr
    assert not Path("x.yaml").exists()

    fixed = run_cli(judge_server, "score", *SCORE[:3], "--alpha", "0.1", "--min-mean", "3")
    assert fixed.exit_code == 2
    assert "--alpha 0.1: only the --sequential gate takes another error rate" in fixed.stderr


def test_a_category_field_or_label_design_the_run_cannot_honour_is_refused(
    folder: Path, judge_server: SimulatorServer, run_cli
) -> None:
    assert planned(run_cli, judge_server, "--limit", "6").exit_code == 0
    text = Path("judge.yaml").read_text(encoding="utf-8")
    Path("topic.yaml").write_text(text.replace("field: null", "field: topic"), encoding="utf-8")
    refused = run_cli(None, "run", "topic.yaml", "--out", "run")
    assert refused.exit_code == 2
    assert "categories.field: the run reads categories from the column 'category'" in refused.stderr

    shutil.copy(REPO / "datasets" / "labels.jsonl", "labels.jsonl")
    labelled = planned(run_cli, judge_server, "--limit", "6", "--labels", "labels.jsonl")
    assert labelled.exit_code == 0, labelled.stderr
    text = Path("judge.yaml").read_text(encoding="utf-8")
    assert "design: random" in text  # labels no plan drew: PPI++ reads them as random
    Path("strat.yaml").write_text(text.replace("design: random", "design: stratified"), "utf-8")
    for argv in (["run", "strat.yaml", "--out", "run"], ["plan", "strat.yaml", "--effect", "0.9"]):
        refused = run_cli(None, *argv)
        assert refused.exit_code == 2, refused.stderr
        assert "strat.yaml: labels.design: the run weighs these labels as drawn by 'random'" in (
            refused.stderr
        )
    assert judge_server.requests == []
    assert not Path("run").exists()


def test_a_hand_written_spec_is_checked_against_its_command_line(
    folder: Path, judge_server: SimulatorServer, run_cli
) -> None:
    assert planned(run_cli, judge_server, "--limit", "6").exit_code == 0
    line = score_line(judge_server, "--min-pass-rate", "0.5", "--on", "lower-bound")
    moved = run_cli(
        None, "score", *line, "--limit", "8", "--temperature", "0.7", "--spec", "judge.yaml"
    )
    assert moved.exit_code == 2
    assert "error: the command line departs from its --spec judge.yaml: " in moved.stderr
    assert "judges[0].settings.temperature (spec none, command line 0.7)" in moved.stderr
    assert "stopping.n (spec 6, command line 8)" in moved.stderr
    assert judge_server.requests == []
    assert not any(Path("runs").glob("*")) if Path("runs").exists() else True

    kept = run_cli(None, "score", *line, "--limit", "6", "--spec", "judge.yaml", "--out", "r")
    assert kept.exit_code in (0, 1), kept.stderr
    assert run_cli(None, "verify", "r", "--spec", "judge.yaml").exit_code == 0


def test_the_python_api_checks_its_spec_against_its_settings_too(
    folder: Path, judge_server: SimulatorServer, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judgecli import score_dataset
    from judgecli.errors import InputError

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    assert planned(run_cli, judge_server, "--limit", "6").exit_code == 0
    sim = {"model": "openai/sim", "api_base": f"{judge_server.url}/v1"}
    gate = {"min_pass_rate": 0.5, "on": "lower-bound", "spec": "judge.yaml"}
    with pytest.raises(InputError, match=r"stopping.n \(spec 6, command line 9\)"):
        score_dataset("example.jsonl", rubric="helpfulness", limit=9, out="a", **gate, **sim)
    assert judge_server.requests == []
    run = score_dataset("example.jsonl", rubric="helpfulness", limit=6, out="b", **gate, **sim)
    assert run.summary.n_cases == 6
