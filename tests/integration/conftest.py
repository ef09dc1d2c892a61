"""The judge simulator on 127.0.0.1 (port 0), and a helper that runs the real CLI in-process
through real LiteLLM over HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgecli.cli import app
from judgecli.simulator import SimulatorConfig, SimulatorServer

DATA = Path(__file__).resolve().parents[1] / "data"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def shared_server() -> Iterator[SimulatorServer]:
    with SimulatorServer(SimulatorConfig()) as server:
        yield server


@pytest.fixture
def judge_server(shared_server: SimulatorServer) -> SimulatorServer:
    """The session's simulator, with its script and request log cleared for this test."""
    shared_server.reset()
    return shared_server


@dataclass
class CliRun:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def summary(self) -> dict:
        return json.loads(self.stdout)


@pytest.fixture
def run_cli(monkeypatch: pytest.MonkeyPatch):
    """run_cli(server, "score", ...) → CliRun; adds --api-base/--model for the server."""
    # LiteLLM's openai/ route goes through the OpenAI client, which insists on a key.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")

    def _run(
        server: SimulatorServer | None, *args: str, model: str | None = "openai/sim"
    ) -> CliRun:
        argv = list(args)
        if server is not None:
            argv += ["--api-base", f"{server.url}/v1"]
            if model is not None:
                argv += ["--model", model]
        result = CliRunner().invoke(app, argv, catch_exceptions=False)
        return CliRun(result.exit_code, result.stdout, result.stderr)

    return _run


@pytest.fixture
def cases_file() -> Path:
    return DATA / "three_cases.jsonl"
