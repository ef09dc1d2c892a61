"""`python tests/bench/bench_workers.py`: calls per second of `judge score --workers N`.

Not a test: numbers vary by machine, so nothing here asserts. It prints what it measured
and the issue's target beside it: `--workers 2` makes at least 1.6x the calls per second
of one worker, against a server fast enough not to be the limit.

The simulator runs as its own process (`judge simulate --port P`, latency 0: its fastest,
started afresh for each run), so it has a core of its own where the machine has one to
give. Each `judge score` run is a fresh process (`--no-cache --quiet --concurrency 64`) over
3,000 cases, 5 runs for each N; its calls per second are counted from its first result line
in results.jsonl to its last, so the ~5 s of imports before the first call (the same for
any N) do not hide the judging rate. The wall time, imports included, is printed too. Runs
of 1 and 2 workers alternate, so a change in the machine's load falls on both; the median
of the runs is reported.

Also measured over the same window, to explain the figures: the CPU each call costs the
judge's parent process, its workers and the simulator (from /proc/PID/stat), the CPU other
processes of the machine took meanwhile (/proc/stat), the simulator's own ceiling (a bare
aiohttp client in another process, 64 requests in flight), and so what the cores left to
this benchmark allow.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from common import children_of, cpu_of, machine_busy, score_command

REPO = Path(__file__).resolve().parents[2]
JUDGE = [sys.executable, "-m", "judgecli"]
N_CASES = 3000
CONCURRENCY = 64
REPEATS = 5
WORKERS = (1, 2)
TARGET = 1.6
CEILING_REQUESTS = 6000
WAIT_S = 600.0

LOAD = r"""
import asyncio, json, sys, time
from pathlib import Path
import aiohttp
from judgecli.inputs.dataset import iter_cases, scan_dataset
from judgecli.grading.prompt import build_messages, response_format
from judgecli.inputs.rubric_file import load_rubric
from judgecli.inputs.rubric_library import find_rubric

path, url, total, concurrency = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rubric = load_rubric(find_rubric("helpfulness"))
cases = list(iter_cases(scan_dataset(path, requires=rubric.requires), requires=rubric.requires))
bodies = [
    json.dumps({"model": "sim", "messages": build_messages(rubric, case), "temperature": 0,
                "max_tokens": 600, "response_format": response_format(rubric)}).encode()
    for case in cases
]

async def main():
    left = iter(range(total))
    async with aiohttp.ClientSession(headers={"content-type": "application/json"}) as session:
        async def loop():
            for i in left:
                async with session.post(url, data=bodies[i % len(bodies)]) as reply:
                    assert reply.status == 200, reply.status
                    await reply.read()
        start = time.perf_counter()
        await asyncio.gather(*(loop() for _ in range(concurrency)))
        return time.perf_counter() - start

