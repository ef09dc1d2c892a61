"""The simulator's state: the script, the rate window, the seeded faults, the record of
requests, the files and the batches, shared by the server's handlers (its event loop thread)
and the tests (theirs).

`ServerState.plan` decides how each request is answered when it arrives: the script first,
then the rate limit, then a refused ``response_format``, then the seeded faults.
`ServerState.plan_line` decides it for a batch line: a refused ``response_format``, then the
seeded faults that touch a reply's content (a malformed verdict) — a batch has no connection
to drop, cut or rate limit, and fails its lines by its own `batch_fail_rate`.
"""

from __future__ import annotations

import collections
import hashlib
import json
import random
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from judgecli.simulator.batches import BatchRules, BatchStore
from judgecli.simulator.blind_spot import BlindSpot
from judgecli.simulator.config import Fault, JudgeSettings, RecordedRequest, SimulatorConfig
from judgecli.simulator.files import FileStore
from judgecli.simulator.rate import RateWindow
from judgecli.simulator.replies import Replier
from judgecli.simulator.truth import load_truth
from judgecli.simulator.verdicts import MALFORMED_CONTENT
from judgecli.simulator.wire import error_body

DROPPED = 0
"""The status of an `Action` that closes the connection without a reply."""


@dataclass(frozen=True)
class Action:
    """How to answer one request.

    ``status`` is 200 for a reply (``content=None``: compute the verdict; ``truncated``:
    send the first half of its body), `DROPPED` to close the connection, or the error
    status to send with ``body`` and ``retry_after``. ``fault`` is what the draw chose.
    """

    status: int = 200
    content: str | None = None
    body: str | None = None
    retry_after: float | None = None
    truncated: bool = False
    fault: Fault | None = None


class ServerState:
    """Script, rate window and records shared by the handlers (loop thread) and tests."""

    def __init__(self, config: SimulatorConfig) -> None:
        self.config = config
        # Read before listening, so a bad truth file fails start() with its file:line.
        self.truth = (
            None if config.truth_file is None else load_truth(config.truth_file, config.truth_field)
        )
        self.lock = threading.Lock()
        self.script: collections.deque[Action] = collections.deque()
        self.records: list[RecordedRequest] = []
        self.rate = RateWindow(
            config.rpm, config.rate_limit_window_s, prefill=config.rate_limit_prefill
        )
        self.started = time.monotonic()
        self.attempts: collections.Counter[str] = collections.Counter()
        random_429 = error_body(429, "simulated rate limit: a random share of requests")
        wait = config.rate_limit_retry_after_s
        self.fault_actions = {
            Fault.DROP: Action(DROPPED, fault=Fault.DROP),
            Fault.ERROR: Action(500, body=error_body(500), fault=Fault.ERROR),
            Fault.MALFORMED: Action(content=MALFORMED_CONTENT, fault=Fault.MALFORMED),
            Fault.RATE_LIMIT: Action(
                429, body=random_429, retry_after=wait, fault=Fault.RATE_LIMIT
            ),
            Fault.TRUNCATE: Action(truncated=True, fault=Fault.TRUNCATE),
        }
        self.files = FileStore()
        rules = BatchRules(
            seed=config.seed,
            steps=config.batch_steps,
            fail_rate=config.batch_fail_rate,
            expire=config.batch_expire,
        )
        self.batches = BatchStore(rules, self.files)
        # Loop-thread only from here on: no lock needed.
        self.latency_rng = random.Random(config.seed)
        spot = config.blind_spot
        blind = None if spot is None else BlindSpot(spot, ignores_prompt=config.ignores_prompt)
        self.replier = Replier(config.seed, self.truth, blind_spot=blind)

    def plan(
        self, body: dict[str, Any], now: float, judge: JudgeSettings
    ) -> tuple[Action, dict[str, str]]:
        """Decide the reply at arrival, with the rate-limit headers to send along."""
        with self.lock:
            action = self._decide(body, now, judge)
            headers = self.rate.headers(now) if self.config.rate_limit_headers else {}
        return action, headers

    def _decide(self, body: dict[str, Any], now: float, judge: JudgeSettings) -> Action:
        # Script, then the rate limit, then a refused response_format, then seeded faults.
        if self.script:
            self.rate.admit(now)
            return self.script.popleft()
        wait = self.rate.wait(now)
        if wait is not None:
            # Not admitted, so not counted: a client that keeps retrying is not punished.
            message = f"simulated rate limit: {self.rate}"
            return Action(429, body=error_body(429, message), retry_after=wait)
        self.rate.admit(now)
        return self._judged(body, judge)

    def plan_line(self, body: dict[str, Any], judge: JudgeSettings) -> Action:
        """Decide the reply to a batch line: as online, but never dropped, cut or limited."""
        with self.lock:
            action = self._judged(body, judge)
        # The draw is still made (and the attempt counted), so a line is malformed exactly
        # when the same request sent online as the same attempt would be.
        return action if action.fault in {None, Fault.MALFORMED} else Action()

    def _judged(self, body: dict[str, Any], judge: JudgeSettings) -> Action:
        """A refused ``response_format``, else the seeded fault, else a normal reply."""
        refusal = judge.formats.refusal(body)
        if refusal is not None:
            status, text = refusal
            return Action(status, body=text)
        return self._fault(body)

    def clear(self) -> None:
        """Forget the script, the records, the fault attempt counts, the jitter's request
        counts, the files and batches; restart the rate window.
        """
        with self.lock:
            self.script.clear()
            self.records.clear()
            self.attempts.clear()
            self._restart(time.monotonic())
        # Outside the state lock: the batch store's lock is always taken before it.
        self.batches.clear()
        self.files.clear()
        self.replier.forget()

    def restart(self) -> None:
        """Start the clock (and refill a prefilled window) now: when the server listens."""
        with self.lock:
            self._restart(time.monotonic())

    def _restart(self, now: float) -> None:
        self.started = now
        self.rate.restart(now)

    def _fault(self, body: dict[str, Any]) -> Action:
        if not any(self.config.fault_rates.values()):
            return Action()
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        # The attempt number is in the key so a retry of a failed request can succeed,
        # while a rerun of the same request sequence fails in exactly the same places.
        self.attempts[digest] += 1
        fault = self.config.draw_fault(f"{self.attempts[digest]}\x1f{digest}")
        return Action() if fault is None else self.fault_actions[fault]

    def record(
        self,
        headers: Mapping[str, str],
        body: dict[str, Any],
        now: float,
        action: Action,
        *,
        batch_id: str | None = None,
        custom_id: str | None = None,
    ) -> None:
        """Append the request and how it was answered to the record tests read; a batch
        line with the ids of its batch and its line.
        """
        entry = RecordedRequest(
            time=now,
            model=str(body.get("model") or ""),
            body=body,
            headers={k.lower(): v for k, v in headers.items()},
            status=action.status,
            fault=action.fault,
            batch_id=batch_id,
            custom_id=custom_id,
        )
        with self.lock:
            self.records.append(entry)

    def delay(self) -> float:
        """Seconds to wait before this reply: the latency with its seeded jitter."""
        cfg = self.config
        jitter = (
            self.latency_rng.uniform(-1, 1) * cfg.latency_jitter_ms if cfg.latency_jitter_ms else 0
        )
        return max(0.0, cfg.latency_ms + jitter) / 1000
