"""`judge qualify` end to end against the simulator, and `--require-qualified` on pairwise,
score and gate (issue 34)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.conftest import REPO

SETS = REPO / "datasets" / "judge-sets"
NATURAL = SETS / "llmbar-natural.jsonl"
OLD, NEW = REPO / "datasets" / "old.jsonl", REPO / "datasets" / "new.jsonl"


@pytest.fixture(scope="module")
def truthful() -> SimulatorServer:
    """A simulator that knows llmbar-natural's labels and says them 80% of the time."""
    with SimulatorServer(SimulatorConfig(truth_file=NATURAL, noise=0.2)) as server:
        yield server


def small_set(write, rows: int = 30) -> Path:
    """The first rows of llmbar-natural, as a user's own set."""
    lines = NATURAL.read_text(encoding="utf-8").splitlines()[:rows]
    return write("mine.jsonl", "\n".join(lines) + "\n")


def qualify(run_cli, server, out: Path, *args: str):
    return run_cli(server, "qualify", "--out", str(out), *args, "--json", "--quiet")


def test_a_judge_that_says_the_label_qualifies_and_writes_its_record(run_cli, truthful, tmp_path):
    run = qualify(
        run_cli, truthful, tmp_path / "q", "--set", "llmbar-natural", "--min-agreement", "0.7"
    )
    assert run.exit_code == 0, run.stderr
    summary = run.summary
    (only,) = summary["sets"]
    assert {"name", "n", "agreement", "agreement_ci", "kappa", "position_consistency"} <= set(only)
    assert only["name"] == "llmbar-natural"
    assert only["n"] == 100
    # noise 0.2: the simulator says the label on 80% of pairs in expectation.
    low, high = only["agreement_ci"]
    assert 0.7 <= low < only["agreement"] < high
    assert 0.7 <= only["agreement"] <= 0.9
    # The draw is keyed on the pair whatever its order: both orders always agree.
    assert only["position_consistency"] == 1.0
    assert summary["gate"]["passed"] is True
    record = json.loads((tmp_path / "q" / "qualification.json").read_text())
    assert record["models"] == ["openai/sim"]
    assert record["rubric"] == "pairwise"
    assert record["rubric_hash"] == summary["rubric_hash"]
    assert record["min_agreement"] == 0.7
    assert record["sets"][0]["agreement_ci"] == [low, high]
    # Both orders of every pair were asked: 100 pairs, 200 requests.
    assert len(truthful.requests) >= 200


def test_an_agreement_lower_bound_below_the_floor_exits_1_with_the_record_saying_so(
    run_cli, truthful, tmp_path
):
    run = qualify(
        run_cli, truthful, tmp_path / "q", "--set", "llmbar-natural", "--min-agreement", "0.95"
    )
    assert run.exit_code == 1, run.stderr
    assert run.summary["gate"]["failed_sets"] == ["llmbar-natural"]
    record = json.loads((tmp_path / "q" / "qualification.json").read_text())
    assert record["passed"] is False


def test_a_bad_row_of_a_users_set_exits_2_naming_file_and_line_before_any_call(
    run_cli, judge_server, write, tmp_path
):
    path = write(
        "bad.jsonl",
        '{"id": "1", "input": "q", "output_a": "x", "output_b": "y", "label": "a"}\n'
        '{"id": "2", "input": "q", "output_a": "x", "output_b": "y", "label": "maybe"}\n',
    )
    run = qualify(run_cli, judge_server, tmp_path / "q", "--set", str(path))
    assert run.exit_code == 2
    assert f"{path}:2:" in run.stderr
    assert not (tmp_path / "q").exists()
    assert judge_server.requests == []


