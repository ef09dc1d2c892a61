"""`--workers N`: one run judged by N forked processes, through the real CLI and LiteLLM
against the simulator. What must hold: the same verdicts and numbers as one process, every
case judged once (by one worker, and not at all from a warm cache), a run directory any N
can resume, the parent's stops (--max-failures, a sequential gate, SIGTERM) obeyed by every
worker, and no worker left behind.

Nothing here measures time: subprocess runs are watched through what they write (lines of
results.jsonl) with generous deadlines, so a loaded machine only makes them slower.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from judgecli.simulator.server import RecordedRequest, SimulatorConfig, SimulatorServer
from judgecli.store import RESULTS, RUN_INFO, SUMMARY
from tests.integration.conftest import case_id_in, score_args, write_jsonl, write_numbered_cases

JUDGE = Path(sys.executable).parent / "judge"
WAIT_S = 120.0
CASE_ID = re.compile(r"w-\d{3}")
TOPICS = ("tides", "rainbows", "volcanoes", "magnets", "glaciers", "eclipses")
GOOD = (
    "{topic} work through a clear mechanism, explained step by step with an example, the "
    "reasons behind it, and what to check next. "
)
EVASIVE = "I don't know."
N_CASES = 80


def answer(i: int, good: bool) -> str:
    """Answers of every quality the simulator tells apart: evasive, short, long."""
    topic = TOPICS[i % len(TOPICS)].capitalize()
    return GOOD.format(topic=topic) * (1 + i % 3) if good else EVASIVE


def case(i: int) -> dict[str, str]:
    return {
        "id": f"w-{i:03d}",
        "input": f"Question w-{i:03d}: how do {TOPICS[i % len(TOPICS)]} work?",
        "output": answer(i, good=i % 4 != 0),
        "category": TOPICS[i % len(TOPICS)],
    }


def write_cases(tmp_path: Path, n: int = N_CASES) -> Path:
    path = tmp_path / "cases.jsonl"
    write_numbered_cases(path, n, case)
    return path


def write_pairs(tmp_path: Path, n: int = N_CASES) -> tuple[Path, Path]:
    old, new = [], []
    for i in range(n):
        base = {k: v for k, v in case(i).items() if k != "output"}
        old.append(base | {"output": answer(i, good=i % 3 == 0)})
        new.append(base | {"output": answer(i + 1, good=i % 5 != 0)})
    return write_jsonl(tmp_path / "old.jsonl", old), write_jsonl(tmp_path / "new.jsonl", new)


def score(run_cli, server, data: Path, out: str, *extra: str):
    args = ("score", str(data), "--rubric", "helpfulness", "--out", out, "--json", "--quiet")
    return run_cli(server, *args, *extra)


def pairwise(run_cli, server, old: Path, new: Path, out: str, *extra: str):
    return run_cli(
        server, "pairwise", str(old), str(new), "--out", out, "--json", "--quiet", *extra
    )


def result_lines(run_dir: Path) -> list[dict[str, Any]]:
    """Every line of results.jsonl, each of which must be a whole JSON object."""
    path = run_dir / RESULTS
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    assert not text or text.endswith("\n"), "a torn last line"
    return [json.loads(line) for line in text.splitlines()]


def finished_lines(run_dir: Path) -> int:
    """How many whole lines results.jsonl holds now (a subprocess may be writing it)."""
    path = run_dir / RESULTS
    return path.read_bytes().count(b"\n") if path.exists() else 0


def ids_once(run_dir: Path) -> list[str]:
    """The ids in results.jsonl, sorted, after checking none appears twice."""
    ids = [line["id"] for line in result_lines(run_dir)]
    repeated = [i for i, n in Counter(ids).items() if n > 1]
    assert not repeated, f"judged more than once: {repeated}"
    return sorted(ids)


def without_latency(value: Any) -> Any:
    """`value` with every latency figure left out (the one thing that differs by timing)."""
    if isinstance(value, dict):
        return {k: without_latency(v) for k, v in value.items() if "latency" not in k}
    if isinstance(value, list):
        return [without_latency(v) for v in value]
    return value


def verdicts(run_dir: Path) -> dict[str, Any]:
    return {line["id"]: without_latency(line) for line in result_lines(run_dir)}


def summary_numbers(run_dir: Path) -> dict[str, Any]:
    return without_latency(json.loads((run_dir / SUMMARY).read_text(encoding="utf-8")))


def asked(requests: list[RecordedRequest]) -> Counter[str]:
    """How many requests named each case id."""
    return Counter(case_id_in(request, CASE_ID) for request in requests)


def all_ids(n: int = N_CASES) -> list[str]:
    return [case(i)["id"] for i in range(n)]


# --- the same run, whatever N -------------------------------------------------------------


def test_score_with_two_workers_equals_one_worker(run_cli, judge_server, tmp_path):
    data = write_cases(tmp_path)
    one = score(run_cli, judge_server, data, "one", "--no-cache", "--workers", "1")
    assert one.exit_code == 0, one.stderr
    assert asked(judge_server.requests) == dict.fromkeys(all_ids(), 1)
    judge_server.reset()
    two = score(run_cli, judge_server, data, "two", "--no-cache", "--workers", "2")
    assert two.exit_code == 0, two.stderr
    # Each case went to the server once: no case was sent by both workers.
    assert asked(judge_server.requests) == dict.fromkeys(all_ids(), 1)
    assert ids_once(tmp_path / "two") == all_ids()
    assert verdicts(tmp_path / "two") == verdicts(tmp_path / "one")
    numbers = summary_numbers(tmp_path / "two")
    assert numbers == summary_numbers(tmp_path / "one")
    assert without_latency(two.summary) == without_latency(one.summary)
    # The data gives numbers worth comparing: more than one score, some passes, some not.
    assert numbers["n_cases"] == numbers["n_ok"] == N_CASES
    assert sum(count > 0 for count in numbers["distribution"].values()) > 1
    assert 0 < numbers["pass_rate"] < 1
    info = json.loads((tmp_path / "two" / RUN_INFO).read_text())
    assert info["config"]["workers"] == 2


def test_pairwise_with_two_workers_equals_one_worker(run_cli, judge_server, tmp_path):
    old, new = write_pairs(tmp_path)
    one = pairwise(run_cli, judge_server, old, new, "one", "--no-cache", "--workers", "1")
    assert one.exit_code == 0, one.stderr
    judge_server.reset()
    two = pairwise(run_cli, judge_server, old, new, "two", "--no-cache", "--workers", "2")
    assert two.exit_code == 0, two.stderr
    # Both orders of each pair, once each: one worker judged the pair, whole.
    assert asked(judge_server.requests) == dict.fromkeys(all_ids(), 2)
    assert ids_once(tmp_path / "two") == all_ids()
    assert verdicts(tmp_path / "two") == verdicts(tmp_path / "one")
    numbers = summary_numbers(tmp_path / "two")
    assert numbers == summary_numbers(tmp_path / "one")
    assert numbers["wins"] > 0
    assert numbers["losses"] > 0


def calibrate_args(tmp_path: Path) -> tuple[str, ...]:
    labels = [case(i) | {"label": 1 + i % 4} for i in range(40)]
    return (str(write_jsonl(tmp_path / "labels.jsonl", labels)), "--rubric", "helpfulness")


def refine_args(tmp_path: Path) -> tuple[str, ...]:
    prompts = [{k: v for k, v in case(i).items() if k != "output"} for i in range(20)]
    data = write_jsonl(tmp_path / "prompts.jsonl", prompts)
    return (str(data), "--rubric", "helpfulness", "--generator", "openai/gen-sim")


@pytest.mark.parametrize(
    ("command", "args", "own_file"),
    [
        ("calibrate", calibrate_args, "disagreements.jsonl"),
        ("refine", refine_args, "answers.jsonl"),
    ],
)
def test_calibrate_and_refine_with_two_workers_equal_one_worker(
    run_cli, judge_server, tmp_path, command, args, own_file
):
    given = args(tmp_path)
    runs = {}
    for workers in ("1", "2"):
        run = run_cli(
            judge_server,
            command,
            *given,
            "--out",
            workers,
            "--no-cache",
            "--workers",
            workers,
            "--json",
            "--quiet",
        )
        assert run.exit_code == 0, run.stderr
        runs[workers] = run
    assert without_latency(runs["2"].summary) == without_latency(runs["1"].summary)
    assert verdicts(tmp_path / "2") == verdicts(tmp_path / "1")
    assert len(set(verdicts(tmp_path / "2"))) == len(result_lines(tmp_path / "2"))
    # The command's own file, written from the results in id order, is the same too.
    assert (tmp_path / "2" / own_file).read_text() == (tmp_path / "1" / own_file).read_text()


def test_a_cached_rerun_with_two_workers_makes_no_calls(run_cli, judge_server, tmp_path):
    data = write_cases(tmp_path)
    first = score(run_cli, judge_server, data, "first", "--workers", "2")
    assert first.exit_code == 0, first.stderr
    assert asked(judge_server.requests) == dict.fromkeys(all_ids(), 1)
    judge_server.reset()
    again = score(run_cli, judge_server, data, "again", "--workers", "2")
    assert again.exit_code == 0, again.stderr
    assert judge_server.requests == []
    assert again.summary["usage"]["calls"] == 0
    assert again.summary["usage"]["cached"] == N_CASES
    assert ids_once(tmp_path / "again") == all_ids()
    first_verdicts = {k: v["score"] for k, v in verdicts(tmp_path / "first").items()}
    assert {k: v["score"] for k, v in verdicts(tmp_path / "again").items()} == first_verdicts


@pytest.mark.parametrize(("before", "after"), [(2, 1), (1, 2)])
def test_a_run_cut_short_resumes_with_any_number_of_workers(
    run_cli, judge_server, tmp_path, before, after
):
    data = write_cases(tmp_path)
    run_dir = tmp_path / "run"
    first = score(run_cli, judge_server, data, "run", "--no-cache", "--workers", str(before))
    assert first.exit_code == 0, first.stderr
    whole = verdicts(run_dir)
    # A crash halfway: results.jsonl keeps its first lines, there is no summary.
    lines = (run_dir / RESULTS).read_text().splitlines(keepends=True)
    (run_dir / RESULTS).write_text("".join(lines[: len(lines) // 2]))
    (run_dir / SUMMARY).unlink()
    kept = {json.loads(line)["id"] for line in lines[: len(lines) // 2]}
    judge_server.reset()
    resumed = run_cli(
        judge_server,
        "score",
        str(data),
        "--rubric",
        "helpfulness",
        "--resume",
        "run",
        "--no-cache",
        "--workers",
        str(after),
        "--json",
        "--quiet",
    )
    assert resumed.exit_code == 0, resumed.stderr
    # Only the missing cases were judged, each once.
    assert asked(judge_server.requests) == dict.fromkeys(sorted(set(all_ids()) - kept), 1)
    assert ids_once(run_dir) == all_ids()
    assert verdicts(run_dir) == whole
    assert resumed.summary["n_cases"] == N_CASES
    assert "incomplete" not in resumed.summary


# --- the parent's stops -------------------------------------------------------------------


def test_max_failures_0_stops_every_worker_and_marks_the_run_incomplete(run_cli, tmp_path):
    n = 200
    data = write_cases(tmp_path, n)
    # One call in ten fails with a 500; some latency, so that the run is still going when
    # the parent sees the first failed case (the workers then take no new case).
    config = SimulatorConfig(seed=11, error_rate=0.1, latency_ms=40)
    with SimulatorServer(config) as server:
        run = score(
            run_cli,
            server,
            data,
            "run",
            "--workers",
            "2",
            "--concurrency",
            "2",
            "--max-retries",
            "0",
            "--max-failures",
            "0",
        )
        failed_calls = sum(r.status == 500 for r in server.requests)
    assert run.exit_code == 3, run.stderr
    summary = json.loads((tmp_path / "run" / SUMMARY).read_text())
    assert summary["n_failed"] >= 1
    assert summary["n_failed"] <= failed_calls
    assert summary["incomplete"].startswith(f"the judge could not grade {summary['n_failed']}")
    assert "stopped early" in summary["incomplete"]
    assert "gate" not in summary
    assert len(ids_once(tmp_path / "run")) < n
    assert "INCOMPLETE" in (tmp_path / "run" / "report.md").read_text()


def test_a_sequential_gate_stops_two_workers_once_decided(run_cli, tmp_path):
    n = 300
    rows = [
        {
            "id": f"w-{i:03d}",
            "input": f"Question w-{i:03d}: how do {TOPICS[i % len(TOPICS)]} work?",
            "output": answer(i, good=i % 10 != 0),
        }
        for i in range(n)
    ]
    data = write_jsonl(tmp_path / "cases.jsonl", rows)
    # Latency keeps the workers from racing far past the decision before the parent sees it.
    with SimulatorServer(SimulatorConfig(latency_ms=20)) as server:
        run = score(
            run_cli,
            server,
            data,
            "run",
            "--workers",
            "2",
            "--sequential",
            "--min-pass-rate",
            "0.5",
        )
        calls = len(server.requests)
    assert run.exit_code == 0, run.stderr
    seq = run.summary["sequential"]
    assert seq["decision"] == "pass"
    assert seq["n_cases"] == n
    assert seq["decided_after"] <= seq["judged"] < n
    assert run.summary["n_cases"] == seq["judged"]
    assert "incomplete" not in run.summary
    assert run.summary["gate"]["on"] == "sequential"
    assert run.summary["gate"]["passed"] is True
    assert len(ids_once(tmp_path / "run")) == seq["judged"]
    assert calls == seq["judged"]


# --- signals and dead workers (the CLI in a subprocess) -----------------------------------


def start_time(pid: int) -> str | None:
    """The process's start time in clock ticks (/proc/PID/stat field 22), None once it is
    gone or a zombie: with the pid, it names one process even if the pid is reused.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
    return None if fields[0] in ("Z", "X") else fields[19]


