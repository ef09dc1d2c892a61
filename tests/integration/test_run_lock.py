"""One writer per run directory, through the real CLI: `judge` processes racing for one
--out, a `judge resume` of a live run, `--force` on a live run, a kill -9 of the holder, a
--workers run; and each command that writes a run directory refusing one another process
holds.

Issue 29: two processes could write one run directory (a second `judge resume RUN` while
RUN ran, or two `--out X` started together while results.jsonl was still empty): every
case counted twice, "1000 of 1000 cases graded" from a 500-case file, both exit 0.

The first run is kept alive by a proxy that holds its judge calls until the test lets
them through: it holds the lock with results.jsonl still empty, for as long as the test
needs, however loaded the machine is. Nothing waits on a clock, only on what the processes
do (requests arriving, processes ending), with generous deadlines.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import pytest

from judgecli.simulator.server import SimulatorServer
from judgecli.store import RESULTS, RUN_INFO, SUMMARY
from judgecli.store.lock import LOCK
from tests.integration.conftest import ids_once, score_args, write_numbered_cases

JUDGE = Path(sys.executable).parent / "judge"
WAIT_S = 120.0
HOLDER = """
import sys
from pathlib import Path
from judgecli.store.lock import hold_run_dir
hold_run_dir(Path(sys.argv[1]), make=True)
print("held", flush=True)
sys.stdin.read()
"""


class HeldJudge:
    """A proxy in front of the simulator that holds every request until `let_through()`."""

    def __init__(self, upstream: SimulatorServer) -> None:
        self.upstream = upstream.url
        self.opened = threading.Event()
        self.lock = threading.Lock()
        self.count = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                proxy.forward(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.opened.set()
        self.server.shutdown()
        self.server.server_close()

    @property
    def arrived(self) -> int:
        with self.lock:
            return self.count

    def wait_for(self, requests: int, *, sender: subprocess.Popen[str]) -> None:
        """Until `requests` requests are held (`sender` must not end meanwhile)."""
        deadline = time.monotonic() + WAIT_S
        while self.arrived < requests:
            assert sender.poll() is None, sender.communicate()[1]
            assert time.monotonic() < deadline, f"{self.arrived} of {requests} requests came"
            time.sleep(0.02)

    def let_through(self) -> None:
        self.opened.set()

    def forward(self, request: BaseHTTPRequestHandler) -> None:
        body = request.rfile.read(int(request.headers.get("Content-Length") or 0))
        with self.lock:
            self.count += 1
        if not self.opened.wait(timeout=WAIT_S):
            return
        upstream = urllib.request.Request(
            self.upstream + request.path,
            data=body,
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(upstream, timeout=WAIT_S) as reply:
                status, data = reply.status, reply.read()
        except urllib.error.HTTPError as err:
            status, data = err.code, err.read()
        try:
            request.send_response(status)
            request.send_header("Content-Type", "application/json")
            request.send_header("Content-Length", str(len(data)))
            request.end_headers()
            request.wfile.write(data)
        except OSError:  # the caller was killed meanwhile
            pass


def case(i: int) -> dict[str, str]:
    return {"id": f"lock-{i:02d}", "input": f"What is {i} + {i}?", "output": f"It is {2 * i}."}


def write_cases(tmp_path: Path, n: int) -> tuple[Path, list[str]]:
    path = tmp_path / "cases.jsonl"
    return path, write_numbered_cases(path, n, case)


def environment() -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": "sk-test-dummy"}  # JUDGE_CACHE_DIR: the test's


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(JUDGE), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
    )


def judge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(JUDGE), *args], capture_output=True, text=True, timeout=WAIT_S, env=environment()
    )


def ended(process: subprocess.Popen[str]) -> tuple[int, str]:
    _, stderr = process.communicate(timeout=WAIT_S)
    return process.returncode, stderr


def assert_refused_by(holder: int, stderr: str) -> None:
    """One error line naming the holder's pid, and a hint; no traceback."""
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, stderr
    assert f"is in use: judge score (pid {holder}" in errors[0], stderr
    assert f"hint: wait for it to end, stop it (kill {holder})" in stderr
    assert "Traceback" not in stderr


@pytest.fixture
def holder() -> Iterator[Any]:
    """hold(DIR): another process holds DIR's lock until the test ends; returns its pid."""
    processes: list[subprocess.Popen[str]] = []

    def hold(run_dir: Path) -> int:
        process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(run_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        processes.append(process)
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "held"
        return process.pid

    yield hold
    for process in processes:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=WAIT_S)


