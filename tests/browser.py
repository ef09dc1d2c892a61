"""A headless Chromium for tests that look at a page as a person would, driven over the
Chrome DevTools Protocol (CDP) with aiohttp's websocket client: no browser driver, no new
dependency. Debian's `chromium` package provides the browser (`make browser` installs it).

    with launch(find_chromium(), tmp_path / "profile") as port:
        async with await Page.open(port) as page:
            await page.navigate(path.as_uri())
            errors = page.errors

Every wait has a deadline, and the browser's whole process group ends when `launch` exits.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import struct
import subprocess
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Self

import aiohttp

CHROMIUM = Path("/usr/bin/chromium")
"""Where Debian's package puts the browser."""
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--mute-audio",
    "--force-color-profile=srgb",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
]
START_TIMEOUT_S = 15.0
CALL_TIMEOUT_S = 10.0
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class BrowserError(Exception):
    """Chromium did not start, or a CDP call failed or timed out."""


def find_chromium() -> Path | None:
    """Debian's chromium, else one on PATH, else None."""
    if CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    return Path(found) if found else None


@contextlib.contextmanager
def launch(
    executable: Path,
    profile: Path,
    *,
    window: tuple[int, int] = (1280, 900),
    timeout: float = START_TIMEOUT_S,
) -> Iterator[int]:
    """Start headless Chromium with a fresh profile; yield its DevTools port on 127.0.0.1.

    The port is read from `<profile>/DevToolsActivePort` (the browser picks a free one for
    `--remote-debugging-port=0`). The browser runs in a session of its own, so its whole
    process group (renderers, GPU and zygote processes) is ended on exit, whatever happened.
    """
    profile.mkdir(parents=True, exist_ok=True)
    log = profile.parent / f"{profile.name}.log"
    argv = [
        str(executable),
        *FLAGS,
        f"--user-data-dir={profile}",
        f"--window-size={window[0]},{window[1]}",
        "about:blank",
    ]
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr, start_new_session=True
        )
    try:
        yield wait_for_port(process, profile / "DevToolsActivePort", log, timeout)
    finally:
        stop(process)


def wait_for_port(process: subprocess.Popen[bytes], path: Path, log: Path, timeout: float) -> int:
    """The port Chromium wrote to DevToolsActivePort, or BrowserError with its log's tail."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BrowserError(f"chromium exited with {process.returncode}:\n{tail(log)}")
        with contextlib.suppress(FileNotFoundError, ValueError, IndexError):
            return int(path.read_text().splitlines()[0])
        time.sleep(0.05)
    raise BrowserError(f"chromium wrote no {path.name} within {timeout:.0f} s:\n{tail(log)}")


def tail(log: Path, lines: int = 20) -> str:
    """The end of the browser's own output, for an error message."""
    with contextlib.suppress(OSError):
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    return ""


def stop(process: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    """End the browser, then whatever is left of its process group.

    SIGTERM goes to the browser alone first: it shuts down its renderers and reaps them.
    Signalling the whole group at once can let the browser exit before its children, which
    then become orphans that a container's init may never reap. After `grace` seconds (or
    once the browser is gone) SIGKILL ends anything still in the group.
    """
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # start_new_session: the group's id is the pid
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace)


