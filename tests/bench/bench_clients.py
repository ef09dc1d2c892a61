"""`make bench`: the loops to beat (issue 36). `judge score` end to end against the two
fastest ways to send the same requests, at 500 and 2,000 cases, the machine's load first.

Not a test: numbers vary by machine, so nothing here asserts. It prints each figure as a
ratio to a reference measured in the same run, with the issue's target beside it.

- The openai loop: a bare `openai.AsyncOpenAI` loop on openai 3.x (httpx2), one shared
  client, in a venv of its own that the bench makes on first use (`.venv-bench-openai/`,
  `pip install openai==3.57.0` from the package index; when that fails, this reference is
  skipped and the reason printed). It sends judge's exact request bodies, written out
  beforehand by judge's own `build_messages` and `response_format`.
- The bare LiteLLM loops: `litellm.acompletion` over the same requests (bench_score.py's
  BARE_LOOP), as `openai/sim` (through the openai SDK) and as `hosted_vllm/sim` (LiteLLM's
  own HTTP handler: the route judge takes to an OpenAI-compatible server, judge/route.py).
- `judge score` with its default flags (workers as judge decides) but `--concurrency 64`
  and the simulator's API base, and with `--workers 1` beside it; each run's reply cache
  is fresh.

Every program is a fresh process timed end to end (imports included), at concurrency 64,
against the simulator at 100 ms latency in a process of its own (`sim_process.py`). The
programs alternate within a round (3 rounds; the median is printed), so a change of load
falls on all of them. The request bodies of all of them are compared (they must be equal).

Targets (issue 36): at 2,000 cases judge takes no more than 1/0.75 of the openai loop's
time (>= 0.75x its speed) and at most 1/1.2 of the bare LiteLLM loop's (>= 1.2x); judge's
CPU per call in the judging window (every process of it, parent and workers, from its first
request to its last) <= 1.2x the bare LiteLLM loop's (printed against both: the loop on
judge's own route is the like-for-like one); a cached re-run at 2,000 cases (the
same command again, every reply from the cache) <= 7% of the first run and <= 1.2 s.
"""

from __future__ import annotations

import bisect
import importlib.metadata
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench_score import BARE_LOOP, CONCURRENCY, LATENCY_S
from common import (
    ENV,
    children_of,
    cpu_of,
    machine_busy,
    machine_load,
    score_command,
    write_cases,
)
from sim_process import SimulatorProcess

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv-bench-openai"
OPENAI = "openai==3.57.0"  # the newest 3.x when measured (issue 36); pinned so reruns compare
SIZES = (500, 2000)
CACHED_AT = 2000
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
SAMPLE_S = 0.025
OPENAI_TARGET = 0.75
LITELLM_TARGET = 1.2
CPU_TARGET = 1.2
CACHED_SHARE, CACHED_S = 0.07, 1.2
DIRECT_LOOP = "litellm loop, direct"
"""The bare loop on judge's route to an OpenAI-compatible server (judge/route.py)."""

OPENAI_LOOP = r"""
import asyncio, json, sys
from openai import AsyncOpenAI

async def main(path, api_base, concurrency):
    with open(path) as f:
        bodies = [json.loads(line) for line in f]
    client = AsyncOpenAI(base_url=api_base, api_key="sk-bench", max_retries=0, timeout=120.0)
    sem = asyncio.Semaphore(concurrency)
    async def one(body):
        async with sem:
            reply = await client.chat.completions.create(**body)
            json.loads(reply.choices[0].message.content)
    await asyncio.gather(*(one(body) for body in bodies))

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""

VERSIONS = r"""
import importlib.metadata as m
from importlib.util import find_spec
names = ("openai", "httpx2", "httpx")
print(" ".join(f"{n} {m.version(n)}" for n in names if find_spec(n)))
"""


@dataclass(frozen=True)
class Run:
    """One program's run: its wall time, when its requests arrived, the CPU it used."""

    wall: float
    calls: int
    first_request: float | None
    """Seconds from the program's start."""
    cpu_ms_per_call: float | None
    """CPU of the program's processes from its first request to its last, over the calls
    between them."""
    processes: int
    others: float
    """Cores other processes of the machine kept busy meanwhile, on average (not this
    program, the simulator or the bench)."""


