"""--workers children die with their parent (issue 29, review finding #2): after a kill -9 of
the parent (the out-of-memory killer, `timeout -s KILL`, a CI runner), its workers kept
calling the judge for their whole share (327 → 500 requests), then hung for good, deaf to
SIGTERM. Now each worker halts within moments of its parent's death (its calls in flight
land in the reply cache, no new call starts, nothing more is written) and ends, and
`judge resume` finishes the run paying for nothing twice. The CLI runs in a subprocess; the
simulator runs here and counts every request.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from judgecli.judge.halt import GRACE_S
from judgecli.running.lifeline import ORPHAN_MARGIN_S
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.conftest import score_args
from tests.integration.test_workers import (
    JUDGE,
    WAIT_S,
    alive,
    all_ids,
    children,
    finished_lines,
    ids_once,
    write_cases,
)

N = 120
CONCURRENCY = 8  # 4 calls in flight in each of the 2 workers, at most


def test_workers_whose_parent_is_killed_stop_calling_and_end(run_cli, tmp_path: Path) -> None:
    write_cases(tmp_path, N)
    run_dir = tmp_path / "run"
    # JUDGE_CACHE_DIR: the test's own (tests/conftest.py), which the resume shares
    env = os.environ | {"OPENAI_API_KEY": "sk-test-dummy"}
    workers: dict[int, str] = {}
    with SimulatorServer(SimulatorConfig(seed=3, latency_ms=300)) as server:
        try:
            with (tmp_path / "stderr.txt").open("wb") as stderr:
                process = subprocess.Popen(
                    [
                        str(JUDGE),
                        *score_args(server, "cases.jsonl", "run", "--quiet"),
                        *("--workers", "2", "--concurrency", str(CONCURRENCY)),
                    ],
                    cwd=tmp_path,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                )
            deadline = time.monotonic() + WAIT_S
            while len(workers) < 2 or finished_lines(run_dir) < 10:
                assert process.poll() is None, (tmp_path / "stderr.txt").read_text()
                assert time.monotonic() < deadline, "the run made no progress"
                workers |= children(process.pid)
                time.sleep(0.02)

            process.kill()  # kill -9 of the parent alone: its workers are orphaned
            process.wait(timeout=WAIT_S)
            at_kill = len(server.requests)

            # They end by themselves (the old ones were still alive 1 min 40 s later). The
            # bound is the watcher's last resort; a worker ends once its calls in flight land.
            deadline = time.monotonic() + GRACE_S + ORPHAN_MARGIN_S + 30
            while alive(workers):
                assert time.monotonic() < deadline, f"orphaned workers alive: {alive(workers)}"
                time.sleep(0.05)
        finally:
            for pid in alive(workers):  # a failed test leaves no process behind
                os.kill(pid, signal.SIGKILL)
        after = len(server.requests)
        # No new call after the parent's death: only those already on their way.
        assert after - at_kill <= CONCURRENCY, (at_kill, after)
        time.sleep(1.0)
        assert len(server.requests) == after  # and nothing more, ever

        assert finished_lines(run_dir) < N
        resumed = run_cli(None, "resume", "run")  # the run directory is free again
        assert resumed.exit_code == 0, resumed.stderr
        assert ids_once(run_dir) == all_ids(N)
        # Each call was sent once: what the workers had in flight landed in the reply cache,
        # and the resume found it there.
        sent = Counter(json.dumps(r.body.get("messages"), sort_keys=True) for r in server.requests)
        assert set(sent.values()) == {1}
        assert len(sent) == N


def test_a_worker_that_outlives_its_grace_still_ends(tmp_path: Path) -> None:
    # The last resort, on its own: a worker whose main thread is stuck (here: blocked on a
    # signal that never comes, with SIGTERM ignored) is ended by its lifeline's watcher
    # once the parent is gone. Run in a child process that plays the parent and dies.
    script = tmp_path / "parent.py"
    script.write_text(
        "import os, signal, sys, time\n"
        "from judgecli.running.lifeline import Lifeline\n"
        "lifeline = Lifeline.open()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    lifeline.tie(())\n"
        "    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # deaf, as the old workers were\n"
        "    while True:\n"
        "        signal.pause()\n"
        "lifeline.forked()\n"
        "print(pid, flush=True)\n"
        "time.sleep(600)\n",
        encoding="utf-8",
    )
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    worker = {child: children(parent.pid)[child]}
    parent.send_signal(signal.SIGKILL)
    parent.wait(timeout=WAIT_S)
    deadline = time.monotonic() + GRACE_S + ORPHAN_MARGIN_S + 60
    while alive(worker):
        assert time.monotonic() < deadline, "the stuck worker outlived its parent"
        time.sleep(0.1)