class Page:
    """One page target over its websocket: commands with deadlines, and the console errors,
    uncaught exceptions and error log entries it has seen since `enable`.
    """

    def __init__(self, session: aiohttp.ClientSession, ws: aiohttp.ClientWebSocketResponse):
        self.session = session
        self.ws = ws
        self.errors: list[str] = []
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.waiters: dict[str, list[asyncio.Future[dict[str, Any]]]] = {}
        self.reader = asyncio.create_task(self.read())

    @classmethod
    async def open(cls, port: int, *, timeout: float = CALL_TIMEOUT_S) -> Self:
        """Attach to the browser's first page (opening one if there is none) and enable
        the Page, Runtime and Log domains, so errors from the first navigation are seen."""
        session = aiohttp.ClientSession(base_url=f"http://127.0.0.1:{port}")
        try:
            async with asyncio.timeout(timeout):
                async with session.get("/json/list") as reply:
                    targets = [t for t in await reply.json() if t.get("type") == "page"]
                if not targets:  # /json/new takes PUT since Chrome 111
                    async with session.put("/json/new?about:blank") as reply:
                        targets = [await reply.json()]
                ws = await session.ws_connect(targets[0]["webSocketDebuggerUrl"], max_msg_size=0)
        except BaseException:
            await session.close()
            raise
        page = cls(session, ws)
        for domain in ("Page", "Runtime", "Log"):
            await page.send(f"{domain}.enable")
        return page

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the websocket and the HTTP session (the browser stays up for `launch`)."""
        self.reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError, aiohttp.ClientError):
            async with asyncio.timeout(CALL_TIMEOUT_S):
                await self.reader
        with contextlib.suppress(asyncio.TimeoutError, aiohttp.ClientError):
            async with asyncio.timeout(CALL_TIMEOUT_S):
                await self.ws.close()
        await self.session.close()

    async def read(self) -> None:
        """Route replies to their commands and events to `on_event`, until the socket ends."""
        try:
            async for message in self.ws:
                if message.type is not aiohttp.WSMsgType.TEXT:
                    continue
                data = json.loads(message.data)
                if "id" in data:
                    future = self.pending.pop(data["id"], None)
                    if future is not None and not future.done():
                        future.set_result(data)
                else:
                    self.on_event(data["method"], data.get("params", {}))
        finally:
            gone = BrowserError("the DevTools connection closed")
            for future in [*self.pending.values(), *itertools.chain(*self.waiters.values())]:
                if not future.done():
                    future.set_exception(gone)

    def on_event(self, method: str, params: dict[str, Any]) -> None:
        """Keep what a person would see as an error in the console; wake event waiters."""
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            args = params.get("args", [])
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in args)
            self.errors.append(f"console.{params['type']}: {text}")
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            thrown = details.get("exception", {}).get("description") or details.get("text", "")
            self.errors.append(f"uncaught exception: {thrown}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            self.errors.append(
                f"log ({entry.get('source')}): {entry.get('text')} {entry.get('url', '')}"
            )
        for future in self.waiters.pop(method, []):
            if not future.done():
                future.set_result(params)

    async def send(
        self, method: str, timeout: float = CALL_TIMEOUT_S, **params: Any
    ) -> dict[str, Any]:
        """One CDP command; its result, or BrowserError for a protocol error or a time-out."""
        number = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[number] = future
        try:
            async with asyncio.timeout(timeout):
                await self.ws.send_str(
                    json.dumps({"id": number, "method": method, "params": params})
                )
                reply = await future
        except TimeoutError:
            raise BrowserError(f"{method}: no reply within {timeout:.0f} s") from None
        finally:
            self.pending.pop(number, None)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error'].get('message')}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    def expect(self, event: str) -> asyncio.Future[dict[str, Any]]:
        """A future for the next `event`; create it before the command that causes it."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiters.setdefault(event, []).append(future)
        return future

    async def navigate(self, url: str, timeout: float = CALL_TIMEOUT_S) -> None:
        """Go to `url` and wait for its load event."""
        loaded = self.expect("Page.loadEventFired")
        result = await self.send("Page.navigate", timeout, url=url)
        if result.get("errorText"):
            raise BrowserError(f"navigating to {url}: {result['errorText']}")
        try:
            async with asyncio.timeout(timeout):
                await loaded
        except TimeoutError:
            raise BrowserError(f"{url} did not finish loading within {timeout:.0f} s") from None

    async def evaluate(self, expression: str, timeout: float = CALL_TIMEOUT_S) -> Any:
        """The value of a JavaScript expression in the page (awaited if it is a promise)."""
        result = await self.send(
            "Runtime.evaluate",
            timeout,
            expression=expression,
            returnByValue=True,
            awaitPromise=True,
            userGesture=True,
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            thrown = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"{expression!r} threw: {thrown}")
        return result["result"].get("value")

    async def type_text(self, text: str) -> None:
        """Type into the focused element as a keyboard would (fires `input` events)."""
        await self.send("Input.insertText", text=text)

    async def screenshot(self, *, full_page: bool = True) -> bytes:
        """A PNG of the viewport, or of the whole page's content."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = (await self.send("Page.getLayoutMetrics"))["cssContentSize"]
            params["clip"] = {
                "x": 0,
                "y": 0,
                "width": size["width"],
                "height": size["height"],
                "scale": 1,
            }
            params["captureBeyondViewport"] = True
        return base64.b64decode((await self.send("Page.captureScreenshot", **params))["data"])


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk; ValueError if it is not a PNG."""
    if not png.startswith(PNG_SIGNATURE) or png[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def png_distinct_bytes(png: bytes) -> int:
    """How many distinct byte values the PNG's decompressed image data holds: a blank or
    single-colour picture has a handful, a page with text and charts nearly all 256."""
    data, at = bytearray(), len(PNG_SIGNATURE)
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind = png[at + 4 : at + 8]
        if kind == b"IDAT":
            data += png[at + 8 : at + 8 + length]
        at += 12 + length
    return len(set(zlib.decompress(bytes(data))))