def test_several_rows_of_one_id_are_several_raters_each_counted(
    run_cli, judge_server, write, tmp_path
):
    row = {"id": "p1", "input": "Name a prime.", "output_a": "7", "output_b": "8 is prime"}
    rows = [row | {"label": "a"}, row | {"label": "a"}, row | {"label": "b"}]
    path = write("raters.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    run = qualify(run_cli, judge_server, tmp_path / "q", "--set", str(path))
    assert run.exit_code == 0, run.stderr
    (only,) = run.summary["sets"]
    assert only["n"] == 3
    assert only["n_cases"] == 1


def test_a_pointwise_rubric_without_a_set_of_its_own_is_refused(run_cli, judge_server, tmp_path):
    run = qualify(run_cli, judge_server, tmp_path / "q", "--rubric", "helpfulness")
    assert run.exit_code == 2
    assert "--set FILE" in run.stderr


def test_a_pointwise_set_is_qualified_on_a_pointwise_rubric(run_cli, judge_server, write, tmp_path):
    rows = [
        {
            "id": f"c{i}",
            "input": f"Question {i}?",
            "output": f"Answer number {i}.",
            "label": 1 + i % 4,
        }
        for i in range(12)
    ]
    path = write("points.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    run = qualify(
        run_cli, judge_server, tmp_path / "q", "--rubric", "helpfulness", "--set", str(path)
    )
    assert run.exit_code == 0, run.stderr
    (only,) = run.summary["sets"]
    assert only["n"] == 12
    assert only["position_consistency"] is None  # one order only: nothing to compare


@pytest.fixture(scope="module")
def record(tmp_path_factory, truthful) -> Path:
    """A passed qualification of openai/sim with the pairwise rubric."""
    out = tmp_path_factory.mktemp("qualified") / "q"
    from typer.testing import CliRunner

    from judgecli.cli.main import app

    args = [
        "qualify",
        "--set",
        "llmbar-natural",
        "--min-agreement",
        "0.7",
        "--out",
        str(out),
        "--api-base",
        f"{truthful.url}/v1",
        "--model",
        "openai/sim",
        "--quiet",
    ]
    result = CliRunner(env={"OPENAI_API_KEY": "sk-test"}).invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return out / "qualification.json"


def pairwise(run_cli, server, out: Path, *args: str, model: str = "openai/sim"):
    return run_cli(
        server, "pairwise", str(OLD), str(NEW), "--out", str(out), "--quiet", *args, model=model
    )


def test_the_qualified_judge_and_rubric_run_under_require_qualified(
    run_cli, judge_server, record, tmp_path
):
    run = pairwise(run_cli, judge_server, tmp_path / "p", "--require-qualified", str(record))
    assert run.exit_code == 0, run.stderr
    assert (tmp_path / "p" / "summary.json").exists()


@pytest.mark.parametrize(
    ("model", "rubric", "said"),
    [
        pytest.param(
            "openai/other", "pairwise", "is not the one qualified (openai/sim)", id="another-judge"
        ),
        pytest.param(
            "openai/sim",
            "trajectory-pairwise",
            "is not the one qualified ('pairwise'",
            id="another-rubric",
        ),
    ],
)
def test_another_judge_or_rubric_is_refused_with_exit_2_before_any_call(
    run_cli, judge_server, record, tmp_path, model, rubric, said
):
    run = pairwise(
        run_cli,
        judge_server,
        tmp_path / "p",
        "--rubric",
        rubric,
        "--require-qualified",
        str(record),
        model=model,
    )
    assert run.exit_code == 2
    assert said in run.stderr
    assert not (tmp_path / "p").exists()
    assert judge_server.requests == []


def test_a_record_below_its_floor_is_refused(run_cli, judge_server, record, write, tmp_path):
    failed = json.loads(record.read_text())
    failed["min_agreement"] = 0.99
    path = write("failed.json", json.dumps(failed))
    run = pairwise(run_cli, judge_server, tmp_path / "p", "--require-qualified", str(path))
    assert run.exit_code == 2
    assert "below the record's floor 0.99" in run.stderr
    assert judge_server.requests == []


def test_score_refuses_a_rubric_other_than_the_qualified_one(
    run_cli, judge_server, record, tmp_path
):
    run = run_cli(
        judge_server,
        "score",
        str(REPO / "datasets" / "example.jsonl"),
        "--rubric",
        "helpfulness",
        "--out",
        str(tmp_path / "s"),
        "--require-qualified",
        str(record),
    )
    assert run.exit_code == 2
    assert "rubric 'helpfulness'" in run.stderr
    assert not (tmp_path / "s").exists()


def test_gate_checks_the_runs_judge_against_the_record(
    run_cli, judge_server, record, write, tmp_path
):
    assert pairwise(run_cli, judge_server, tmp_path / "p").exit_code == 0
    summary = tmp_path / "p" / "summary.json"
    ok = run_cli(
        None, "gate", str(summary), "--min-win-rate", "0.1", "--require-qualified", str(record)
    )
    assert ok.exit_code == 0, ok.stderr
    other = json.loads(record.read_text()) | {"models": ["openai/gpt-4o"]}
    refused = run_cli(
        None,
        "gate",
        str(summary),
        "--min-win-rate",
        "0.1",
        "--require-qualified",
        str(write("other.json", json.dumps(other))),
    )
    assert refused.exit_code == 2
    assert "openai/sim is not the one qualified (openai/gpt-4o)" in refused.stderr


def test_a_malformed_record_is_exit_2_naming_the_file(run_cli, judge_server, write, tmp_path):
    path = write("broken.json", "{not json")
    run = pairwise(run_cli, judge_server, tmp_path / "p", "--require-qualified", str(path))
    assert run.exit_code == 2
    assert f"{path}: not JSON" in run.stderr
    assert judge_server.requests == []


def test_a_judge_that_could_not_grade_exits_3_and_writes_no_record(run_cli, write, tmp_path):
    path = small_set(write, rows=4)
    out = tmp_path / "q"
    run = run_cli(
        None,
        "qualify",
        "--set",
        str(path),
        "--min-agreement",
        "0.5",
        "--out",
        str(out),
        "--model",
        "openai/sim",
        "--api-base",
        "http://127.0.0.1:1/v1",
        "--max-retries",
        "0",
        "--quiet",
    )
    assert run.exit_code == 3
    assert not (out / "qualification.json").exists()
