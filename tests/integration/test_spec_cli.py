"""`judge run SPEC` through the real CLI against the simulator: exactly the spec's command,
its hash in run.json, summary.json and the reports, overriding flags and changed data
refused (issue 35)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from judgecli.inputs.spec import read_spec, spec_hash
from judgecli.settings.spec_line import spec_of
from judgecli.simulator.server import SimulatorServer
from judgecli.store.spec import write_spec
from tests.integration.conftest import REPO


@pytest.fixture
def spec_file(
    tmp_path: Path, judge_server: SimulatorServer, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A pairwise spec over copies of the example OLD and NEW, 6 cases, gated at 0.3."""
    monkeypatch.chdir(tmp_path)
    for name in ("old.jsonl", "new.jsonl"):
        shutil.copy(REPO / "datasets" / name, tmp_path / name)
    argv = ["old.jsonl", "new.jsonl", "--rubric", "pairwise", "--model", "openai/sim"]
    argv += ["--api-base", f"{judge_server.url}/v1", "--min-win-rate", "0.3", "--limit", "6"]
    return write_spec(spec_of("pairwise", argv), tmp_path / "judge.yaml")


def test_judge_run_runs_the_spec_and_records_its_hash(spec_file: Path, run_cli) -> None:
    done = run_cli(None, "run", str(spec_file), "--out", "run", "--json")
    assert done.exit_code in (0, 1), done.stderr
    hashed = spec_hash(read_spec(spec_file))
    assert done.summary["spec"] == {"path": str(spec_file), "hash": hashed}
    assert done.summary["n_cases"] == 6
    assert done.summary["gate"]["checks"][0]["threshold"] == 0.3
    info = json.loads(Path("run/run.json").read_text(encoding="utf-8"))
    assert info["spec"] == {"path": str(spec_file), "hash": hashed}
    assert ["--spec", str(spec_file)] == info["argv"][info["argv"].index("--spec") :][:2]
    assert hashed in Path("run/report.md").read_text(encoding="utf-8")
    assert hashed in Path("run/report.html").read_text(encoding="utf-8")


def test_a_changed_spec_names_the_previous_one(spec_file: Path, run_cli) -> None:
    first = run_cli(None, "run", str(spec_file), "--out", "run", "--json")
    assert first.exit_code in (0, 1), first.stderr
    changed = spec_file.with_name("judge2.yaml")
    changed.write_text(spec_file.read_text("utf-8").replace("floor: 0.3", "floor: 0.2"), "utf-8")
    again = run_cli(None, "run", str(changed), "--out", "run", "--force", "--json")
    assert again.exit_code in (0, 1), again.stderr
    assert again.summary["spec"]["previous"] == spec_hash(read_spec(spec_file))
    assert again.summary["spec"]["hash"] == spec_hash(read_spec(changed))
    assert "previous spec was" in Path("run/report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("flag", [["--min-win-rate", "0.9"], ["--model", "openai/other"]])
def test_a_flag_that_would_change_the_spec_is_refused(
    spec_file: Path, run_cli, flag: list[str]
) -> None:
    refused = run_cli(None, "run", str(spec_file), "--out", "run", *flag)
    assert refused.exit_code == 2
    assert f"error: {flag[0]}: the spec pins" in refused.stderr
    assert not Path("run").exists()


def test_a_dataset_whose_bytes_changed_is_refused(spec_file: Path, run_cli) -> None:
    with Path("new.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"id": "late", "output": "added after the plan"}\n')
    refused = run_cli(None, "run", str(spec_file), "--out", "run")
    assert refused.exit_code == 2
    assert "new.jsonl: its bytes changed since the spec was written" in refused.stderr
    assert not Path("run").exists()


def test_an_environment_variable_of_a_pinned_flag_is_ignored(
    spec_file: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_REPEATS", "2")  # the spec leaves --repeats at its default
    done = run_cli(None, "run", str(spec_file), "--out", "run", "--json")
    assert done.exit_code in (0, 1), done.stderr
    assert "warning: JUDGE_REPEATS is ignored" in done.stderr
    assert "repeats" not in done.summary
