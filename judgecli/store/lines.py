"""results.jsonl open for appending, whole lines only.

A line is written with os.write and its file cut back to the last whole line if the write
fails (no space left, a quota): the file never ends in half a line, and a resume finds what
it holds intact. Lines may wait in a buffer of this process until the next flush (see
RunStore.append_result for which may).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

FLUSH_BYTES = 64 * 1024
"""Buffered lines are written at the latest once they reach this size."""


class LineFile:
    """A file appended to a whole line at a time (the only writer: the run's lock)."""

    def __init__(self, path: Path) -> None:
        """Open (or create) `path` for appending; OSError if the file system refuses."""
        self.path = path
        self._descriptor: int | None = os.open(
            path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644
        )
        self._end = os.fstat(self._descriptor).st_size
        """Where the last line written whole ends."""
        self._pending: list[bytes] = []
        self._pending_bytes = 0

    def append(self, line: str, *, flush: bool) -> None:
        """Add a line (ending in a newline); written now if `flush` or the buffer is full.
        OSError if the write fails: the file then ends where it did before the write, and
        the buffered lines are dropped.
        """
        data = line.encode("utf-8")
        self._pending.append(data)
        self._pending_bytes += len(data)
        if flush or self._pending_bytes >= FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write the buffered lines to the OS (OSError as for `append`)."""
        if not self._pending or self._descriptor is None:
            return
        data = memoryview(b"".join(self._pending))
        size = len(data)
        self._pending.clear()
        self._pending_bytes = 0
        try:
            while data:
                data = data[os.write(self._descriptor, data) :]
        except OSError:
            self.cut()
            raise
        self._end += size

    def cut(self) -> None:
        """Cut a part-written line off the end (best effort: a resume cuts it too)."""
        if self._descriptor is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._descriptor, self._end)

    def close(self) -> None:
        """Write what is buffered, sync it to disk and close (OSError if that fails; the
        file is closed either way).
        """
        if self._descriptor is None:
            return
        try:
            self.flush()
            os.fsync(self._descriptor)
        finally:
            os.close(self._descriptor)
            self._descriptor = None

    def abandon(self) -> None:
        """Close without writing what is buffered (after a failed write)."""
        self._pending.clear()
        self._pending_bytes = 0
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None
