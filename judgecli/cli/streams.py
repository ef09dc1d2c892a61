"""stdout that outlives its reader.

`judge report RUN | head`, `judge pairwise ... | grep PASS`: the reader may close the pipe
before judge has written everything. Python then raises BrokenPipeError on the next write or
flush, and click turns that into exit 1 — which CI reads as "the gate failed". The outcome
of a run does not depend on who reads its tables, so once the reader is gone the rest of
the output goes to /dev/null and the command exits with its own code.
"""

from __future__ import annotations

import os
from typing import Any, TextIO


class PipeSafe:
    """A text stream that stops writing, silently, when its reader is gone."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        """Write, unless the reader left."""
        if not self.gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._leave()
        return len(text)

    def flush(self) -> None:
        """Flush, unless the reader left."""
        if not self.gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._leave()

    def _leave(self) -> None:
        self.gone = True
        # What is still buffered would be flushed at interpreter exit and fail again
        # ("Exception ignored ... BrokenPipeError", exit 120): send it to /dev/null.
        try:
            fd = self._stream.fileno()
        except (AttributeError, OSError, ValueError):
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def pipe_safe(stream: TextIO) -> TextIO:
    """`stream` wrapped in PipeSafe (once)."""
    return stream if isinstance(stream, PipeSafe) else PipeSafe(stream)  # type: ignore[return-value]
