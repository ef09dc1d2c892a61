"""SIGTERM and Ctrl-C pay nothing twice (issue 29, review finding #17): the calls in flight at
the first signal get a grace to land (their replies in the reply cache, the cases they
finish in results.jsonl) while no new call starts; a second signal ends the run at once;
calls sent for cases that did not finish are counted in summary.json's usage, so that a
resumed run's totals are what the judge was sent. The CLI runs in a subprocess, as CI's
cancellation, `timeout` and `docker stop` meet it; the simulator runs here and counts every
request it was sent.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from judgecli.judge.halt import GRACE_S
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from judgecli.store import RUN_INFO, SUMMARY
from tests.integration.conftest import score_args
from tests.integration.test_workers import JUDGE, WAIT_S, all_ids, finished_lines, ids_once
from tests.integration.test_workers import write_cases as write_numbered

SLOW_MS = 9_000.0
"""A judge slower than the grace (GRACE_S, plus its settling): its calls in flight are cut off."""
assert SLOW_MS / 1000 > GRACE_S + 3


def launch(server: SimulatorServer, tmp_path: Path, *extra: str) -> subprocess.Popen[bytes]:
    """`judge score cases.jsonl ... --out run` in a session of its own (so that a Ctrl-C can
    go to its whole process group, as a terminal sends it); stderr to tmp_path/stderr.txt."""
    # JUDGE_CACHE_DIR: the test's own (tests/conftest.py), which the resume shares
    env = os.environ | {"OPENAI_API_KEY": "sk-test-dummy"}
    with (tmp_path / "stderr.txt").open("wb") as stderr:
        return subprocess.Popen(
            [str(JUDGE), *score_args(server, "cases.jsonl", "run", *extra)],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=ctrl_c_as_at_a_terminal,
        )


def ctrl_c_as_at_a_terminal() -> None:
    """In the child, before it starts judge: Ctrl-C handled, as a terminal starts a program.
    A background job of a non-interactive shell (`pytest ... &`) starts with Ctrl-C
    ignored, every process it starts inherits that, and judge rightly keeps ignoring it.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_until(process: subprocess.Popen[bytes], done, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not done():
        assert process.poll() is None, f"the run ended before {what}"
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.02)


def stderr_of(tmp_path: Path) -> str:
    return (tmp_path / "stderr.txt").read_text(encoding="utf-8", errors="replace")


def send(process: subprocess.Popen[bytes], how: str) -> None:
    """SIGTERM or Ctrl-C to the judge process, or to every process of its group (its
    --workers children too), as a terminal sends Ctrl-C and systemd stops a service."""
    if how == "SIGTERM":
        process.send_signal(signal.SIGTERM)
    elif how == "SIGINT":
        process.send_signal(signal.SIGINT)
    elif how == "SIGTERM to the group":
        os.killpg(process.pid, signal.SIGTERM)
    else:
        os.killpg(process.pid, signal.SIGINT)


def paid_once(server: SimulatorServer) -> bool:
    """Whether the judge was sent every request it was sent exactly once."""
    sent = Counter(json.dumps(r.body.get("messages"), sort_keys=True) for r in server.requests)
    return set(sent.values()) == {1}


def summary_usage(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / SUMMARY).read_text(encoding="utf-8"))["usage"]


@pytest.mark.parametrize(
    ("how", "said", "workers", "extra"),
    [
        ("SIGTERM", "stopped by SIGTERM", 1, ()),
        ("SIGINT", "interrupted", 1, ()),
        ("SIGTERM", "stopped by SIGTERM", 1, ("--no-cache",)),
        ("SIGTERM", "stopped by SIGTERM", 2, ()),
        ("Ctrl-C to the group", "interrupted", 2, ()),
        # Issue 36: each worker got this SIGTERM twice (the sender's, the parent's relay),
        # took the second as a second signal and cut its calls in flight off.
        ("SIGTERM to the group", "stopped by SIGTERM", 2, ()),
    ],
    ids=[
        "sigterm",
        "ctrl-c",
        "sigterm-no-cache",
        "sigterm-workers",
        "ctrl-c-group-workers",
        "sigterm-group-workers",
    ],
)
def test_the_calls_in_flight_at_a_signal_land_and_resume_pays_nothing_twice(
    run_cli, tmp_path, how, said, workers, extra
):
    # Issue 29: 516 requests for 500 cases, as the 16 calls in flight at SIGTERM were
    # cancelled and sent again by the resume. A judge at 300 ms a call answers well within
    # the grace: each call is sent once, whatever stops the run.
    n = 60
    write_numbered(tmp_path, n)
    run_dir = tmp_path / "run"
    with SimulatorServer(SimulatorConfig(seed=3, latency_ms=300)) as server:
        process = launch(server, tmp_path, "--concurrency", "8", "--workers", str(workers), *extra)
        wait_until(process, lambda: finished_lines(run_dir) >= 5, "5 cases were judged")
        send(process, how)
        process.wait(timeout=WAIT_S)
        stderr = stderr_of(tmp_path)
        assert process.returncode == 3, stderr  # not 143, not 130: the stop is handled
        assert f"error: {said}: finished cases are saved in results.jsonl" in stderr
        assert "stopping: no new calls" in stderr  # said while it waits
        assert "cut off" not in stderr
        assert paid_once(server)  # nothing in flight was given up
        done = ids_once(run_dir)
        assert 5 <= len(done) < n
        resumed = run_cli(None, "resume", "run")
        assert resumed.exit_code == 0, resumed.stderr
        assert ids_once(run_dir) == all_ids(n)
        assert paid_once(server)
        assert len(server.requests) == n
        # Every call the judge was sent is counted once in the run's usage, with --workers
        # too. Issue 36: a worker run undercounted by one call (CI of 6f9fe87, 1 run in about
        # 10 under a loaded serial suite): a case its call had landed for was lost between
        # the processes, and the resume answered it from the cache (paid once, counted none).
        calls = summary_usage(run_dir)["calls"]
        assert calls == len(server.requests), (calls, len(server.requests))


