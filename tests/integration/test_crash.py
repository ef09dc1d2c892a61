"""A crash: a `judge score` subprocess killed with SIGKILL at three seeded random points and
resumed after each with `judge resume RUN`, against the simulator in this process.

What must hold (the issue's words): the final results.jsonl equals an uninterrupted run's
(order aside), and the server saw no second call for any case that had finished (cache).

What can be asserted exactly. A case's reply goes into the reply cache (committed at once)
before its line is appended to results.jsonl, and a resume skips the ids in results.jsonl
and answers cached requests without a call. So after a kill:
* a case with a line in results.jsonl is never asked again;
* a case whose request reached the server but whose reply never reached the cache (in
  flight at the kill) is asked again by the next session, once: at most `--concurrency`
  such cases per kill;
* a case whose reply was cached but whose line was not yet written is answered from the
  cache (its judgement says ``cached``), with no call.
Each case's final line therefore comes from a call paid in the session that wrote it, or
from the cache filled by an earlier session; never from a second call after a finished one.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from judgecli.simulator.server import RecordedRequest, SimulatorConfig, SimulatorServer
from tests.integration.conftest import DATA, case_id_in, score_args, write_numbered_cases

N_CASES = 200
CONCURRENCY = 8
KILLS = 3
SEED = 20240611
CASE_ID = re.compile(r"crash-\d{3}")
TOPICS = ("glaciers", "earthquakes", "compilers", "bridges", "enzymes")
SIMULATOR = SimulatorConfig(seed=5, latency_ms=20)
# A killed process's last requests are read by the server within milliseconds; wait this
# long before the next session so every request is counted in the session that sent it.
SETTLE_S = 0.2
WAIT_S = 60.0
# The console script users run (`python -m judgecli` works too: see the last test).
JUDGE = Path(sys.executable).parent / "judge"


def crash_case(i: int) -> dict[str, str]:
    case_id, topic = f"crash-{i:03d}", TOPICS[i % len(TOPICS)]
    return {
        "id": case_id,
        "input": f"Question {case_id}: what shapes {topic}?",
        "output": f"Several forces shape {topic} over time. " * (1 + i % 3),
    }


def verdict_of(result: dict[str, Any]) -> dict[str, Any]:
    """What a case's line says, without what differs between runs (latency, cache, cost)."""
    keep = ("id", "status", "error", "score", "criteria", "choice", "passed", "category")
    judged = [
        (j["model"], j.get("raw"), j.get("verdict"), j.get("error")) for j in result["judgements"]
    ]
    return {k: result.get(k) for k in keep} | {"judgements": judged}


