"""`make bench`: issue 19's speed goals, each printed as a ratio to a reference measured in
the same run, on the same machine, under the same load (printed first).

Not a test: numbers vary by machine, so nothing here asserts. Every program is a fresh
process timed end to end (imports included); the simulator runs in this process (its own
thread, 100 ms latency), so the time each request arrived is known on the same clock.

References: a bare `import litellm` (when it would have finished), and a bare
`litellm.acompletion` loop sending judge's exact requests (same messages, schema,
temperature and token limit; checked below) at the same concurrency.

1. Start judging at once: judge's first request vs the end of a bare `import litellm`.
   Target: no more than 0.5 s later.
2. Wrap up in proportion: from the last reply to judge's exit (summary, reports, the gate,
   interpreter exit) at 2,000 cases. Target: <= 0.5 s.
3. Cheaper per call: calls per second while judging, judge vs the bare loop. Target: >= 1.0x.
4. Cached re-run: the same command again, every reply from the reply cache. Target: 0
   calls, <= 7% of the first run's wall time and <= 1.2 s (issue 36: the re-run is bound by
   imports and the replay of 2,000 cases; 5% would need a cache of whole results).
5. `judge --help`, best of 5. Target: <= 0.3 s.
Then pacing: a key already at its limit (600 rpm, the window full at the start), `judge
score --rpm 600` on 700 cases. Target: a handful of 429s at most, >= 97% of the limit.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from common import ENV, JUDGE, score_command, write_cases

from judgecli.simulator.server import SimulatorConfig, SimulatorServer

CASES = 2000
LATENCY_S = 0.1
CONCURRENCY = 64
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))

BARE_IMPORT = "import time, litellm; print(time.monotonic())"

# judge's requests, sent by a bare loop: the messages and schema are built by judge's own
# functions, the other parameters are those judge sends (compared in `same_requests`).
BARE_LOOP = r"""
import asyncio, json, os, sys
os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
from judgecli.inputs.dataset import iter_cases, scan_dataset
from judgecli.grading.prompt import build_messages, response_format
from judgecli.inputs.rubric_file import load_rubric
from judgecli.inputs.rubric_library import find_rubric
from judgecli.judge.provider import file_at_price_zero
import litellm, logging
litellm.suppress_debug_info = True
logging.getLogger("LiteLLM").setLevel(logging.CRITICAL)

async def main(path, api_base, concurrency):
    rubric = load_rubric(find_rubric("helpfulness"))
    scan = scan_dataset(path, requires=rubric.requires)
    sem = asyncio.Semaphore(concurrency)
    rf = response_format(rubric)
    async def one(case):
        async with sem:
            r = await litellm.acompletion(model=MODEL, api_base=api_base, api_key="sk-bench",
                messages=build_messages(rubric, case), response_format=rf, temperature=0.0,
                max_tokens=600, timeout=120.0, max_retries=0)
            json.loads(r.choices[0].message.content)
    await asyncio.gather(*(one(c) for c in iter_cases(scan, requires=rubric.requires)))

MODEL = sys.argv[4] if len(sys.argv) > 4 else "openai/sim"
# Priced at 0 as judge files a local model, so that neither pays LiteLLM's search of its
# price map on each reply.
file_at_price_zero(litellm, MODEL, sys.argv[2])
asyncio.run(main(__import__("pathlib").Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])))
"""


@dataclass(frozen=True)
class Timeline:
    """One program's run against the simulator, in seconds from its start."""

    wall: float
    first_request: float | None
    last_request: float | None
    calls: int
    bodies: list[dict[str, object]]

    @property
    def judging_rate(self) -> float:
        """Calls per second from the first request to the last reply."""
        assert self.first_request is not None
        assert self.last_request is not None
        return self.calls / (self.last_request + LATENCY_S - self.first_request)

    @property
    def wrap_up(self) -> float:
        """From the last reply to the program's exit."""
        assert self.last_request is not None
        return self.wall - (self.last_request + LATENCY_S)