def test_a_second_writer_of_a_live_run_is_refused_naming_the_holder(judge_server, tmp_path):
    cases, ids = write_cases(tmp_path, 12)
    run_dir = tmp_path / "run"
    with HeldJudge(judge_server) as held:
        first = start(*score_args(held, cases, "run", "--quiet"))
        # Its first call (alone: it settles the response format) waits at the proxy: it
        # holds the lock, and results.jsonl is still empty.
        held.wait_for(1, sender=first)
        assert (run_dir / RESULTS).read_text() == ""
        info = (run_dir / RUN_INFO).read_text()
        for args in (
            score_args(held, cases, "run"),  # the same --out again
            ["resume", "run"],  # a resume of the live run
            score_args(held, cases, "run", "--force"),  # --force on the live run
        ):
            refused = judge(*args)
            assert refused.returncode == 2, refused.stderr
            assert_refused_by(first.pid, refused.stderr)
        assert held.arrived == 1  # none of them called the judge
        assert (run_dir / RUN_INFO).read_text() == info  # nor touched the run
        held.let_through()
        code, stderr = ended(first)
        assert code == 0, stderr
    assert ids_once(run_dir) == ids
    assert json.loads((run_dir / SUMMARY).read_text())["n_cases"] == len(ids)
    assert not (run_dir / LOCK).exists()  # and .lock is no file of the run's


def test_two_runs_started_together_into_one_out_make_one_run(judge_server, tmp_path):
    cases, ids = write_cases(tmp_path, 12)
    with HeldJudge(judge_server) as held:
        both = [start(*score_args(held, cases, "run", "--quiet")) for _ in range(2)]
        # One takes the lock and waits at the proxy; the other is refused at once.
        deadline = time.monotonic() + WAIT_S
        while all(process.poll() is None for process in both):
            assert time.monotonic() < deadline, "neither was refused"
            time.sleep(0.02)
        loser = next(process for process in both if process.poll() is not None)
        winner = next(process for process in both if process is not loser)
        code, stderr = ended(loser)
        assert code == 2, stderr
        assert_refused_by(winner.pid, stderr)
        held.let_through()
        code, stderr = ended(winner)
        assert code == 0, stderr
    assert ids_once(tmp_path / "run") == ids
    assert json.loads((tmp_path / "run" / SUMMARY).read_text())["n_cases"] == len(ids)


def test_kill_9_of_the_holder_frees_the_lock_and_resume_finishes(judge_server, tmp_path):
    cases, ids = write_cases(tmp_path, 12)
    with HeldJudge(judge_server) as held:
        first = start(*score_args(held, cases, "run", "--quiet"))
        held.wait_for(1, sender=first)
        first.send_signal(signal.SIGKILL)
        assert first.wait(timeout=WAIT_S) == -signal.SIGKILL
        held.let_through()
        resumed = judge("resume", "run")  # its lock file is still there: it holds nothing
        assert resumed.returncode == 0, resumed.stderr
    assert ids_once(tmp_path / "run") == ids


