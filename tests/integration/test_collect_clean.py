"""`judge collect` leaves a clean log (issue 29, review finding #12): no "Task exception was
never retrieved ... RuntimeError: Event loop is closed" from an HTTP client LiteLLM dropped
in one event loop and the collector closed in the next. The CLI runs in subprocesses, as a
user runs it: the asyncio log goes to the process's own stderr there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.conftest import REPO, score_args

JUDGE = Path(sys.executable).parent / "judge"
WAIT_S = 300.0
NOISE = ("Task exception was never retrieved", "Event loop is closed", "Traceback")


def judge(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"OPENAI_API_KEY": "sk-test-dummy", "JUDGE_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run(
        [str(JUDGE), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=WAIT_S
    )


@pytest.mark.parametrize(
    "config",
    [SimulatorConfig(), SimulatorConfig(batch_fail_rate=0.2, seed=4)],
    ids=["all lines answered", "a fifth of the lines failed"],
)
def test_collect_wait_prints_no_task_exception(tmp_path: Path, config: SimulatorConfig) -> None:
    # Issue 29: 1 to 4 of these tracebacks came with 3 of 4 collects that finished a run.
    dataset = REPO / "datasets" / "example.jsonl"
    with SimulatorServer(config) as server:
        submitted = judge(
            *score_args(server, dataset, "run", "--batch", "--no-cache"), cwd=tmp_path
        )
        assert submitted.returncode == 0, submitted.stderr
        # The simulator's batch runs for two retrieves: collect checks it in several event
        # loops before it judges the failed lines online in another.
        collected = judge("collect", "run", "--wait", "--poll", "0.1", cwd=tmp_path)
    assert collected.returncode == 0, collected.stderr
    assert "every batch is in" in collected.stderr
    for noise in NOISE:
        assert noise not in collected.stderr, collected.stderr


def test_collect_without_wait_prints_no_task_exception(tmp_path: Path) -> None:
    # Issue 29: the same with `judge collect` run again until the batch has ended.
    dataset = REPO / "datasets" / "example.jsonl"
    with SimulatorServer(SimulatorConfig(batch_fail_rate=0.2, seed=5)) as server:
        submitted = judge(
            *score_args(server, dataset, "run", "--batch", "--no-cache"), cwd=tmp_path
        )
        assert submitted.returncode == 0, submitted.stderr
        codes, logs = [], []
        while not codes or codes[-1] == 3:
            assert len(codes) < 10, logs
            collected = judge("collect", "run", cwd=tmp_path)
            codes.append(collected.returncode)
            logs.append(collected.stderr)
    assert codes[0] == 3, logs  # still running
    assert codes[-1] == 0, logs  # then finished
    for noise in NOISE:
        assert not any(noise in log for log in logs), logs
