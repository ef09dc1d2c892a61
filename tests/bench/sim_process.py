"""The simulator in a process of its own, for a bench that needs the time each request
arrived: `python tests/bench/sim_process.py LATENCY_MS` prints its API base, then answers
each line on its stdin, `times N` or `bodies N`, with one JSON line: the arrival times
(`time.monotonic()`, one clock for every process of the machine) or the bodies of the
chat completion requests from the N-th on. It stops at the end of its stdin.

`judge simulate --latency-ms L` serves the same replies but keeps what it recorded to
itself; this host runs the same server (`SimulatorServer`), away from the clients it
times, so it has a core of its own where the machine has one to give.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from common import ENV


def serve(latency_ms: float) -> None:
    from judgecli.simulator.server import SimulatorConfig, SimulatorServer

    with SimulatorServer(SimulatorConfig(latency_ms=latency_ms)) as sim:
        print(f"{sim.url}/v1", flush=True)
        for line in sys.stdin:
            what, since = line.split()
            seen = sim.requests[int(since) :]
            answer = [r.time for r in seen] if what == "times" else [r.body for r in seen]
            print(json.dumps(answer), flush=True)


class SimulatorProcess:
    """`sim_process.py` run from a bench: its API base, and what it has seen since a run."""

    def __init__(self, latency_ms: float) -> None:
        self._process = subprocess.Popen(
            [sys.executable, str(Path(__file__)), str(latency_ms)],
            env=ENV,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        self.api = self._process.stdout.readline().strip()
        if not self.api:
            raise RuntimeError("the simulator process did not start")
        self.pid = self._process.pid
        self.seen = 0
        """Requests already read back by `new_times`."""

    def _ask(self, what: str, since: int) -> list[Any]:
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        self._process.stdin.write(f"{what} {since}\n")
        self._process.stdin.flush()
        answer: list[Any] = json.loads(self._process.stdout.readline())
        return answer

    def new_times(self) -> tuple[list[float], int]:
        """Arrival times of the requests since the last call, and the index of the first."""
        first = self.seen
        times = [float(t) for t in self._ask("times", first)]
        self.seen += len(times)
        return times, first

    def bodies(self, since: int, count: int) -> list[dict[str, Any]]:
        """The bodies of `count` requests from the `since`-th on."""
        return self._ask("bodies", since)[:count]

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(timeout=30)


if __name__ == "__main__":
    serve(float(sys.argv[1]))
