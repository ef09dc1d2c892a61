"""`make bench`: a storm of random 429s (issue 19, goal 6).

Not a test: numbers vary by machine, so nothing here asserts. It prints what it measured.

500 cases against the simulator (100 ms latency) at concurrency 64, `judge score --no-cache`:
with 20% of requests answered 429 with `Retry-After: 1` at random (an overloaded provider:
refusals that no pace avoids), under two simulator seeds, and with none (the reference).
The issue saw 45.8 s for the storm, while Inspect took 31.8 s with fewer verdicts: each
random 429 held every call of the model for its Retry-After. Target: every case judged, and
the storm close to the reference — a refused call waits its own Retry-After, the others go
on. Seed 0 refuses the very first call, which, with no reply yet, reads as a key at its
limit (every call waits, then the pace starts low until the 429s prove random); seed 1
answers it.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from common import ENV, score_command, write_cases

CASES = 500
CONCURRENCY = 64
LATENCY_MS = 100.0
SHARE = 0.2
RETRY_AFTER_S = 1.0


class Outcome(NamedTuple):
    wall: float
    requests: int
    limited: int
    ok: int
    failed: int
    first_refused: bool

    def line(self) -> str:
        first = "refused" if self.first_refused else "answered"
        return (
            f"{self.wall:6.2f} s  {self.requests} requests, {self.limited} 429s, "
            f"{self.ok} cases ok, {self.failed} failed; first call {first}"
        )


def run(tmp: Path, cases: Path, name: str, share: float, seed: int = 0) -> Outcome:
    """One `judge score` in a fresh process, timed end to end."""
    from judgecli.simulator.server import SimulatorConfig, SimulatorServer

    config = SimulatorConfig(
        seed=seed,
        latency_ms=LATENCY_MS,
        rate_limit_rate=share,
        rate_limit_retry_after_s=RETRY_AFTER_S,
    )
    with SimulatorServer(config) as sim:
        command = score_command(
            cases, f"{sim.url}/v1", tmp / name, "--concurrency", str(CONCURRENCY), "--no-cache"
        )
        start = time.perf_counter()
        subprocess.run(command, check=False, env=ENV, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        seen = sim.requests
    summary = json.loads((tmp / name / "summary.json").read_text())
    return Outcome(
        wall=wall,
        requests=len(seen),
        limited=sum(r.status == 429 for r in seen),
        ok=summary["n_ok"],
        failed=summary["n_failed"],
        first_refused=bool(seen) and seen[0].status == 429,
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cases = tmp / "cases.jsonl"
        write_cases(cases, CASES)
        calm = run(tmp, cases, "calm", 0.0)
        storms = [run(tmp, cases, f"storm-{seed}", SHARE, seed) for seed in (0, 1)]
    print(
        f"429 storm: {CASES} cases, {LATENCY_MS:g} ms latency, concurrency {CONCURRENCY}, "
        f"{SHARE:.0%} random 429s with Retry-After {RETRY_AFTER_S:g} (imports included)"
    )
    print(f"  no 429s:        {calm.line()}")
    for seed, storm in enumerate(storms):
        ratio = storm.wall / calm.wall
        print(f"  storm, seed {seed}:  {storm.line()}; {ratio:.2f}x the run without 429s")
    print("  (issue 19: 45.8 s for the storm before the fix; target: close to no 429s)")


if __name__ == "__main__":
    main()