def complete_lines(path: Path) -> list[str]:
    """The lines of results.jsonl a resume keeps (a torn last line is cut)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return text[: text.rfind("\n") + 1].splitlines()


class Sessions:
    """Subprocess runs of the CLI against one server, each with the requests it sent."""

    def __init__(self, server: SimulatorServer, env: dict[str, str], log: Path) -> None:
        self.server = server
        self.env = env
        self.log = log
        self.starts: list[float] = []

    def launch(self, *args: str) -> subprocess.Popen[bytes]:
        self.starts.append(time.monotonic())
        with self.log.open("ab") as log:
            return subprocess.Popen(
                [str(JUDGE), *args],
                stdout=subprocess.DEVNULL,
                stderr=log,
                env=self.env,
            )

    def sent_since_start(self) -> int:
        start = self.starts[-1]
        return sum(1 for r in self.server.requests if r.time >= start)

    def kill_after(self, process: subprocess.Popen[bytes], requests: int) -> None:
        """SIGKILL the process once the server has received `requests` of its calls."""
        deadline = time.monotonic() + WAIT_S
        while self.sent_since_start() < requests:
            assert process.poll() is None, f"ended before the kill: {self.log.read_text()}"
            assert time.monotonic() < deadline, "no progress"
            time.sleep(0.002)
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=WAIT_S) == -signal.SIGKILL
        time.sleep(SETTLE_S)

    def requests_by_session(self, since: float) -> list[list[RecordedRequest]]:
        """The requests after `since` (the reference run's end), split at each launch."""
        requests = [r for r in self.server.requests if r.time >= since]
        bounds = [*self.starts[1:], float("inf")]
        return [
            [r for r in requests if start <= r.time < end]
            for start, end in zip(self.starts, bounds, strict=True)
        ]


def test_a_run_killed_three_times_and_resumed_equals_an_uninterrupted_run(run_cli, tmp_path):
    ids = write_numbered_cases(tmp_path / "cases.jsonl", N_CASES, crash_case)
    results = tmp_path / "run" / "results.jsonl"
    rng = random.Random(SEED)
    started = time.monotonic()
    with SimulatorServer(SIMULATOR) as server:
        reference = run_cli(
            server,
            "score",
            "cases.jsonl",
            "--rubric",
            "helpfulness",
            "--out",
            "reference",
            "--no-cache",
            "--json",
            "--quiet",
        )
        assert reference.exit_code == 0, reference.stderr
        reference_done = time.monotonic()

        env = {**os.environ, "OPENAI_API_KEY": "sk-test-dummy"}  # JUDGE_CACHE_DIR: tmp_path
        sessions = Sessions(server, env, tmp_path / "stderr.log")
        process = sessions.launch(
            *score_args(server, "cases.jsonl", "run", "--concurrency", str(CONCURRENCY), "--quiet")
        )
        at_kill: list[list[str]] = []
        for _ in range(KILLS):
            remaining = N_CASES - len(complete_lines(results))
            # A seeded random point between a sixth and half of what is left to judge.
            sessions.kill_after(process, rng.randint(remaining // 6, remaining // 2))
            at_kill.append(complete_lines(results))
            assert not (tmp_path / "run" / "summary.json").exists()
            process = sessions.launch("resume", "run")
        assert process.wait(timeout=WAIT_S) == 0, sessions.log.read_text()
        by_session = sessions.requests_by_session(reference_done)
    print(
        f"crash: {time.monotonic() - started:.1f} s; results at each kill:",
        [len(lines) for lines in at_kill],
    )

    # The final results.jsonl equals the uninterrupted run's, order aside, each id once.
    final_lines = results.read_text(encoding="utf-8").splitlines()
    final = [json.loads(line) for line in final_lines]
    assert sorted(r["id"] for r in final) == ids
    expected = [json.loads(x) for x in Path("reference/results.jsonl").read_text().splitlines()]
    assert sorted(map(verdict_of, final), key=lambda v: v["id"]) == sorted(
        map(verdict_of, expected), key=lambda v: v["id"]
    )
    assert all(r["status"] == "ok" for r in final)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["n_cases"] == N_CASES
    assert summary["mean"] == reference.summary["mean"]

    # A resume keeps every line it found: each kill's lines open the final file.
    for lines in at_kill:
        assert final_lines[: len(lines)] == lines

    # What the server saw, session by session (the reference run excluded).
    asked = [Counter(case_id_in(r, CASE_ID) for r in requests) for requests in by_session]
    assert all(r.status == 200 for requests in by_session for r in requests)
    for counts in asked:
        assert max(counts.values(), default=1) == 1  # no case asked twice in one session
    for kill, lines in enumerate(at_kill):
        finished = {json.loads(line)["id"] for line in lines}
        later = set().union(*asked[kill + 1 :])
        # No case that had finished before a kill was asked again after it.
        assert not finished & later, sorted(finished & later)
        # Only cases in flight at the kill are asked again: at most one per slot.
        repeated = set(asked[kill]) & later
        assert len(repeated) <= CONCURRENCY, sorted(repeated)

    # Each final line was paid for once, by the session that wrote it, or answered from the
    # cache an earlier session filled.
    written_by = [0] * len(final_lines)
    for kill, lines in enumerate(at_kill):
        for index in range(len(lines), len(final_lines)):
            written_by[index] = kill + 1
    for result, session in zip(final, written_by, strict=True):
        (judgement,) = result["judgements"]
        if judgement.get("cached"):
            assert result["id"] not in asked[session], result["id"]
            assert any(result["id"] in counts for counts in asked[:session]), result["id"]
        else:
            assert result["id"] in asked[session], result["id"]
    total = sum(sum(counts.values()) for counts in asked)
    print("requests per session:", [sum(c.values()) for c in asked], "total:", total)
    assert N_CASES <= total <= N_CASES + KILLS * CONCURRENCY


# Regression: run.json once recorded argv ['judge', '-m', 'judgecli', ...] for runs started
# with `python -m judgecli`, and `judge resume` then failed with 'No such option: -m'.
def test_a_run_started_with_python_dash_m_can_be_resumed(run_cli, judge_server):
    args = score_args(judge_server, DATA / "three_cases.jsonl", "run", "--limit", "2", "--quiet")
    started = subprocess.run(
        [sys.executable, "-m", "judgecli", *args],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        env={**os.environ, "OPENAI_API_KEY": "sk-test-dummy"},
    )
    assert started.returncode == 0, started.stderr
    argv = json.loads(Path("run/run.json").read_text())["argv"]
    assert argv[:2] == ["judge", "score"], argv
    resumed = run_cli(None, "resume", "run")
    assert resumed.exit_code == 0, resumed.stderr