def run_timed(sim: SimulatorServer, command: list[str]) -> Timeline:
    """Run `command` to its end; what the simulator saw of it, on the monotonic clock."""
    before = len(sim.requests)
    start = time.monotonic()
    subprocess.run(command, check=True, env=ENV, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - start
    seen = sim.requests[before:]
    times = [r.time - start for r in seen]
    return Timeline(
        wall=wall,
        first_request=min(times) if times else None,
        last_request=max(times) if times else None,
        calls=len(seen),
        bodies=[r.body for r in seen],
    )


def bare_import_s() -> float:
    """When a bare `import litellm` finishes, from its process's start."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", BARE_IMPORT], env=ENV, check=True, capture_output=True, text=True
    )
    return float(done.stdout.strip()) - start


def median(values: list[float]) -> float:
    return statistics.median(values)


def same_requests(judge: Timeline, bare: Timeline) -> str:
    """Whether both programs sent the same request bodies (in any order)."""

    def shapes(run: Timeline) -> set[str]:
        return {json.dumps(body, sort_keys=True) for body in run.bodies}

    return "yes" if shapes(judge) == shapes(bare) else "no"


def judge_score(cases: Path, api: str, out: Path) -> list[str]:
    """The measured command: a default run (reply cache on), with a gate to evaluate."""
    return score_command(cases, api, out, "--concurrency", str(CONCURRENCY), "--min-pass-rate", "0")


def bench_speed(tmp: Path) -> None:
    cases = tmp / "cases.jsonl"
    write_cases(cases, CASES)
    imports, bares, firsts, cacheds = [], [], [], []
    with SimulatorServer(SimulatorConfig(latency_ms=LATENCY_S * 1000)) as sim:
        api = f"{sim.url}/v1"
        for round_ in range(ROUNDS):
            ENV["JUDGE_CACHE_DIR"] = str(tmp / f"cache{round_}")  # each round pays anew
            imports.append(bare_import_s())
            loop = [sys.executable, "-c", BARE_LOOP, str(cases), api, str(CONCURRENCY)]
            bares.append(run_timed(sim, loop))
            firsts.append(run_timed(sim, judge_score(cases, api, tmp / f"run{round_}")))
            cacheds.append(run_timed(sim, judge_score(cases, api, tmp / f"rerun{round_}")))

    def med(runs: list[Timeline], value: Callable[[Timeline], float | None]) -> float:
        return median([v for r in runs if (v := value(r)) is not None])

    bare_import = median(imports)
    first_request = med(firsts, lambda t: t.first_request)
    bare_first = med(bares, lambda t: t.first_request)
    judge_rate = med(firsts, lambda t: t.judging_rate)
    bare_rate = med(bares, lambda t: t.judging_rate)
    wrap = med(firsts, lambda t: t.wrap_up)
    first_wall = med(firsts, lambda t: t.wall)
    cached_wall = med(cacheds, lambda t: t.wall)
    print(
        f"{CASES} cases, simulator latency {LATENCY_S * 1000:.0f} ms, concurrency "
        f"{CONCURRENCY}, median of {ROUNDS}; same requests as the bare loop: "
        f"{same_requests(firsts[0], bares[0])}"
    )
    print(
        f"1. first request {first_request:.2f} s after start; a bare `import litellm` ends at "
        f"{bare_import:.2f} s: {first_request - bare_import:+.2f} s   (target <= +0.5 s; "
        f"the bare loop's first request: {bare_first:.2f} s)"
    )
    print(f"2. wrap-up after the last reply: {wrap:.2f} s   (target <= 0.5 s)")
    print(
        f"3. judging: {judge_rate:.0f} calls/s vs the bare loop's {bare_rate:.0f}: "
        f"{judge_rate / bare_rate:.2f}x   (target >= 1.0x)"
    )
    calls = sum(t.calls for t in cacheds)
    print(
        f"4. cached re-run: {cached_wall:.2f} s = {cached_wall / first_wall:.1%} of the first "
        f"run's {first_wall:.2f} s, {calls} calls   (target: 0 calls, <= 7% and <= 1.2 s)"
    )
    bare_wall = med(bares, lambda t: t.wall)
    print(
        f"   end to end: judge {first_wall:.2f} s ({CASES / first_wall:.0f} cases/s), "
        f"the bare loop {bare_wall:.2f} s"
    )


def bench_help() -> None:
    def once() -> float:
        start = time.perf_counter()
        subprocess.run([*JUDGE, "--help"], check=True, env=ENV, stdout=subprocess.DEVNULL)
        return time.perf_counter() - start

    best = min(once() for _ in range(5))
    print(f"5. judge --help: {best:.3f} s best of 5   (target <= 0.3 s)")


def busiest_minute(times: list[float]) -> int:
    """Most events in any 60-second window."""
    best, start = 0, 0
    for end, t in enumerate(times):
        while t - times[start] >= 60.0:
            start += 1
        best = max(best, end - start + 1)
    return best


def bench_rpm(tmp: Path, n: int = 700, rpm: int = 600) -> None:
    cases = tmp / "rpm.jsonl"
    write_cases(cases, n)
    config = SimulatorConfig(rpm=rpm, rate_limit_prefill=True)
    with SimulatorServer(config) as sim:
        api = f"{sim.url}/v1"
        before = len(sim.requests)
        command = score_command(
            cases,
            api,
            tmp / "rpm-run",
            "--rpm",
            str(rpm),
            "--concurrency",
            "64",
            "--max-retries",
            "8",
            "--no-cache",
        )
        subprocess.run(command, check=True, env=ENV, stdout=subprocess.DEVNULL)
        seen = sim.requests[before:]
    ok = sorted(r.time for r in seen if r.status == 200)
    limited = sum(r.status == 429 for r in seen)
    rate = (len(ok) - 1) / (ok[-1] - ok[0]) * 60
    peak = busiest_minute(ok)
    print(f"pacing: server limit {rpm} rpm, window full at start, judge --rpm {rpm}, {n} cases")
    print(
        f"  429s: {limited}   mean rate {rate:.0f} rpm = {rate / rpm:.1%} of the limit; "
        f"busiest minute {peak} requests   (target: a handful of 429s, >= 97%)"
    )


def main() -> None:
    load = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} "
        f"{load[2]:.2f} (1, 5, 15 min) at the start"
    )
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        bench_help()
        bench_speed(tmp)
        bench_rpm(tmp)


if __name__ == "__main__":
    main()
