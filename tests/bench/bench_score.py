"""`make bench`: judge's overhead against a bare LiteLLM loop, start-up time, and rpm pacing.

Not a test: numbers vary by machine, so nothing here asserts. It prints what it measured
and the targets from the issue beside them.

1. Throughput: 2,000 cases against the simulator (100 ms latency, separate process) at
   concurrency 64, `judge score` vs a bare `litellm.acompletion` loop sending the same
   prompts; both run as fresh processes and are timed end to end (imports included).
   Target: judge >= 90% of the bare loop.
2. `judge --help` wall time, best of 5. Target: < 0.3 s.
3. Pacing: the simulator limits 600 rpm and its window is already full; `judge score
   --rpm 600` on 700 cases. Target: a handful of 429s at most, >= 97% of the limit.
4. Cache: the throughput run again, unchanged: every reply comes from the reply cache.
   Target: zero calls, under 5% of the first run's time.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # this process imports litellm too
os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
REPO = Path(__file__).resolve().parents[2]
JUDGE = [sys.executable, "-m", "judgecli"]
ENV = {**os.environ, "OPENAI_API_KEY": "sk-bench", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}

BARE_LOOP = r"""
import asyncio, json, os, sys, time
os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
from judgecli.dataset import iter_cases, scan_dataset
from judgecli.prompt import build_messages, response_format
from judgecli.rubric import load_rubric
from judgecli.rubric_library import find_rubric
import litellm
litellm.suppress_debug_info = True

async def main(path, api_base, concurrency):
    rubric = load_rubric(find_rubric("helpfulness"))
    scan = scan_dataset(path, requires=rubric.requires)
    sem = asyncio.Semaphore(concurrency)
    rf = response_format(rubric)
    async def one(case):
        async with sem:
            r = await litellm.acompletion(model="openai/sim", api_base=api_base,
                messages=build_messages(rubric, case), response_format=rf, temperature=0,
                max_tokens=600, max_retries=0, timeout=60)
            json.loads(r.choices[0].message.content)
    await asyncio.gather(*(one(c) for c in iter_cases(scan, requires=rubric.requires)))

asyncio.run(main(__import__("pathlib").Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_cases(path: Path, n: int) -> None:
    with path.open("w") as f:
        for i in range(n):
            f.write(
                json.dumps(
                    {
                        "id": f"c{i}",
                        "input": f"Question {i}: how do I sort a list?",
                        "output": f"Answer {i}: use sorted(xs) or xs.sort().",
                    }
                )
                + "\n"
            )


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=ENV, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def bench_throughput(tmp: Path, n: int = 2000, concurrency: int = 64) -> None:
    cases = tmp / "cases.jsonl"
    write_cases(cases, n)
    port = free_port()
    sim = subprocess.Popen(
        [*JUDGE, "simulate", "--port", str(port), "--latency-ms", "100"],
        env=ENV,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(2.5)
        api = f"http://127.0.0.1:{port}/v1"
        bare = timed([sys.executable, "-c", BARE_LOOP, str(cases), api, str(concurrency)])
        command = [
            *JUDGE,
            "score",
            str(cases),
            "--rubric",
            "helpfulness",
            "--model",
            "openai/sim",
            "--api-base",
            api,
            "--concurrency",
            str(concurrency),
            "--quiet",
        ]
        judge = timed([*command, "--out", str(tmp / "run")])
        cached = timed([*command, "--out", str(tmp / "rerun")])
        rerun = json.loads((tmp / "rerun" / "summary.json").read_text())["usage"]
    finally:
        sim.terminate()
        sim.wait()
    print(f"throughput, {n} cases, 100 ms latency, concurrency {concurrency} (imports included)")
    print(f"  bare litellm loop: {bare:6.2f} s  {n / bare:6.1f} calls/s")
    print(f"  judge score:       {judge:6.2f} s  {n / judge:6.1f} cases/s")
    print(f"  ratio judge/bare:  {bare / judge:6.1%}   (target >= 90%)")
    print(
        f"cache: the same run again: {cached:.2f} s = {cached / judge:.1%} of the first, "
        f"{rerun['calls']} calls, {rerun['cached']} cached   (target: 0 calls, < 5%)"
    )


def bench_help() -> None:
    best = min(timed([*JUDGE, "--help"]) for _ in range(5))
    print(f"judge --help: {best:.3f} s best of 5   (target < 0.3 s)")


def busiest_minute(times: list[float]) -> int:
    """Most events in any 60-second window."""
    best, start = 0, 0
    for end, t in enumerate(times):
        while t - times[start] >= 60.0:
            start += 1
        best = max(best, end - start + 1)
    return best


def bench_rpm(tmp: Path, n: int = 700, rpm: int = 600) -> None:
    import asyncio

    import litellm

    from judgecli.simulator.server import SimulatorConfig, SimulatorServer

    cases = tmp / "rpm.jsonl"
    write_cases(cases, n)
    with SimulatorServer(SimulatorConfig(rpm=rpm)) as sim:
        api = f"{sim.url}/v1"

        async def fill() -> None:  # fill the server's 60 s window to the limit
            await asyncio.gather(
                *(
                    litellm.acompletion(
                        model="openai/sim",
                        api_base=api,
                        api_key="x",
                        max_retries=0,
                        messages=[{"role": "user", "content": "hi"}],
                    )
                    for _ in range(rpm)
                )
            )

        asyncio.run(fill())
        before = len(sim.requests)
        subprocess.run(
            [
                *JUDGE,
                "score",
                str(cases),
                "--rubric",
                "helpfulness",
                "--model",
                "openai/sim",
                "--api-base",
                api,
                "--rpm",
                str(rpm),
                "--concurrency",
                "64",
                "--quiet",
                "--max-retries",
                "8",
                "--no-cache",
                "--out",
                str(tmp / "rpm-run"),
            ],
            check=True,
            env=ENV,
        )
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
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        # A fresh cache, removed with the rest: the first run pays, the re-run does not.
        ENV["JUDGE_CACHE_DIR"] = str(tmp / "cache")
        bench_help()
        bench_throughput(tmp)
        bench_rpm(tmp)


if __name__ == "__main__":
    main()
