"""An OpenAI-compatible judge simulator on 127.0.0.1, for tests and the offline demo.

This is a simulator, not a model: it answers ``POST /v1/chat/completions`` with
deterministic fake verdicts computed from text features and hashes
(`judgecli.simulator.verdicts`), so LiteLLM can talk to it over a real socket with
``model="openai/<name>", api_base="http://127.0.0.1:PORT/v1"``. Given a truth file of
labelled cases, it replays their labels with seeded noise instead
(`judgecli.simulator.truth`), so agreement and calibration statistics are non-trivial.
With `SimulatorConfig.jitter` a share of calls is a random guess, drawn anew for each
identical request (`judgecli.simulator.jitter`), so repeated judging has noise to measure.

It also plays a misbehaving provider, so retries and rate limits are tested on the path
users run: a server-side request limit over a sliding window (429 + ``Retry-After``, with
OpenAI's ``x-ratelimit-*`` headers; `judgecli.simulator.rate`), seeded shares of dropped
connections, 500s, malformed verdicts, random 429s and truncated bodies (each request draws
once, so each rate is exactly its share and a retry can succeed), added latency, and a
script (`SimulatorServer.enqueue`, `fail_next`, `drop_next`, `truncate_next`) that takes
precedence over all of those and is consumed in arrival order. And it plays real judges and
servers: reply styles (`judgecli.simulator.styles`: think blocks, reasoning_content, fenced
JSON, prose, cut-off replies) and the ``response_format`` types a server accepts
(`judgecli.simulator.formats`: llama-cpp-python's 500 on ``json_schema``, and others).

It also serves OpenAI's Files and Batch APIs (`judgecli.simulator.batch_api`): a batch
moves one step per retrieve, never by the clock (`SimulatorConfig.batch_steps`), and answers
each line through the same `Replier` as an online request, so both read alike; its faults
are a failed share of lines, expiry, cancelling, an invalid input file and
`SimulatorServer.fail_next_batch`.

Only chat completions are scripted and rate limited; they and batch lines are recorded
(`RecordedRequest.batch_id` tells them apart). ``GET /v1/models`` and ``GET /health`` always
answer.
"""

from __future__ import annotations

import asyncio
import errno
import threading
import time
from collections.abc import Callable
from typing import Any, Self

from aiohttp import web

from judgecli.errors import ConfigError
from judgecli.simulator.batch_api import BatchApi
from judgecli.simulator.batch_input import BatchError
from judgecli.simulator.batches import TOKEN_LIMIT_MESSAGE
from judgecli.simulator.config import Fault, JudgeSettings, RecordedRequest, SimulatorConfig
from judgecli.simulator.rate import StatusBin, status_bins
from judgecli.simulator.state import DROPPED, Action, ServerState
from judgecli.simulator.wire import error_body, parse_request, retry_after_header, truncated_body

__all__ = [
    "Fault",
    "RecordedRequest",
    "SimulatorConfig",
    "SimulatorServer",
    "StatusBin",
    "serve_forever",
]

# Long enough for an in-flight reply to finish, short enough that stop() never hangs a test.
_SHUTDOWN_TIMEOUT_S = 1.0
_JSON = "application/json"
# OpenAI's limit on an uploaded file; aiohttp's default (1 MiB) would refuse a real batch.
_MAX_BODY_BYTES = 200 * 1024 * 1024


