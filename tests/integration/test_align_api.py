"""`judgecli.align_rubric`, the Python API of `judge align`, against the simulator (issue 34)."""

from __future__ import annotations

from pathlib import Path

import pytest

import judgecli
from judgecli.errors import ConfigError, ExitCode
from judgecli.simulator.config import SimulatorConfig
from judgecli.simulator.server import SimulatorServer

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "datasets" / "align.jsonl"


def test_align_rubric_finds_the_blind_spot_and_gates_as_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    config = SimulatorConfig(truth_file=DATA, blind_spot="I guarantee this is correct")
    with SimulatorServer(config) as server:
        run = judgecli.align_rubric(
            ROOT / "rubrics" / "answer-correctness.yaml",
            dataset=DATA,
            labels=DATA,
            model="openai/sim",
            api_base=f"{server.url}/v1",
            optimizer_model="openai/opt-sim",
            out=tmp_path / "run",
            seed=1,
            min_gain=0.99,
        )
    assert run.summary.decision.value == "better"
    assert run.exit_code is ExitCode.GATE_FAILED  # the gain's lower bound is below 0.99
    assert judgecli.load_rubric(run.rubric).content_hash == run.summary.aligned_rubric_hash


def test_align_rubric_refuses_an_unknown_setting_and_a_pairwise_rubric(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="align_rubric"):
        judgecli.align_rubric("answer-correctness", dataset=DATA, labels=DATA, repeats=3)
    with pytest.raises(ConfigError, match="binary and pointwise"):
        judgecli.align_rubric(
            "pairwise", dataset=DATA, labels=DATA, model="openai/sim", out=tmp_path / "x"
        )
