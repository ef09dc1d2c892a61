"""`make bench`: the endpoint a user has (issue 13 §2), measured end to end as users run it.

Not a test: numbers vary by machine, so nothing here asserts. Each `judge` run is a fresh
process against the simulator (in this process, real 60 s windows), and the figures the
issue reported before the fix are printed beside today's.

1. A key already at its limit, without --rpm: the server admits 300 requests a minute and
   its window is full at the start; 300 cases at the default concurrency, with the
   provider's x-ratelimit-* headers and with Retry-After alone.
   Before: 1,081 calls, 920 of them 429, 139 cases failed, exit 0.
   Target: 0 failed cases, >= 90% of the limit, few 429s after the first seconds.
2. The same with --rpm 300. Before: 10-17 429s in the first 0.15 s. Target: <= 2.
3. Time from start to exit 3 against a refused port, and to exit 2 with a missing key.
   Before: exit 0 after 5 retries per case. Target: seconds, not minutes.
4. Latency p50/p95 of 24 cases against a 0-latency server. Before: ~2.15 s for the first
   16 calls (client warm-up counted as latency).
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from common import ENV, JUDGE, write_cases

from judgecli.simulator.server import SimulatorConfig, SimulatorServer

REPO = Path(__file__).resolve().parents[2]
LIMIT = 300


def env(tmp: Path, **extra: str) -> dict[str, str]:
    values = {**ENV, "JUDGE_CACHE_DIR": str(tmp / "cache")}
    values.pop("ANTHROPIC_API_KEY", None)
    return values | extra


def judge(tmp: Path, *args: str, environ: dict[str, str] | None = None) -> tuple[int, float, str]:
    """Exit code, wall seconds and stderr of one `judge` process."""
    started = time.perf_counter()
    done = subprocess.run(
        [*JUDGE, *args], env=environ or env(tmp), cwd=tmp, text=True, capture_output=True
    )
    return done.returncode, time.perf_counter() - started, done.stderr


def key_at_its_limit(tmp: Path, name: str, *, headers: bool, extra: tuple[str, ...] = ()) -> None:
    cases = tmp / "cases.jsonl"
    write_cases(cases, LIMIT)
    config = SimulatorConfig(rpm=LIMIT, rate_limit_prefill=True, rate_limit_headers=headers)
    with SimulatorServer(config) as server:
        server.reset()
        code, wall, _ = judge(
            tmp,
            "score",
            str(cases),
            "--rubric",
            "helpfulness",
            "--model",
            "openai/sim",
            "--api-base",
            f"{server.url}/v1",
            "--no-cache",
            "--quiet",
            "--out",
            slug(name),
            *extra,
        )
        records = [r for r in server.requests if r.time >= server.started]
    summary = json.loads((tmp / slug(name) / "summary.json").read_text())
    ok = sorted(r.time for r in records if r.status == 200)
    limited = [r.time - server.started for r in records if r.status == 429]
    span = ok[-1] - ok[0] if len(ok) > 1 else float("nan")
    rate = (len(ok) - 1) / span * 60
    print(
        f"{name}: exit {code}, {wall:.0f} s; {len(records)} calls, {len(limited)} of them 429 "
        f"({sum(t < 1 for t in limited)} in the first second, "
        f"{sum(t >= 5 for t in limited)} after 5 s); {summary['n_failed']} failed cases; "
        f"{rate:.0f} ok/min = {rate / LIMIT:.0%} of the limit"
    )


def slug(name: str) -> str:
    """A run directory's name for a scenario."""
    return "run-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def outages(tmp: Path) -> None:
    cases = str(REPO / "datasets" / "example.jsonl")
    base = f"http://127.0.0.1:{free_port()}/v1"
    for name, args, environ in (
        ("refused port", ("--model", "openai/sim", "--api-base", base), None),
        (
            "missing key",
            ("--model", "openai/gpt-4o-mini"),
            {k: v for k, v in env(tmp).items() if k != "OPENAI_API_KEY"},
        ),
    ):
        code, wall, stderr = judge(
            tmp,
            "score",
            cases,
            "--rubric",
            "helpfulness",
            "--no-cache",
            "--out",
            slug(name),
            *args,
            environ=environ,
        )
        first = next((x for x in stderr.splitlines() if x.startswith("error:")), "")
        print(f"{name}: exit {code} after {wall:.1f} s (process start included): {first[:110]}")


def latency(tmp: Path) -> None:
    with SimulatorServer(SimulatorConfig()) as server:
        judge(
            tmp,
            "score",
            str(REPO / "datasets" / "example.jsonl"),
            "--rubric",
            "helpfulness",
            "--model",
            "openai/sim",
            "--api-base",
            f"{server.url}/v1",
            "--no-cache",
            "--quiet",
            "--out",
            "run-latency",
        )
    usage = json.loads((tmp / "run-latency" / "summary.json").read_text())["usage"]
    p50, p95 = usage["latency_p50_s"], usage["latency_p95_s"]
    print(
        f"latency against a 0-latency server: p50 {p50:.3f} s, p95 {p95:.3f} s   "
        "(before: ~2.15 s for the first 16 calls)"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        outages(tmp)
        latency(tmp)
        key_at_its_limit(tmp, "at-limit, x-ratelimit headers", headers=True)
        key_at_its_limit(tmp, "at-limit, Retry-After only", headers=False)
        key_at_its_limit(tmp, "at-limit, --rpm 300", headers=False, extra=("--rpm", str(LIMIT)))


if __name__ == "__main__":
    main()