class _Handlers:
    """The aiohttp handlers over one `ServerState`."""

    def __init__(self, state: ServerState) -> None:
        self.state = state

    async def chat(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        now = time.monotonic()
        body, problem = parse_request(raw)
        if problem is not None:
            self.state.record(request.headers, body, now, Action(400))
            return web.Response(status=400, text=error_body(400, problem), content_type=_JSON)
        judge = self.state.config.settings_for(str(body.get("model") or ""))  # its profile
        action, headers = self.state.plan(body, now, judge)
        self.state.record(request.headers, body, now, action)
        delay = self.state.delay()
        if delay:
            await asyncio.sleep(delay)
        return self._answer(request, body, action, headers, judge)

    def _answer(
        self,
        request: web.Request,
        body: dict[str, Any],
        action: Action,
        headers: dict[str, str],
        judge: JudgeSettings,
    ) -> web.Response:
        if action.status == DROPPED:
            if request.transport is not None:
                request.transport.abort()
            # Never written: the transport is gone, so the client sees a closed connection.
            return web.Response(status=204)
        if action.status != 200:
            text = action.body if action.body is not None else error_body(action.status)
            if action.retry_after is not None:
                headers = {**headers, "Retry-After": retry_after_header(action.retry_after)}
            content_type = _JSON if text.lstrip().startswith("{") else "text/plain"
            return web.Response(
                status=action.status, text=text, headers=headers, content_type=content_type
            )
        # Scripted and malformed content is sent exactly as given, unstyled.
        completion = self.state.replier.completion(body, judge, action.content)
        if action.truncated:
            # A bytes body gets its own Content-Length: the client reads every byte sent,
            # then fails to parse them (unlike a drop, which it sees as a broken connection).
            return web.Response(
                body=truncated_body(completion), headers=headers, content_type=_JSON
            )
        return web.json_response(completion, headers=headers)

    async def models(self, request: web.Request) -> web.Response:
        model = {"id": "sim", "object": "model", "created": 0, "owned_by": "judgecli-simulator"}
        return web.json_response({"object": "list", "data": [model]})

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")


def _make_app(state: ServerState) -> web.Application:
    handlers = _Handlers(state)
    app = web.Application(client_max_size=_MAX_BODY_BYTES)
    app.router.add_post("/v1/chat/completions", handlers.chat)
    app.router.add_get("/v1/models", handlers.models)
    app.router.add_get("/health", handlers.health)
    BatchApi(state).add_routes(app)
    return app


async def _start_runner(state: ServerState) -> tuple[web.AppRunner, int]:
    """Start listening; return the runner (to clean up) and the bound port."""
    # No access log: formatting a line per request is measurable at benchmark rates.
    runner = web.AppRunner(_make_app(state), access_log=None, shutdown_timeout=_SHUTDOWN_TIMEOUT_S)
    await runner.setup()
    host, port = state.config.host, state.config.port
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
    except OSError as err:
        await runner.cleanup()
        raise bind_error(err, host, port) from None
    except BaseException:
        await runner.cleanup()
        raise
    bound = int(runner.addresses[0][1])
    state.restart()
    return runner, bound


def bind_error(err: OSError, host: str, port: int) -> ConfigError:
    """Why the simulator cannot listen on host:port, and the fix: another port (exit 2)."""
    other = "pick another with --port (0 picks a free one)"
    if err.errno == errno.EADDRINUSE:
        return ConfigError(
            f"port {port} is in use: {other}",
            hint=f"another process listens on {host}:{port}; stop it, or run judge simulate "
            "--port 0",
        )
    if err.errno == errno.EACCES and 0 < port < 1024:
        return ConfigError(
            f"port {port} needs privileges (ports below 1024 do): {other}",
            hint="e.g. judge simulate --port 8765",
        )
    reason = err.strerror or str(err)
    return ConfigError(f"cannot listen on {host}:{port}: {reason}", hint=other)


async def serve_forever(
    config: SimulatorConfig, *, on_ready: Callable[[str], None] | None = None
) -> None:
    """Serve in the current event loop until cancelled (`judge simulate`'s foreground mode).

    Args:
        config: Where to listen and how to misbehave.
        on_ready: Called once with the base URL (``http://HOST:PORT``) when listening.
    """
    runner, port = await _start_runner(ServerState(config))
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
        self._state = ServerState(self.config)
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
        """A snapshot of the chat completion requests received online and answered as batch
        lines (those have a `RecordedRequest.batch_id`), in the order they were answered.
        """
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
        self._push([Action(content=content)])

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
        action = Action(status, body=body, retry_after=retry_after)
        self._push([action] * count)

    def drop_next(self, count: int = 1) -> None:
        """Close the connection of the next ``count`` scripted requests without a reply."""
        self._push([Action(DROPPED)] * count)

    def truncate_next(self, count: int = 1) -> None:
        """Answer the next ``count`` scripted requests with the first half of their body."""
        self._push([Action(truncated=True)] * count)

    def fail_next_batch(
        self, code: str = "token_limit_exceeded", message: str = TOKEN_LIMIT_MESSAGE
    ) -> None:
        """Make the next batch created with a valid input file end ``failed`` (at its first
        retrieve, or at once with zero `SimulatorConfig.batch_steps`) with this error in
        ``errors.data``; by default OpenAI's enqueued-token-limit failure.
        """
        self._state.batches.fail_next(BatchError(code, message))

    def reset(self) -> None:
        """Forget the script, the recorded requests, the files and the batches; restart the
        clock and the rpm window (full again with `SimulatorConfig.rate_limit_prefill`).

        Tests share one server per session and call this between tests.
        """
        self._state.clear()

    @property
    def started(self) -> float:
        """`time.monotonic()` when the server started listening or was last reset: the
        origin of `status_bins`, and the moment a prefilled rate window was full.
        """
        with self._state.lock:
            return self._state.started

    def status_bins(self, bin_s: float = 1.0) -> list[StatusBin]:
        """How many 200s, 429s and other outcomes each ``bin_s`` slot since `started` saw.

        For tests of client-side pacing, e.g. "after the first window, no more 429s". Batch
        lines are left out: they are not paced by the client.
        """
        with self._state.lock:
            online = [record for record in self._state.records if record.batch_id is None]
            return status_bins(online, self._state.started, bin_s)

    def _push(self, actions: list[Action]) -> None:
        with self._state.lock:
            self._state.script.extend(actions)
