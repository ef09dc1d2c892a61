"""The endpoint a user has, and the mistakes they make (issue 13 §2), through the real CLI
and LiteLLM: what can be known before the first call is exit 2 with nothing written; an
endpoint that cannot serve the run is exit 3 on its first call — never 0 with "0 of N
graded", and never 1, which CI reads as a regression.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import REPO

EXAMPLE = REPO / "datasets" / "example.jsonl"
OLD, NEW = REPO / "datasets" / "old.jsonl", REPO / "datasets" / "new.jsonl"


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def nothing_written(run_dir: str = "run") -> bool:
    return not Path(run_dir).exists()


def score(run_cli, server, *extra: str, out: str = "run"):
    """`judge score` on the example dataset with the helpfulness rubric, into `out`."""
    return run_cli(server, "score", str(EXAMPLE), "--rubric", "helpfulness", "--out", out, *extra)


@pytest.mark.parametrize(
    ("model", "extra", "message", "hint"),
    [
        pytest.param(
            "openai/gpt-4o-mini",
            [],
            "needs OPENAI_API_KEY in the environment",
            "export OPENAI_API_KEY",
            id="missing-key",
        ),
        pytest.param(
            "anthropic/claude-sonnet-4-5",
            [],
            "needs ANTHROPIC_API_KEY",
            "export ANTHROPIC_API_KEY",
            id="missing-anthropic-key",
        ),
        pytest.param(
            "notaprovider/foo",
            [],
            "LiteLLM does not know this provider",
            "--model openai/NAME --api-base URL",
            id="unknown-provider",
        ),
        pytest.param(
            "openai/sim",
            ["--api-base", "127.0.0.1:9/v1"],
            "is not an http(s) URL",
            "--api-base http://127.0.0.1:9/v1",
            id="url-without-scheme",
        ),
    ],
)
def test_what_can_be_checked_before_the_first_call_is_exit_2(
    run_cli, judge_server, monkeypatch, model, extra, message, hint
):
    # run_cli sets a dummy OPENAI_API_KEY for the simulator; this user has none. (With one,
    # the missing-key case would try api.openai.com: tests never leave 127.0.0.1.)
    monkeypatch.delenv("OPENAI_API_KEY")
    run = score(run_cli, None, "--model", model, *extra)
    assert run.exit_code == 2, run.stderr
    assert run.stderr.startswith("error: ")
    assert message in run.stderr
    assert hint in run.stderr
    assert "Traceback" not in run.stderr
    assert nothing_written()
    assert judge_server.requests == []


def test_a_refused_port_is_exit_3_with_the_error_and_the_fix(run_cli):
    base = f"http://127.0.0.1:{free_port()}/v1"
    run = score(run_cli, None, "--model", "openai/sim", "--api-base", base, "--no-cache")
    assert run.exit_code == 3, run.stderr
    assert "error: the judge openai/sim cannot be used: cannot connect" in run.stderr
    assert "ConnectionRefusedError" in run.stderr
    assert "HTTP 500" not in run.stderr  # LiteLLM's status for it; no server answered
    assert f"nothing answers at {base}" in run.stderr
    assert "judge resume run" in run.stderr
    assert not Path("run/summary.json").exists()  # nothing was judged: no verdict to write


def test_an_outage_under_a_gate_is_exit_3_never_a_failed_gate(run_cli):
    # Issue 13: the same outage under --min-win-rate exited 1, "FAIL", as a regression.
    base = f"http://127.0.0.1:{free_port()}/v1"
    run = run_cli(
        None,
        "pairwise",
        str(OLD),
        str(NEW),
        "--model",
        "openai/sim",
        "--api-base",
        base,
        "--min-win-rate",
        "0.55",
        "--out",
        "run",
        "--no-cache",
    )
    assert run.exit_code == 3, run.stderr
    assert "FAIL" not in run.stderr + run.stdout


def test_a_missing_v1_is_one_request_and_a_hint(run_cli, judge_server):
    run = score(run_cli, None, "--model", "openai/sim", "--api-base", judge_server.url)
    assert run.exit_code == 3, run.stderr
    assert "HTTP 404" in run.stderr
    assert "OpenAI-compatible servers usually end in /v1" in run.stderr


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_refusal_on_the_first_call_stops_the_run_after_that_one_call(
    run_cli, judge_server, status
):
    # Not retried, and the other cases are not sent: the probe call goes alone.
    judge_server.fail_next(status, count=100, body=json.dumps({"error": {"message": "no"}}))
    run = score(run_cli, judge_server, "--concurrency", "8")
    assert run.exit_code == 3, run.stderr
    assert f"HTTP {status}" in run.stderr
    assert len(judge_server.requests) == 1


def test_the_same_refusal_on_every_first_call_stops_the_run(run_cli, judge_server):
    body = json.dumps({"error": {"message": "temperature is not supported with this model"}})
    judge_server.fail_next(400, count=100, body=body)
    run = score(
        run_cli, judge_server, "--no-json-schema", "--concurrency", "1", "--max-failures", "50%"
    )
    assert run.exit_code == 3, run.stderr
    assert "cannot be used: HTTP 400 BadRequestError" in run.stderr
    assert "temperature is not supported" in run.stderr
    assert len(judge_server.requests) == 3


def test_transient_errors_are_retried_and_the_run_succeeds(run_cli, judge_server):
    judge_server.fail_next(500, count=2)
    judge_server.fail_next(503, retry_after=0.05)
    run = score(run_cli, judge_server, "--json", "--quiet", "--limit", "4")
    assert run.exit_code == 0, run.stderr
    assert run.summary["n_failed"] == 0
    assert run.summary["usage"]["retries"] == 3


@pytest.mark.parametrize(
    ("model", "sdk"),
    [
        pytest.param("openai/gpt-4o-mini", True, id="through-the-openai-sdk"),
        pytest.param("openai/sim", False, id="direct"),  # route.py: LiteLLM's own handler
    ],
)
def test_the_client_is_warm_before_its_first_timed_call(model, sdk):
    # Issue 13: the first calls reported ~2 s against a 0-latency server: the OpenAI client
    # imports its resource modules on first use, and every call in flight waited for it.
    # Building the client imports them, before any call is timed; and what LiteLLM imports
    # on its first call (issue 36: tiktoken's encoding made the first direct call 0.2 s).
    # Not the client's modules for a judge that does not use it. A fresh interpreter, so
    # nothing else imported them first.
    code = (
        "import asyncio, sys\n"
        "from judgecli.settings.config import ModelSettings\n"
        "from judgecli.judge.client import LiteLLMClient\n"
        "from judgecli.judge.limits import Limits\n"
        "from judgecli.judge.provider import FIRST_CALL_IMPORTS\n"
        "async def main():\n"
        "    limits = Limits(concurrency=1, rpm=None, tpm=None)\n"
        f"    settings = [ModelSettings(name={model!r}, api_base='http://127.0.0.1:9/v1')]\n"
        "    names = ['openai.resources', *FIRST_CALL_IMPORTS]\n"
        "    print(*[name in sys.modules for name in names])\n"
        "    LiteLLMClient(settings, limits, max_retries=0, timeout_s=1)\n"
        "    print(*[name in sys.modules for name in names])\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    before, after = done.stdout.splitlines()
    assert before == "False False False"
    assert after == f"{sdk} True True"


def test_a_fully_cached_rerun_never_imports_litellm(run_cli, judge_server, tmp_path):
    # The checks before the first call need LiteLLM (~3 s to import); a re-run answered
    # wholly from the reply cache makes no call, so it must not pay for them.
    first = score(run_cli, judge_server, "--limit", "4", out="first")
    assert first.exit_code == 0, first.stderr
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from judgecli.cli.main import app\n"
        f"args = ['score', {str(EXAMPLE)!r}, '--rubric', 'helpfulness', '--out', 'again',\n"
        f"        '--limit', '4', '--model', 'openai/sim', '--api-base', '{judge_server.url}/v1']\n"
        "result = CliRunner().invoke(app, args)\n"
        "print(result.exit_code, 'litellm' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
        env=os.environ,
    )
    assert done.stdout.split() == ["0", "False"], done.stderr
    assert len(judge_server.requests) == 4  # the first run's calls only