print(total / asyncio.run(main()))
"""


@dataclass(frozen=True)
class Sample:
    """CPU seconds used so far, at one moment of a run."""

    at: float
    parent: float
    workers: dict[int, float]
    simulator: float
    machine: float
    """Busy CPU seconds of the whole machine, every process (/proc/stat)."""


@dataclass(frozen=True)
class Run:
    """One `judge score` process, between its first result line and its last."""

    workers: int
    calls: int
    window_s: float
    wall_s: float
    parent_cpu_s: float
    workers_cpu_s: float
    simulator_cpu_s: float
    others_cpu_s: float

    @property
    def calls_per_s(self) -> float:
        return self.calls / self.window_s

    @property
    def judge_ms_per_call(self) -> float:
        return (self.parent_cpu_s + self.workers_cpu_s) / self.calls * 1e3

    @property
    def others_cores(self) -> float:
        """How many cores other processes of the machine kept busy meanwhile, on average."""
        return self.others_cpu_s / self.window_s


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_cases(path: Path) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(N_CASES):
            row = {
                "id": f"b{i:05d}",
                "input": f"Question {i}: how do tides work?",
                "output": "The moon's gravity pulls the oceans into two bulges. " * (1 + i % 3),
            }
            handle.write(json.dumps(row) + "\n")
    return path


def sample(judge: int, simulator: int, workers: dict[int, float]) -> Sample:
    """The CPU used so far; `workers` holds the last CPU seen of each worker, also of those
    that have ended since (a worker ends before the parent has written its last results).
    """
    for child in children_of(judge):
        workers[child] = max(workers.get(child, 0.0), cpu_of(child))
    return Sample(
        at=time.perf_counter(),
        parent=cpu_of(judge),
        workers=dict(workers),
        simulator=cpu_of(simulator),
        machine=machine_busy(),
    )


@contextmanager
def simulating(env: dict[str, str]) -> Iterator[tuple[int, str]]:
    """`judge simulate` (latency 0) in its own process: its pid and API base."""
    port = free_port()
    simulator = subprocess.Popen(
        [*JUDGE, "simulate", "--port", str(port), "--latency-ms", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=1):
                    break
            except OSError:
                if simulator.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the simulator did not start") from None
                time.sleep(0.1)
        yield simulator.pid, f"{base}/v1"
    finally:
        simulator.terminate()
        simulator.wait(timeout=30)


def simulator_ceiling(
    cases: Path, api: str, simulator: int, env: dict[str, str]
) -> tuple[float, float]:
    """Requests per second the simulator answers a bare client, and its CPU per request."""
    before = cpu_of(simulator)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            LOAD,
            str(cases),
            f"{api}/chat/completions",
            str(CEILING_REQUESTS),
            str(CONCURRENCY),
        ],
        env=env,
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    )
    return float(done.stdout), (cpu_of(simulator) - before) / CEILING_REQUESTS


def judge_score(
    cases: Path, api: str, out: Path, workers: int, simulator: int, env: dict[str, str]
) -> Run:
    """Run `judge score --workers N`, sampling the CPU at its first and its last result."""
    results = out / "results.jsonl"
    started = time.perf_counter()
    process = subprocess.Popen(
        score_command(
            cases,
            api,
            out,
            "--no-cache",
            "--concurrency",
            str(CONCURRENCY),
            "--workers",
            str(workers),
        ),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    first = last = None
    lines = at_first = offset = 0
    seen: dict[int, float] = {}
    deadline = time.monotonic() + WAIT_S
    while lines < N_CASES:
        ended = process.poll() is not None
        new, offset = count_new_lines(results, offset)
        now = sample(process.pid, simulator, seen)
        if new:
            lines += new
            if first is None:
                first, at_first = now, lines
            elif lines >= N_CASES:
                last = now
        if lines < N_CASES and (ended or time.monotonic() > deadline):
            process.kill()
            raise RuntimeError(f"judge score ended with {lines} of {N_CASES} results")
        time.sleep(0.02)
    _, stderr = process.communicate(timeout=WAIT_S)
    wall = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"judge score exited {process.returncode}: {stderr.decode()[-500:]}")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["usage"]["calls"] == N_CASES, summary["usage"]
    assert first is not None
    assert last is not None, "every result came at once: nothing to measure"
    workers_cpu = sum(cpu - first.workers.get(pid, 0.0) for pid, cpu in last.workers.items())
    ours = (last.parent - first.parent) + workers_cpu + (last.simulator - first.simulator)
    return Run(
        workers=workers,
        calls=N_CASES - at_first,
        window_s=last.at - first.at,
        wall_s=wall,
        parent_cpu_s=last.parent - first.parent,
        workers_cpu_s=workers_cpu,
        simulator_cpu_s=last.simulator - first.simulator,
        others_cpu_s=max(0.0, (last.machine - first.machine) - ours),
    )


def count_new_lines(path: Path, offset: int) -> tuple[int, int]:
    """Whole lines appended to `path` since `offset`, and the offset after the last one."""
    if not path.exists():
        return 0, offset
    with path.open("rb") as handle:
        handle.seek(offset)
        chunk = handle.read()
    return chunk.count(b"\n"), offset + chunk.rfind(b"\n") + 1


def cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def median(runs: list[Run], value: Callable[[Run], float]) -> float:
    return statistics.median(value(run) for run in runs)


def verdict(runs: dict[int, list[Run]], ceiling: float) -> list[str]:
    """Whether --workers 2 met the target here, and if not, what this machine allowed."""
    one = median(runs[1], lambda r: r.calls_per_s)
    two = median(runs[2], lambda r: r.calls_per_s)
    ratio = two / one
    # CPU per call with two workers: the judge (parent and workers) and the simulator.
    per_call = median(runs[2], lambda r: r.judge_ms_per_call + r.simulator_cpu_s / r.calls * 1e3)
    judge_one = median(runs[1], lambda r: r.judge_ms_per_call)
    judge_two = median(runs[2], lambda r: r.judge_ms_per_call)
    others = median([*runs[1], *runs[2]], lambda r: r.others_cores)
    free = max(cores() - others, 0.1)
    bound = free / per_call * 1e3  # every core left to us busy, judge and simulator
    lines = [
        f"median calls/s: --workers 1 {one:.0f}, --workers 2 {two:.0f}; ratio {ratio:.2f}x   "
        f"(target >= {TARGET}x)",
        f"with --workers 2 each call costs {per_call:.2f} ms of CPU (judge and simulator); "
        f"other processes kept {others:.2f} of the {cores()} cores busy, so the "
        f"{free:.2f} left allow at most ~{bound:.0f} calls/s = {bound / one:.2f}x one worker",
        f"the judge's CPU per call: {judge_one:.2f} ms in one process, {judge_two:.2f} ms "
        "in two workers and their parent",
    ]
    if ratio >= TARGET:
        return [*lines, f"TARGET MET: --workers 2 gives {ratio:.2f}x one worker's calls/s"]
    reasons = []
    if bound < TARGET * one:
        reasons.append(
            f"the CPU is the limit: {cores()} cores, {others:.2f} of them taken by other "
            f"processes, and {per_call:.2f} ms per call for the judge and the simulator "
            f"together leave room for {bound / one:.2f}x one worker at best"
        )
    if ceiling < TARGET * one:
        reasons.append(
            f"the simulator is the limit: it answers at most ~{ceiling:.0f} requests/s "
            f"({ceiling / one:.2f}x one worker's rate)"
        )
    if judge_two > 1.1 * judge_one:
        reasons.append(
            f"each call costs the judge more CPU with two processes busy at once "
            f"({judge_two:.2f} ms against {judge_one:.2f} ms): the cores share caches, or "
            "are hyperthreads of one core"
        )
    if others > 0.25:
        reasons.append(
            f"the machine was not ours: other processes used {others:.2f} cores on average "
            "while the runs judged, and their load changes from one run to the next"
        )
    if not reasons:
        reasons.append(
            "neither the cores, the simulator nor other processes account for it: the "
            "workers do not scale (compare the parent's CPU per call with the workers')"
        )
    return [*lines, "TARGET NOT MET: " + "; ".join(reasons)]


def main() -> None:
    env = {
        **os.environ,
        "OPENAI_API_KEY": "sk-bench",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_MODE": "PRODUCTION",
    }
    print(
        f"judge score --workers N: {N_CASES} cases, --no-cache --concurrency {CONCURRENCY}, "
        f"the simulator (latency 0) in its own process; {cores()} cores, load average "
        f"{os.getloadavg()[0]:.2f} at the start"
    )
    with tempfile.TemporaryDirectory() as directory:
        tmp = Path(directory)
        env["JUDGE_CACHE_DIR"] = str(tmp / "cache")
        cases = write_cases(tmp / "cases.jsonl")
        # A fresh simulator for each measurement: it keeps every request it answers, so its
        # memory grows run after run; none should pay for the runs before it.
        with simulating(env) as (simulator, api):
            ceiling, simulator_cpu = simulator_ceiling(cases, api, simulator, env)
        print(
            f"simulator ceiling: {ceiling:.0f} requests/s to a bare aiohttp client in another "
            f"process ({CONCURRENCY} in flight, sharing the cores); {simulator_cpu * 1e3:.2f} "
            f"ms of its CPU per request: ~{1 / simulator_cpu:.0f}/s on a core of its own"
        )
        runs: dict[int, list[Run]] = {n: [] for n in WORKERS}
        for repeat in range(REPEATS):
            for workers in WORKERS:
                out = tmp / f"run-{workers}-{repeat}"
                with simulating(env) as (simulator, api):
                    run = judge_score(cases, api, out, workers, simulator, env)
                runs[workers].append(run)
                print(
                    f"  --workers {workers} #{repeat + 1}: {run.calls_per_s:4.0f} calls/s "
                    f"({run.wall_s:4.1f} s wall with imports); CPU per call: parent "
                    f"{run.parent_cpu_s / run.calls * 1e3:.2f} ms, workers "
                    f"{run.workers_cpu_s / run.calls * 1e3:.2f} ms, simulator "
                    f"{run.simulator_cpu_s / run.calls * 1e3:.2f} ms; other processes "
                    f"{run.others_cores:.2f} cores"
                )
    for line in verdict(runs, ceiling):
        print(line)


if __name__ == "__main__":
    main()
