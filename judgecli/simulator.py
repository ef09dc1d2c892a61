"""An OpenAI-compatible judge simulator on 127.0.0.1, for tests and the offline demo.

This is a simulator, not a model: it answers ``POST /v1/chat/completions`` with
deterministic fake verdicts computed from text features and hashes
(`judgecli.simulator_verdicts`), so LiteLLM can talk to it over a real socket with
``model="openai/<name>", api_base="http://127.0.0.1:PORT/v1"``. Given a truth file of
labelled cases, it replays their labels with seeded noise instead
(`judgecli.simulator_truth`), so agreement and calibration statistics are non-trivial.

It also plays a misbehaving provider, so retries and rate limits are tested on the path
users run: a server-side requests-per-minute limit (429 + ``Retry-After``), seeded shares
of dropped connections, 500s, malformed verdicts, random 429s and truncated bodies (each
request draws once, so each rate is exactly its share and a retry can succeed), added
latency, and a script (`SimulatorServer.enqueue`, `fail_next`, `drop_next`,
`truncate_next`) that takes precedence over all of those and is consumed in arrival order.

Only chat completions are scripted, rate limited and recorded; ``GET /v1/models`` and
``GET /health`` always answer.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import itertools
import json
import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

from aiohttp import web

from judgecli.simulator_config import Fault, RecordedRequest, SimulatorConfig
from judgecli.simulator_truth import load_truth
from judgecli.simulator_verdicts import MALFORMED_CONTENT, verdict_content
from judgecli.simulator_wire import (
    completion_body,
    error_body,
    parse_request,
    retry_after_header,
    truncated_body,
)

__all__ = ["Fault", "RecordedRequest", "SimulatorConfig", "SimulatorServer", "serve_forever"]

# Long enough for an in-flight reply to finish, short enough that stop() never hangs a test.
_SHUTDOWN_TIMEOUT_S = 1.0
_WINDOW_S = 60.0
_JSON = "application/json"
_DROPPED = 0


@dataclass(frozen=True)
class _Action:
    """How to answer one request.

    ``status`` is 200 for a reply (``content=None``: compute the verdict; ``truncated``:
    send the first half of its body), `_DROPPED` to close the connection, or the error
    status to send with ``body`` and ``retry_after``. ``fault`` is what the draw chose.
    """

    status: int = 200
    content: str | None = None
    body: str | None = None
    retry_after: float | None = None
    truncated: bool = False
    fault: Fault | None = None


class _State:
    """Script, rate window and records shared by the handlers (loop thread) and tests."""

    def __init__(self, config: SimulatorConfig) -> None:
        self.config = config
        # Read before listening, so a bad truth file fails start() with its file:line.
        self.truth = (
            None if config.truth_file is None else load_truth(config.truth_file, config.truth_field)
        )
        self.lock = threading.Lock()
        self.script: collections.deque[_Action] = collections.deque()
        self.records: list[RecordedRequest] = []
        self.window: collections.deque[float] = collections.deque()
        self.attempts: collections.Counter[str] = collections.Counter()
        random_429 = error_body(429, "simulated rate limit: a random share of requests")
        wait = config.rate_limit_retry_after_s
        self.fault_actions = {
            Fault.DROP: _Action(_DROPPED, fault=Fault.DROP),
            Fault.ERROR: _Action(500, body=error_body(500), fault=Fault.ERROR),
            Fault.MALFORMED: _Action(content=MALFORMED_CONTENT, fault=Fault.MALFORMED),
            Fault.RATE_LIMIT: _Action(
                429, body=random_429, retry_after=wait, fault=Fault.RATE_LIMIT
            ),
            Fault.TRUNCATE: _Action(truncated=True, fault=Fault.TRUNCATE),
        }
        # Loop-thread only from here on: no lock needed.
        self.jitter = random.Random(config.seed)
        self.ids = itertools.count(1)

    def plan(self, body: dict[str, Any], now: float) -> _Action:
        """Decide the reply at arrival: script, then rpm limit, then seeded faults."""
        with self.lock:
            if self.script:
                action = self.script.popleft()
                self._count(now)
                return action
            limited = self._over_rpm(now)
            if limited is not None:
                return limited
            self._count(now)
            return self._fault(body)

    def clear(self) -> None:
        """Forget the script, the records, the rate window and the fault attempt counts."""
        with self.lock:
            self.script.clear()
            self.records.clear()
            self.window.clear()
            self.attempts.clear()

    def _count(self, now: float) -> None:
        if self.config.rpm is not None:
            self.window.append(now)

    def _over_rpm(self, now: float) -> _Action | None:
        rpm = self.config.rpm
        if rpm is None:
            return None
        while self.window and self.window[0] <= now - _WINDOW_S:
            self.window.popleft()
        if len(self.window) < rpm:
            return None
        wait = max(0.1, math.ceil((self.window[0] + _WINDOW_S - now) * 10) / 10)
        body = error_body(429, f"simulated rate limit: {rpm} requests per minute")
        return _Action(429, body=body, retry_after=wait)

    def _fault(self, body: dict[str, Any]) -> _Action:
        if not any(self.config.fault_rates.values()):
            return _Action()
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        # The attempt number is in the key so a retry of a failed request can succeed,
        # while a rerun of the same request sequence fails in exactly the same places.
        self.attempts[digest] += 1
        fault = self.config.draw_fault(f"{self.attempts[digest]}\x1f{digest}")
        return _Action() if fault is None else self.fault_actions[fault]

    def record(
        self, request: web.Request, body: dict[str, Any], now: float, action: _Action
    ) -> None:
        headers = {k.lower(): v for k, v in request.headers.items()}
        entry = RecordedRequest(
            time=now, model=str(body.get("model") or ""), body=body, headers=headers,
            status=action.status, fault=action.fault,
        )  # fmt: skip
        with self.lock:
            self.records.append(entry)

    def delay(self) -> float:
        cfg = self.config
        jitter = self.jitter.uniform(-1, 1) * cfg.latency_jitter_ms if cfg.latency_jitter_ms else 0
        return max(0.0, cfg.latency_ms + jitter) / 1000


class _Handlers:
    """The aiohttp handlers over one `_State`."""

    def __init__(self, state: _State) -> None:
        self.state = state

    async def chat(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        now = time.monotonic()
        body, problem = parse_request(raw)
        if problem is not None:
            self.state.record(request, body, now, _Action(400))
            return web.Response(status=400, text=error_body(400, problem), content_type=_JSON)
        action = self.state.plan(body, now)
        self.state.record(request, body, now, action)
        delay = self.state.delay()
        if delay:
            await asyncio.sleep(delay)
        return self._answer(request, body, action)

    def _answer(self, request: web.Request, body: dict[str, Any], action: _Action) -> web.Response:
        if action.status == _DROPPED:
            if request.transport is not None:
                request.transport.abort()
            # Never written: the transport is gone, so the client sees a closed connection.
            return web.Response(status=204)
        if action.status != 200:
            text = action.body if action.body is not None else error_body(action.status)
            headers = {}
            if action.retry_after is not None:
                headers["Retry-After"] = retry_after_header(action.retry_after)
            content_type = _JSON if text.lstrip().startswith("{") else "text/plain"
            return web.Response(
                status=action.status, text=text, headers=headers, content_type=content_type
            )
        cfg = self.state.config
        content = action.content
        if content is None:
            judge = cfg.settings_for(str(body.get("model") or ""))  # its profile, if it has one
            content = verdict_content(
                body,
                seed=cfg.seed,
                position_bias=judge.position_bias,
                length_bias=judge.length_bias,
                truth=self.state.truth,
                noise=judge.noise,
            )
        completion = completion_body(body, content, next(self.state.ids))
        if action.truncated:
            # A bytes body gets its own Content-Length: the client reads every byte sent,
            # then fails to parse them (unlike a drop, which it sees as a broken connection).
            return web.Response(body=truncated_body(completion), content_type=_JSON)
        return web.json_response(completion)

    async def models(self, request: web.Request) -> web.Response:
        model = {"id": "sim", "object": "model", "created": 0, "owned_by": "judgecli-simulator"}
        return web.json_response({"object": "list", "data": [model]})

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")


def _make_app(state: _State) -> web.Application:
    handlers = _Handlers(state)
    app = web.Application()
    app.router.add_post("/v1/chat/completions", handlers.chat)
    app.router.add_get("/v1/models", handlers.models)
    app.router.add_get("/health", handlers.health)
    return app


async def _start_runner(state: _State) -> tuple[web.AppRunner, int]:
    """Start listening; return the runner (to clean up) and the bound port."""
    # No access log: formatting a line per request is measurable at benchmark rates.
    runner = web.AppRunner(_make_app(state), access_log=None, shutdown_timeout=_SHUTDOWN_TIMEOUT_S)
    await runner.setup()
    try:
        site = web.TCPSite(runner, state.config.host, state.config.port)
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    port = int(runner.addresses[0][1])
    return runner, port


async def serve_forever(
    config: SimulatorConfig, *, on_ready: Callable[[str], None] | None = None
) -> None:
    """Serve in the current event loop until cancelled (`judge simulate`'s foreground mode).

    Args:
        config: Where to listen and how to misbehave.
        on_ready: Called once with the base URL (``http://HOST:PORT``) when listening.
    """
    runner, port = await _start_runner(_State(config))
    try:
        if on_ready is not None:
            on_ready(f"http://{config.host}:{port}")
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


class SimulatorServer:
    """The simulator on its own event loop in a daemon thread, scriptable from tests.

    Example:
        >>> with SimulatorServer(SimulatorConfig(seed=1)) as server:
        ...     server.enqueue('{"score": 5}')
        ...     # point LiteLLM at f"{server.url}/v1"
    """

    def __init__(self, config: SimulatorConfig | None = None) -> None:
        self.config = config or SimulatorConfig()
        self._state = _State(self.config)
        self._port: int | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None

    @property
    def port(self) -> int:
        """The bound TCP port (after `start`)."""
        if self._port is None:
            raise RuntimeError("the simulator is not running; call start() first")
        return self._port

    @property
    def url(self) -> str:
        """Base URL without ``/v1``, e.g. ``http://127.0.0.1:54321`` (after `start`)."""
        return f"http://{self.config.host}:{self.port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the chat completion requests received, in arrival order."""
        with self._state.lock:
            return list(self._state.records)

    def start(self) -> None:
        """Start serving in a daemon thread; return once the port is listening."""
        if self._thread is not None:
            raise RuntimeError("the simulator is already running")
        ready = threading.Event()
        failure: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._run, args=(ready, failure), name="judge-simulator", daemon=True
        )
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            self._thread = None
            raise failure[0]

    def _run(self, ready: threading.Event, failure: list[BaseException]) -> None:
        try:
            # asyncio.run cancels leftovers and closes the loop: no warnings at stop().
            asyncio.run(self._serve(ready))
        except BaseException as exc:  # handed to start() in the caller's thread
            failure.append(exc)
            ready.set()

    async def _serve(self, ready: threading.Event) -> None:
        runner, port = await _start_runner(self._state)
        self._loop, self._stop_event = asyncio.get_running_loop(), asyncio.Event()
        self._port = port
        ready.set()
        try:
            await self._stop_event.wait()
        finally:
            await runner.cleanup()

    def stop(self) -> None:
        """Stop serving and wait for the thread to finish; safe to call twice."""
        thread, loop, stop_event = self._thread, self._loop, self._stop_event
        if thread is None or loop is None or stop_event is None:
            return
        loop.call_soon_threadsafe(stop_event.set)
        thread.join()
        self._thread, self._loop, self._stop_event, self._port = None, None, None, None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def enqueue(self, content: str) -> None:
        """Make the next scripted chat completion reply (HTTP 200) with exactly ``content``."""
        self._push([_Action(content=content)])

    def fail_next(
        self,
        status: int,
        *,
        retry_after: float | None = None,
        count: int = 1,
        body: str | None = None,
    ) -> None:
        """Answer the next ``count`` scripted requests with HTTP ``status``.

        Args:
            status: The HTTP status, 400..599.
            retry_after: Seconds for a ``Retry-After`` header (sent as "1" or "0.05").
            count: How many requests fail.
            body: The response body; by default an OpenAI-shaped JSON error.
        """
        if not 400 <= status <= 599:
            raise ValueError(f"fail_next needs an error status (400..599), got {status}")
        action = _Action(status, body=body, retry_after=retry_after)
        self._push([action] * count)

    def drop_next(self, count: int = 1) -> None:
        """Close the connection of the next ``count`` scripted requests without a reply."""
        self._push([_Action(_DROPPED)] * count)

    def truncate_next(self, count: int = 1) -> None:
        """Answer the next ``count`` scripted requests with the first half of their body."""
        self._push([_Action(truncated=True)] * count)

    def reset(self) -> None:
        """Forget the script, the recorded requests and the rpm window.

        Tests share one server per session and call this between tests.
        """
        self._state.clear()

    def _push(self, actions: list[_Action]) -> None:
        with self._state.lock:
            self._state.script.extend(actions)