def children(pid: int) -> dict[int, str]:
    """The live child processes of `pid`, with their start times."""
    found: dict[int, str] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        for word in (task / "children").read_text().split():
            started = start_time(int(word))
            if started is not None:
                found[int(word)] = started
    return found


def alive(processes: dict[int, str]) -> list[int]:
    return [pid for pid, started in processes.items() if start_time(pid) == started]


def launch(server: SimulatorServer, tmp_path: Path, *extra: str) -> subprocess.Popen[bytes]:
    env = os.environ | {"OPENAI_API_KEY": "sk-test-dummy"}  # JUDGE_CACHE_DIR: tmp_path
    return subprocess.Popen(
        [str(JUDGE), *score_args(server, "cases.jsonl", "run", "--quiet", *extra)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def wait_for_workers(process: subprocess.Popen[bytes], run_dir: Path, lines: int) -> dict:
    """Once the run has written `lines` results: its two workers (each seen alive)."""
    deadline = time.monotonic() + WAIT_S
    workers: dict[int, str] = {}
    while len(workers) < 2 or finished_lines(run_dir) < lines:
        assert process.poll() is None, process.communicate()[1].decode()
        assert time.monotonic() < deadline, f"no progress: {finished_lines(run_dir)} lines"
        workers |= children(process.pid)
        time.sleep(0.02)
    return workers


def test_sigterm_to_the_parent_stops_every_worker_and_resume_finishes(run_cli, tmp_path):
    n = 60
    write_numbered_cases(tmp_path / "cases.jsonl", n, case)
    run_dir = tmp_path / "run"
    with SimulatorServer(SimulatorConfig(seed=3, latency_ms=150)) as server:
        process = launch(server, tmp_path, "--workers", "2", "--concurrency", "4")
        workers = wait_for_workers(process, run_dir, 3)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=WAIT_S)
        text = stderr.decode()
        assert process.returncode == 3, text  # not 143: the stop is handled
        assert "stopped by SIGTERM" in text
        assert "judge resume" in text
        # The parent waited for its workers: none outlives it.
        assert alive(workers) == []
        done = ids_once(run_dir)  # whole, valid lines, each case once
        assert 3 <= len(done) < n
        resumed = run_cli(None, "resume", "run")  # again with --workers 2
        assert resumed.exit_code == 0, resumed.stderr
        assert ids_once(run_dir) == all_ids(n)
        # The cases finished before the stop were not asked again.
        assert all(asked(server.requests)[i] == 1 for i in done)
    info = json.loads((run_dir / RUN_INFO).read_text())
    assert info["config"]["workers"] == 2
    assert "resumed" in info


def test_a_worker_that_dies_stops_the_run_with_exit_3_and_resume_finishes(run_cli, tmp_path):
    # In this process (the workers are forked from it): a watcher kills one worker once
    # the run has written a few results.
    n = 60
    data = write_cases(tmp_path, n)
    run_dir = tmp_path / "run"
    before = children(os.getpid())
    killed: dict[int, str] = {}

    def kill_a_worker() -> None:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            workers = {p: t for p, t in children(os.getpid()).items() if p not in before}
            if len(workers) == 2 and finished_lines(run_dir) >= 3:
                killed.update(workers)
                os.kill(min(workers), signal.SIGKILL)  # out of memory, say
                return
            time.sleep(0.02)

    watcher = threading.Thread(target=kill_a_worker, daemon=True)
    with SimulatorServer(SimulatorConfig(seed=3, latency_ms=150)) as server:
        watcher.start()
        run = score(run_cli, server, data, "run", "--workers", "2", "--concurrency", "4")
        watcher.join(timeout=WAIT_S)
        assert killed, "the run ended before a worker could be killed"
        assert run.exit_code == 3, run.stderr
        assert re.search(r"worker \d of 2 died \(exit code -9\)", run.stderr), run.stderr
        assert "judge resume" in run.stderr
        assert alive(killed) == []  # the other worker stopped too, and was waited for
        done = ids_once(run_dir)
        assert len(done) < n
        resumed = run_cli(None, "resume", "run")
        assert resumed.exit_code == 0, resumed.stderr
        assert ids_once(run_dir) == all_ids(n)


# --- the flag -----------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "x", "-1", "1.5"])
def test_a_bad_number_of_workers_is_a_usage_error(run_cli, judge_server, tmp_path, value):
    data = write_cases(tmp_path, 3)
    run = score(run_cli, judge_server, data, "run", "--workers", value)
    assert run.exit_code == 2, run.stderr
    assert f"--workers {value!r} is not a number of processes or auto" in run.stderr
    assert judge_server.requests == []
    assert not (tmp_path / "run").exists()


def test_workers_auto_takes_one_per_core(run_cli, judge_server, tmp_path):
    data = write_cases(tmp_path, 20)
    run = score(run_cli, judge_server, data, "run", "--workers", "auto")
    assert run.exit_code == 0, run.stderr
    assert ids_once(tmp_path / "run") == all_ids(20)
    info = json.loads((tmp_path / "run" / RUN_INFO).read_text())
    assert info["config"]["workers"] == len(os.sched_getaffinity(0))


def test_the_workers_share_of_the_limits_is_said_at_the_start(run_cli, judge_server, tmp_path):
    data = write_cases(tmp_path, 20)
    run = run_cli(
        judge_server,
        "score",
        str(data),
        "--rubric",
        "helpfulness",
        "--out",
        "run",
        "--workers",
        "2",
        "--concurrency",
        "8",
        "--rpm",
        "6000",
    )
    assert run.exit_code == 0, run.stderr
    said = " ".join(run.stderr.split())  # however the console wrapped it
    assert (
        "--workers 2: each process judges its share of the cases with --concurrency 4, "
        "--rpm 3000" in said
    )
    assert ids_once(tmp_path / "run") == all_ids(20)


def test_judge_workers_in_the_environment_is_recorded_for_resume(
    run_cli, judge_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("JUDGE_WORKERS", "2")
    data = write_cases(tmp_path, 20)
    run = score(run_cli, judge_server, data, "run")
    assert run.exit_code == 0, run.stderr
    info = json.loads((tmp_path / "run" / RUN_INFO).read_text())
    assert info["config"]["workers"] == 2
    assert info["argv"][info["argv"].index("--workers") + 1] == "2"