def slow_run_sent(server: SimulatorServer, tmp_path: Path, workers: int) -> subprocess.Popen[bytes]:
    """8 cases judged against a judge slower than the grace, once every call is sent (each
    process's client sends its first call alone, to learn the response format: that one
    has landed by then), SIGTERM sent."""
    write_numbered(tmp_path, 8)
    process = launch(server, tmp_path, "--concurrency", "8", "--workers", str(workers))
    wait_until(process, lambda: len(server.requests) == 8, "every call was sent")
    process.send_signal(signal.SIGTERM)
    return process


def unfinished_in(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / RUN_INFO).read_text(encoding="utf-8"))["unfinished"]


@pytest.mark.parametrize("workers", [1, 2])
def test_calls_the_grace_cuts_off_are_counted_in_the_usage(run_cli, tmp_path, workers):
    # A judge slower than the grace: the calls in flight at SIGTERM are cut off after
    # GRACE_S and sent again by the resume. summary.json counts every call the judge was
    # sent, those for cases that did not finish in the session that sent them apart.
    run_dir = tmp_path / "run"
    with SimulatorServer(SimulatorConfig(seed=3, latency_ms=SLOW_MS)) as server:
        process = slow_run_sent(server, tmp_path, workers)
        process.wait(timeout=WAIT_S)
        stderr = stderr_of(tmp_path)
        assert process.returncode == 3, stderr
        assert "stopped by SIGTERM" in stderr
        finished = len(ids_once(run_dir))
        cut_off = 8 - finished
        assert cut_off >= 8 - workers  # all but each client's first call
        if workers == 1:  # (a worker's own message stays with its parent)
            assert f"{cut_off} call(s) still in flight after {GRACE_S:g} s were cut off" in stderr
        assert unfinished_in(run_dir) == {
            "calls": cut_off,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cost_usd": 0.0,
        }
        resumed = run_cli(None, "resume", "run")
        assert resumed.exit_code == 0, resumed.stderr
        assert ids_once(run_dir) == all_ids(8)
        assert len(server.requests) == 8 + cut_off
    usage = summary_usage(run_dir)
    assert (usage["calls"], usage["cached"]) == (8 + cut_off, 0)
    assert usage["unfinished"]["calls"] == cut_off


@pytest.mark.parametrize("workers", [1, 2])
def test_a_second_signal_during_the_grace_ends_the_run_at_once(tmp_path, workers):
    run_dir = tmp_path / "run"
    with SimulatorServer(SimulatorConfig(seed=3, latency_ms=SLOW_MS)) as server:
        process = slow_run_sent(server, tmp_path, workers)
        wait_until(process, lambda: "stopping:" in stderr_of(tmp_path), "the grace began")
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=WAIT_S)
        stderr = stderr_of(tmp_path)
        assert process.returncode == 3, stderr
        # Ended by the second signal, not by the grace running out (that would say how
        # many calls it cut off after GRACE_S).
        assert "error: stopped by SIGTERM again, at once: finished cases are saved" in stderr
        assert f"after {GRACE_S:g} s" not in stderr
        finished = len(ids_once(run_dir))
        assert finished <= workers  # each client's first call, if any
        # The calls cut off are counted, the workers' too (each says so as it ends).
        assert unfinished_in(run_dir)["calls"] == 8 - finished
