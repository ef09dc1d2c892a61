"""The judge simulator on 127.0.0.1 (port 0), and a helper that runs the real CLI in-process
through real LiteLLM over HTTP."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgecli.cli.main import app
from judgecli.simulator.server import RecordedRequest, SimulatorConfig, SimulatorServer
from tests.conftest import DATA

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


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    """`rows` as JSON lines at `path` (UTF-8); the path."""
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def write_numbered_cases(
    path: Path, count: int, case: Callable[[int], dict[str, str]]
) -> list[str]:
    """case(0), ..., case(count - 1) as JSON lines at `path`; their ids, in order."""
    cases = [case(i) for i in range(count)]
    write_jsonl(path, cases)
    return [c["id"] for c in cases]


def score_args(server: SimulatorServer, dataset: str | Path, out: str | Path, *extra: str):
    """The words of `judge score DATASET --rubric helpfulness` against `server`'s simulated
    judge, for the CLI in a subprocess (where run_cli cannot add --model and --api-base)."""
    return [
        "score",
        str(dataset),
        "--rubric",
        "helpfulness",
        "--model",
        "openai/sim",
        "--api-base",
        f"{server.url}/v1",
        "--out",
        str(out),
        *extra,
    ]


def ids_once(run_dir: Path) -> list[str]:
    """The ids of a run's results.jsonl, sorted, after checking that it is whole lines and
    that no id is there twice."""
    text = (run_dir / "results.jsonl").read_text(encoding="utf-8")
    assert not text or text.endswith("\n"), "a torn last line"
    ids = [json.loads(line)["id"] for line in text.splitlines()]
    assert len(ids) == len(set(ids)), f"a case counted twice: {sorted(ids)}"
    return sorted(ids)


def case_id_in(request: RecordedRequest, pattern: re.Pattern[str]) -> str:
    """The case id `pattern` finds in a request's user message (a case's question names it)."""
    user = next(m["content"] for m in request.body["messages"] if m["role"] == "user")
    match = pattern.search(user)
    assert match is not None, user[:200]
    return match.group()