def children(pid: int) -> set[int]:
    """The processes whose parent is `pid` now."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.add(int(entry.name))
    return found


def test_a_worker_run_holds_the_lock_in_its_parent_alone(judge_server, tmp_path):
    cases, ids = write_cases(tmp_path, 24)
    with HeldJudge(judge_server) as held:
        first = start(*score_args(held, cases, "run", "--workers", "2", "--quiet"))
        held.wait_for(2, sender=first)
        workers = children(first.pid)
        try:
            refused = judge(*score_args(held, cases, "run"))
            assert refused.returncode == 2
            assert_refused_by(first.pid, refused.stderr)  # the parent, not a worker
            # The parent dies while its workers still wait at the proxy: the workers hold
            # no copy of the lock, so the run can be resumed at once.
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=WAIT_S)
            held.let_through()
            resumed = judge("resume", "run")
            assert resumed.returncode == 0, resumed.stderr
        finally:
            for pid in workers:  # orphans (issue 29's item 2 is another test's)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
    assert ids_once(tmp_path / "run") == ids


def test_a_worker_run_with_its_lock_completes_and_leaves_no_lock(judge_server, tmp_path):
    cases, ids = write_cases(tmp_path, 24)
    done = judge(*score_args(judge_server, cases, "run", "--workers", "2", "--quiet"))
    assert done.returncode == 0, done.stderr
    assert ids_once(tmp_path / "run") == ids
    assert not (tmp_path / "run" / LOCK).exists()


# --- every command that writes a run directory takes its lock (in-process CLI) ------------


def test_each_judging_command_refuses_an_out_another_process_holds(
    run_cli, judge_server, holder, tmp_path
):
    cases, ids = write_cases(tmp_path, 3)
    other = tmp_path / "other.jsonl"
    other.write_text(cases.read_text().replace("It is", "That makes"))
    first = run_cli(judge_server, "score", str(cases), "--rubric", "helpfulness", "--out", "a")
    assert first.exit_code == 0, first.stderr
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": i, "label": 4}) + "\n" for i in ids))
    commands = {
        "score": ("score", str(cases), "--rubric", "helpfulness"),
        "pairwise": ("pairwise", str(cases), str(other), "--rubric", "pairwise"),
        "calibrate": ("calibrate", "--results", "a/results.jsonl", "--labels", str(labels)),
        "arena": ("arena", str(cases), str(other)),
        "refine": ("refine", str(cases), "--rubric", "helpfulness", "-g", "openai/gen-sim"),
    }
    for name, args in commands.items():
        out = tmp_path / f"out-{name}"
        pid = holder(out)
        refused = run_cli(None if name == "calibrate" else judge_server, *args, "--out", str(out))
        assert refused.exit_code == 2, (name, refused.stderr)
        assert f"(pid {pid}" in refused.stderr, (name, refused.stderr)
        assert sorted(p.name for p in out.iterdir()) == [LOCK], name  # nothing written
    assert len(judge_server.requests) == 3  # only the first run's calls


def test_resume_merge_collect_and_report_html_refuse_a_run_another_process_holds(
    run_cli, judge_server, holder, tmp_path
):
    cases, _ = write_cases(tmp_path, 4)
    for index in range(2):
        shard = run_cli(
            judge_server,
            *("score", str(cases), "--rubric", "helpfulness", "--out", f"s{index}"),
            *("--shard", f"{index}/2"),
        )
        assert shard.exit_code == 0, shard.stderr
    pid = holder(tmp_path / "s0")
    resumed = run_cli(None, "resume", "s0")
    assert resumed.exit_code == 2
    assert f"(pid {pid}" in resumed.stderr
    html = run_cli(None, "report", "s0", "--html")
    assert html.exit_code == 2
    assert f"(pid {pid}" in html.stderr
    assert run_cli(None, "report", "s0").exit_code == 0  # a reader takes no lock
    pid = holder(tmp_path / "merged")
    merged = run_cli(None, "merge", "s0", "s1", "--out", "merged")
    assert merged.exit_code == 2
    assert f"(pid {pid}" in merged.stderr
    assert sorted(p.name for p in (tmp_path / "merged").iterdir()) == [LOCK]
    batch = run_cli(judge_server, "score", str(cases), "--rubric", "helpfulness")
    submitted = run_cli(
        judge_server, "score", str(cases), "--rubric", "helpfulness", "--out", "b", "--batch"
    )
    assert batch.exit_code == 0
    assert submitted.exit_code == 0, submitted.stderr
    pid = holder(tmp_path / "b")
    collected = run_cli(None, "collect", "b")
    assert collected.exit_code == 2
    assert f"(pid {pid}" in collected.stderr


def test_drift_anchor_refuses_a_rejudged_run_another_process_holds(
    run_cli, judge_server, holder, tmp_path
):
    cases, _ = write_cases(tmp_path, 3)
    first = run_cli(judge_server, "score", str(cases), "--rubric", "helpfulness", "--out", "a")
    assert first.exit_code == 0, first.stderr
    pid = holder(tmp_path / "d" / "rejudged")
    drift = run_cli(None, "drift", "a", "--anchor", str(cases), "--out", "d")
    assert drift.exit_code == 2, drift.stderr
    assert f"(pid {pid}" in drift.stderr
    assert not (tmp_path / "d" / SUMMARY).exists()


# --- --out "" ------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_out_is_refused_before_anything_is_written(run_cli, judge_server, tmp_path, value):
    # Issue 29: `--out "$OUT"` with OUT unset wrote the run into the current directory.
    cases, _ = write_cases(tmp_path, 3)
    before = sorted(p.name for p in tmp_path.iterdir())
    for args in (
        ("score", str(cases), "--rubric", "helpfulness", "--out", value),
        ("score", str(cases), "--rubric", "helpfulness", "--resume", value),
        ("merge", "x", "--out", value),
        ("drift", "x", "y", "--out", value),
    ):
        refused = run_cli(judge_server if args[0] == "score" else None, *args)
        assert refused.exit_code == 2, refused.stderr
        assert "the path is empty (an unset variable?)" in refused.stderr
        assert "Traceback" not in refused.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not judge_server.requests


def test_judge_out_set_empty_is_unset_and_whitespace_is_refused(
    run_cli, judge_server, tmp_path, monkeypatch
):
    cases, _ = write_cases(tmp_path, 3)
    monkeypatch.setenv("JUDGE_OUT", "")  # as click reads every JUDGE_* variable: not set
    done = run_cli(judge_server, "score", str(cases), "--rubric", "helpfulness")
    assert done.exit_code == 0, done.stderr
    assert not (tmp_path / RESULTS).exists()
    assert len(list((tmp_path / "runs").iterdir())) == 1  # the default run directory
    monkeypatch.setenv("JUDGE_OUT", " ")
    refused = run_cli(judge_server, "score", str(cases), "--rubric", "helpfulness")
    assert refused.exit_code == 2
    assert "JUDGE_OUT" in refused.stderr
    assert "the path is empty" in refused.stderr
