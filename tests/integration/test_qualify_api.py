"""`qualify_judge`, the Python API of `judge qualify` (issue 34): the same numbers and
record as the command line, and its input errors raised before anything is written."""

from __future__ import annotations

import json

import pytest

from judgecli import qualify_judge
from judgecli.errors import ExitCode, InputError
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.test_qualify_cli import NATURAL


@pytest.fixture(scope="module")
def truthful():
    """A simulator that knows llmbar-natural's labels and says them 80% of the time."""
    with SimulatorServer(SimulatorConfig(truth_file=NATURAL, noise=0.2)) as server:
        yield server


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")


def test_the_api_and_the_cli_measure_the_same_numbers(run_cli, truthful, tmp_path):
    run = qualify_judge(
        ["llmbar-natural"],
        model="openai/sim",
        api_base=f"{truthful.url}/v1",
        out=tmp_path / "api",
        min_agreement=0.7,
    )
    assert run.exit_code is ExitCode.OK
    cli = run_cli(
        truthful,
        "qualify",
        "--set",
        "llmbar-natural",
        "--min-agreement",
        "0.7",
        "--out",
        str(tmp_path / "cli"),
        "--json",
        "--quiet",
    )
    assert cli.exit_code == 0, cli.stderr
    api_sets = run.summary.model_dump(mode="json")["sets"]
    assert api_sets == cli.summary["sets"]
    record = json.loads((run.run_dir / "qualification.json").read_text())
    assert record["sets"][0]["agreement"] == run.summary.sets[0].agreement


def test_a_bad_set_is_an_input_error_and_leaves_no_run_directory(truthful, write, tmp_path):
    path = write("bad.jsonl", '{"id": "1", "input": "q", "output": "x", "label": "a"}\n')
    with pytest.raises(InputError, match=f"{path}:1: "):
        qualify_judge([path], model="openai/sim", api_base=f"{truthful.url}/v1", out=tmp_path / "q")
    assert not (tmp_path / "q").exists()
