"""`judge view`'s web server (aiohttp, as the simulator's): the app with its pages, its API
and its guard, listening on loopback unless told otherwise; in the foreground
(`serve_forever`) or in a thread for tests (`ViewServer`).

Every failure of a request is answered with one clear line (a page's `error: ...`, the
API's `{"error"}`): a run this judge cannot read, a case it does not have, a bad label. An
unexpected error is logged with its traceback on the server's terminal and answered with a
line saying so; no traceback ever reaches a page.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Self

from aiohttp import web

from judgecli.errors import ConfigError, JudgeError, RunIncompleteError
from judgecli.view.api import Api
from judgecli.view.pages import problem_page
from judgecli.view.runs import ServedRuns
from judgecli.view.security import Handler, Tokens, guard
from judgecli.view.site import Site
from judgecli.view.state import BadRequest, NotServed, Unreadable, ViewState

LOG = logging.getLogger("judgecli.view")
SHUTDOWN_TIMEOUT_S = 1.0
MAX_BODY_BYTES = 64 * 1024
"""A label is a few hundred bytes; a note at most a few KB."""


def status_of(err: JudgeError) -> int:
    """The HTTP status of an error: 404 not served, 409 a run that is not finished or
    cannot be read, 400 anything else the request asked wrongly.
    """
    if isinstance(err, NotServed):
        return 404
    if isinstance(err, BadRequest):
        return 400
    if isinstance(err, Unreadable | RunIncompleteError):
        return 409
    return 400


def answers(token: str) -> Callable[[web.Request, Handler], object]:
    """The middleware that turns every failure into one clear line."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        api = request.path.startswith("/api/")
        try:
            return await handler(request)
        except web.HTTPException:
            raise
        except JudgeError as err:
            message = err.message + (f"; hint: {err.hint}" if err.hint else "")
            status = status_of(err)
        except Exception:  # a bug: its traceback for the terminal, one line for the page
            LOG.exception(
                "judge view: unexpected error answering %s %s", request.method, request.path
            )
            message = (
                "unexpected error (a bug in judge; the terminal running judge view "
                "has its traceback)"
            )
            status = 500
        if api:
            return web.json_response({"error": message}, status=status)
        page = problem_page(message, token=token)
        return web.Response(text=page, status=status, content_type="text/html")

    return middleware


def make_app(state: ViewState, port: Callable[[], int]) -> web.Application:
    """The viewer's app: the guard first (host, access and write tokens), then errors."""
    app = web.Application(
        client_max_size=MAX_BODY_BYTES,
        middlewares=[guard(state.tokens, port), answers(state.tokens.write)],  # type: ignore[list-item]
    )
    Site(state).add_routes(app)
    Api(state).add_routes(app)
    return app


def bind_error(err: OSError, host: str, port: int) -> ConfigError:
    """Why the viewer cannot listen on host:port, and the fix (exit 2)."""
    if err.errno == errno.EADDRINUSE:
        return ConfigError(
            f"port {port} is in use: another process listens on {host}:{port}",
            hint="pick another with --port N, or let judge view pick a free one with --port 0",
        )
    if err.errno == errno.EACCES and 0 < port < 1024:
        return ConfigError(
            f"port {port} needs privileges (ports below 1024 do)",
            hint="e.g. judge view --port 8650",
        )
    return ConfigError(
        f"cannot listen on {host}:{port}: {err.strerror or err}", hint="check --host and --port"
    )


async def start(state: ViewState, host: str, port: int) -> tuple[web.AppRunner, int]:
    """Start listening; the runner (to clean up) and the bound port."""
    bound: list[int] = [port]
    runner = web.AppRunner(
        make_app(state, lambda: bound[0]), access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT_S
    )
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as err:
        await runner.cleanup()
        raise bind_error(err, host, port) from None
    except BaseException:
        await runner.cleanup()
        raise
    bound[0] = int(runner.addresses[0][1])
    return runner, bound[0]


def new_state(paths: list[Path], host: str, seed: int) -> ViewState:
    """The state of a server over these paths."""
    return ViewState(runs=ServedRuns(paths), tokens=Tokens(host), seed=seed)


async def serve_forever(
    state: ViewState, host: str, port: int, *, on_ready: Callable[[int], None] | None = None
) -> None:
    """Serve in this event loop until cancelled (`judge view` in the foreground)."""
    runner, bound = await start(state, host, port)
    try:
        if on_ready is not None:
            on_ready(bound)
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


class ViewServer:
    """The viewer on its own event loop in a daemon thread (tests, the docs' screenshots)."""

    def __init__(self, paths: list[Path], *, host: str = "127.0.0.1", seed: int = 0) -> None:
        self.host = host
        self.state = new_state(paths, host, seed)
        self.port = 0
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT` (after start)."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> None:
        """Serve in a daemon thread; return once listening (or raise why not)."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            try:
                asyncio.run(self._serve(ready))
            except BaseException as exc:  # handed to start() in the caller's thread
                failure.append(exc)
                ready.set()

        self._thread = threading.Thread(target=run, name="judge-view", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            self._thread = None
            raise failure[0]

    async def _serve(self, ready: threading.Event) -> None:
        runner, self.port = await start(self.state, self.host, 0)
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        ready.set()
        try:
            await self._stop.wait()
        finally:
            await runner.cleanup()

    def stop(self) -> None:
        """Stop serving and wait for the thread; safe to call twice."""
        if self._thread is None or self._loop is None or self._stop is None:
            return
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join()
        self._thread = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