def openai_python() -> tuple[Path | None, str]:
    """The python of the openai venv, made on first use, and what it holds (or why not)."""
    python = VENV / "bin" / "python"
    probe = [str(python), "-c", VERSIONS]
    if python.exists():  # kept until deleted (`make clean`): then the newest openai again
        done = subprocess.run(probe, capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.startswith("openai "):
            return python, done.stdout.strip()
    print(f"making {VENV.name}/ ({OPENAI}, from the package index) ...", flush=True)
    made = subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)])
    if made.returncode != 0:
        return None, f"could not make {VENV.name}/ (python -m venv exited {made.returncode})"
    pip = [str(python), "-m", "pip", "install", "--quiet", OPENAI]
    installed = subprocess.run(pip, capture_output=True, text=True)
    if installed.returncode != 0:
        last = (installed.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"pip could not install {OPENAI!r} into {VENV.name}/: {last}"
    done = subprocess.run(probe, capture_output=True, text=True, check=True)
    return python, done.stdout.strip()


def write_bodies(cases: Path, out: Path) -> None:
    """judge's request body for each case, built by judge's own functions, one a line."""
    from judgecli.grading.prompt import build_messages, response_format
    from judgecli.inputs.dataset import iter_cases, scan_dataset
    from judgecli.inputs.rubric_file import load_rubric
    from judgecli.inputs.rubric_library import find_rubric

    rubric = load_rubric(find_rubric("helpfulness"))
    schema = response_format(rubric)
    with out.open("w") as f:
        scan = scan_dataset(cases, requires=rubric.requires)
        for case in iter_cases(scan, requires=rubric.requires):
            body = {
                "model": "sim",
                "messages": build_messages(rubric, case),
                "response_format": schema,
                "temperature": 0.0,
                "max_tokens": 600,
            }
            f.write(json.dumps(body) + "\n")


def descendants(pid: int) -> list[int]:
    found, left = [], children_of(pid)
    while left:
        child = left.pop()
        found.append(child)
        left.extend(children_of(child))
    return found


class CpuSampler(threading.Thread):
    """CPU seconds used so far by a process and every process it started (the last value
    seen of those that ended), sampled every SAMPLE_S on the monotonic clock."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.done = threading.Event()
        self.times: list[float] = []
        self.totals: list[float] = []
        self.seen: dict[int, float] = {}
        self.alive: list[set[int]] = []
        """The processes running at each sample, the program's own included."""

    def run(self) -> None:
        own = 0.0
        while not self.done.is_set():
            own = max(own, cpu_of(self.pid))
            children = descendants(self.pid)
            for child in children:
                self.seen[child] = max(self.seen.get(child, 0.0), cpu_of(child))
            self.alive.append({self.pid, *children})
            self.times.append(time.monotonic())
            total = own + sum(self.seen.values())
            self.totals.append(max(total, self.totals[-1]) if self.totals else total)
            self.done.wait(SAMPLE_S)

    def processes(self, start: float, end: float) -> int:
        """How many processes ran through most of the time from `start` to `end` (not a
        helper that lived a moment: the OpenAI SDK runs `uname -p` before its first request)."""
        within = [
            alive for t, alive in zip(self.times, self.alive, strict=True) if start <= t <= end
        ]
        pids = {pid for alive in within for pid in alive}
        return sum(sum(pid in alive for alive in within) > len(within) / 2 for pid in pids)

    def at(self, moment: float) -> float:
        """The CPU used by `moment`, interpolated between the samples around it."""
        i = bisect.bisect_left(self.times, moment)
        if i == 0 or i == len(self.times):
            return self.totals[min(i, len(self.totals) - 1)]
        t0, t1, c0, c1 = self.times[i - 1], self.times[i], self.totals[i - 1], self.totals[i]
        return c0 + (c1 - c0) * (moment - t0) / (t1 - t0)


def run(sim: SimulatorProcess, command: list[str], env: dict[str, str], tmp: Path) -> Run:
    """Run `command` to its end, sampling its CPU; what the simulator saw of it."""
    with (tmp / "stderr.txt").open("w+") as stderr:
        before = (machine_busy(), children_cpu(), cpu_of(sim.pid), time.process_time())
        start = time.monotonic()
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        sampler = CpuSampler(process.pid)
        sampler.start()
        code = process.wait()
        wall = time.monotonic() - start
        after = (machine_busy(), children_cpu(), cpu_of(sim.pid), time.process_time())
        sampler.done.set()
        sampler.join()
        if code != 0:
            stderr.seek(0)
            raise RuntimeError(f"{command[:4]} exited {code}: {stderr.read()[-800:]}")
    times, _ = sim.new_times()
    cpu, processes = None, 1
    if len(times) > 1:
        first, last = min(times), max(times)
        cpu = (sampler.at(last) - sampler.at(first)) / (len(times) - 1) * 1e3
        processes = max(processes, sampler.processes(first, last))
    machine, program, simulator, bench = (a - b for a, b in zip(after, before, strict=True))
    return Run(
        wall=wall,
        calls=len(times),
        first_request=min(times) - start if times else None,
        cpu_ms_per_call=cpu,
        processes=processes,
        others=max(0.0, machine - program - simulator - bench) / wall,
    )


def children_cpu() -> float:
    """CPU seconds of every process this one has waited for, and of those they waited for
    (the program, its workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def median(runs: list[Run], value: Callable[[Run], float | None]) -> float:
    return statistics.median(v for r in runs if (v := value(r)) is not None)


def bodies_match(sim: SimulatorProcess, since: dict[str, int], n: int) -> str:
    """Whether each program sent the same request bodies (in any order) as judge."""

    def shapes(name: str) -> set[str]:
        return {json.dumps(b, sort_keys=True) for b in sim.bodies(since[name], n)}

    judge = shapes("judge")
    others = [name for name in since if name != "judge"]
    return ", ".join(f"{name} {'yes' if shapes(name) == judge else 'NO'}" for name in others)


@dataclass(frozen=True)
class Program:
    """One program a round runs: its name in the table, its command, its reply cache."""

    name: str
    command: list[str]
    cache: Path | None


def commands(tmp: Path, n: int, round_: int, api: str, python: Path | None) -> list[Program]:
    """The programs of one round at `n` cases, in the order they run."""
    cases, bodies = tmp / f"cases{n}.jsonl", tmp / f"bodies{n}.jsonl"
    concurrency = str(CONCURRENCY)
    programs = []
    if python is not None:
        loop = [str(python), "-c", OPENAI_LOOP, str(bodies), api, concurrency]
        programs.append(Program("openai loop", loop, None))
    loop = [sys.executable, "-c", BARE_LOOP, str(cases), api, concurrency]
    programs.append(Program("litellm loop", loop, None))
    programs.append(Program(DIRECT_LOOP, [*loop, "hosted_vllm/sim"], None))
    cache = tmp / f"cache-{n}-{round_}"  # fresh for each round's first run

    def judge(out: str, *extra: str) -> list[str]:
        return score_command(cases, api, tmp / out, "--concurrency", concurrency, *extra)

    programs.append(Program("judge", judge(f"run-{n}-{round_}"), cache))
    one = judge(f"one-{n}-{round_}", "--workers", "1")
    programs.append(Program("judge --workers 1", one, tmp / f"cache1-{n}-{round_}"))
    if n == CACHED_AT:
        programs.append(Program("cached re-run", judge(f"rerun-{n}-{round_}"), cache))
    return programs


def bench(tmp: Path) -> None:
    python, openai = openai_python()
    if python is None:
        print(f"the openai loop is skipped: {openai}")
    for n in SIZES:
        write_cases(tmp / f"cases{n}.jsonl", n)
        write_bodies(tmp / f"cases{n}.jsonl", tmp / f"bodies{n}.jsonl")
    runs: dict[tuple[int, str], list[Run]] = {}
    checked = ""
    with SimulatorProcess(LATENCY_S * 1000) as sim:
        for round_ in range(ROUNDS):
            for n in SIZES:
                firsts: dict[str, int] = {}
                for program in commands(tmp, n, round_, sim.api, python):
                    env = dict(ENV)
                    if program.cache is not None:
                        env["JUDGE_CACHE_DIR"] = str(program.cache)
                    firsts[program.name] = sim.seen
                    runs.setdefault((n, program.name), []).append(
                        run(sim, program.command, env, tmp)
                    )
                if not checked:
                    firsts.pop("cached re-run", None)
                    checked = bodies_match(sim, firsts, n)
                print(f"  round {round_ + 1} of {ROUNDS}, {n} cases: done", flush=True)
    named = ("openai loop", "litellm loop", DIRECT_LOOP)
    loops = [name for name in named if (SIZES[0], name) in runs]
    report(runs, loops, openai, importlib.metadata.version("litellm"), checked)


def report(
    runs: dict[tuple[int, str], list[Run]],
    loops: list[str],
    openai: str,
    litellm: str,
    checked: str,
) -> None:
    print(
        f"openai loop: {openai} in {VENV.name}/; litellm loop: litellm {litellm}; simulator "
        f"latency {LATENCY_S * 1000:.0f} ms in its own process, concurrency {CONCURRENCY}, "
        f"median of {ROUNDS} interleaved rounds; same request bodies as judge: {checked}"
    )
    print(
        f"{'cases':>6} {'program':<20} {'wall':>7} {'1st request':>11} {'CPU/call':>9} "
        "processes  others' load"
    )
    for n in SIZES:
        for name in [*loops, "judge", "judge --workers 1"]:
            got = runs[(n, name)]
            cpu = median(got, lambda r: r.cpu_ms_per_call)
            print(
                f"{n:>6} {name:<20} {median(got, lambda r: r.wall):6.2f}s "
                f"{median(got, lambda r: r.first_request):10.2f}s {cpu:7.2f}ms "
                f"{median(got, lambda r: r.processes):9.0f} "
                f"{median(got, lambda r: r.others):8.2f} cores"
            )

    others = median([r for got in runs.values() for r in got], lambda r: r.others)
    print(
        f"other processes kept {others:.2f} of the {os.cpu_count()} cores busy during the runs "
        "(median): the figures are a quiet machine's only when that is near 0"
    )

    def wall(n: int, name: str) -> float:
        return median(runs[(n, name)], lambda r: r.wall)

    def mark(ok: bool) -> str:
        return "met" if ok else "NOT MET"

    targets = (
        ("openai loop", OPENAI_TARGET),
        ("litellm loop", LITELLM_TARGET),
        (DIRECT_LOOP, LITELLM_TARGET),
    )
    for loop, target in targets:
        if loop not in loops:
            continue
        ratios = {n: wall(n, loop) / wall(n, "judge") for n in SIZES}
        ones = {n: wall(n, loop) / wall(n, "judge --workers 1") for n in SIZES}
        print(
            f"judge vs the {loop}, end to end (its time / judge's): "
            + ", ".join(f"{n}: {ratios[n]:.2f}x" for n in SIZES)
            + f"   (target >= {target}x at 2,000: {mark(ratios[2000] >= target)}); "
            + "--workers 1: "
            + ", ".join(f"{n}: {ones[n]:.2f}x" for n in SIZES)
        )
    for loop in ("litellm loop", DIRECT_LOOP):
        bare = median(runs[(2000, loop)], lambda r: r.cpu_ms_per_call)
        for name in ("judge", "judge --workers 1"):
            cpu = median(runs[(2000, name)], lambda r: r.cpu_ms_per_call)
            print(
                f"CPU per call in the judging window at 2,000, {name}: {cpu:.2f} ms vs the "
                f"{loop}'s {bare:.2f} ms: {cpu / bare:.2f}x   (target <= {CPU_TARGET}x: "
                f"{mark(cpu / bare <= CPU_TARGET)})"
            )
    cached = runs[(CACHED_AT, "cached re-run")]
    re_wall, first = median(cached, lambda r: r.wall), wall(CACHED_AT, "judge")
    calls = sum(r.calls for r in cached)
    ok = re_wall / first <= CACHED_SHARE and re_wall <= CACHED_S
    print(
        f"cached re-run at {CACHED_AT:,}: {re_wall:.2f} s = {re_wall / first:.1%} of the first "
        f"run's {first:.2f} s, {calls} calls   (target: 0 calls, <= {CACHED_SHARE:.0%} and <= "
        f"{CACHED_S} s: {mark(ok and calls == 0)})"
    )


def main() -> None:
    print(f"{machine_load()} at the start")
    with tempfile.TemporaryDirectory() as d:
        bench(Path(d))
    print(f"{machine_load()} at the end")


if __name__ == "__main__":
    main()
