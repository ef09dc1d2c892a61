"""A copy of a source's rows, to find them again by position: a Parquet file or a hub
dataset has no byte offset to seek a row at, and the sides of `judge pairwise` and `judge
arena` are read back out of order while the run works.

The rows are pickled, one after another, into an anonymous temporary file (in TMPDIR,
unlinked at once: nothing is left behind, whatever ends the process). They are read back
with `os.pread`, which moves no file offset, so the processes of a --workers run, which
share the file after the fork, can read it at once.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from abc import abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from judgecli.errors import DatasetError
from judgecli.inputs.rows import Row, RowSource

LENGTH = 8
"""Bytes of the length before each pickled row."""


class RowCopy:
    """Rows written once, in order, then read back by the offset `add` returned."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._file: IO[bytes] = self._open()
        self._end = 0
        self.complete = False
        """Whether every row of the source is in (a pass that stopped early left a part)."""

    def _open(self) -> IO[bytes]:
        try:
            return tempfile.TemporaryFile(prefix="judge-rows-")
        except OSError as err:
            raise self._failed(err) from None

    def _failed(self, err: OSError) -> DatasetError:
        return DatasetError(
            self._name,
            None,
            f"cannot keep a copy of its rows to read them back: {err.strerror}",
            hint="free some space in the temporary folder, or point TMPDIR at a larger one",
        )

    def add(self, number: int, fields: dict[str, Any]) -> int:
        """Append a row; its offset."""
        data = pickle.dumps((number, fields), protocol=pickle.HIGHEST_PROTOCOL)
        at = self._end
        try:
            self._file.write(len(data).to_bytes(LENGTH, "big") + data)
        except OSError as err:
            raise self._failed(err) from None
        self._end += LENGTH + len(data)
        return at

    def finish(self) -> None:
        """Every row is in: flush them for reading."""
        try:
            self._file.flush()
        except OSError as err:
            raise self._failed(err) from None
        self.complete = True

    def _length(self, at: int) -> int:
        return int.from_bytes(os.pread(self._file.fileno(), LENGTH, at), "big")

    def _row(self, at: int, length: int) -> tuple[int, dict[str, Any]]:
        # Unpickling is safe here: the file is this process's own, unlinked at its making.
        number, fields = pickle.loads(os.pread(self._file.fileno(), length, at + LENGTH))
        return number, fields

    def read(self, at: int) -> tuple[int, dict[str, Any]]:
        """The row at offset `at`: (its number, its fields)."""
        return self._row(at, self._length(at))

    def rows(self) -> Iterator[tuple[int, int, dict[str, Any]]]:
        """Every row in order: (number, offset, fields)."""
        at = 0
        while at < self._end:
            length = self._length(at)
            number, fields = self._row(at, length)
            yield number, at, fields
            at += LENGTH + length

    def close(self) -> None:
        """Let the file go (the system frees its space)."""
        self._file.close()


class CopiedSource(RowSource):
    """A source without byte offsets (Parquet, a hub dataset): `read_rows` reads it in
    order; opened `seekable`, its first whole pass keeps a copy, which later passes and
    `row_at` read.
    """

    def __init__(self, path: Path, name: str, *, seekable: bool) -> None:
        super().__init__(path, name)
        self.seekable = seekable
        self._copy: RowCopy | None = None

    @abstractmethod
    def read_rows(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """Every row of the source itself, in order: (number, fields)."""

    def rows(self) -> Iterator[Row]:  # noqa: D102
        if self._copy is not None and self._copy.complete:
            for number, at, fields in self._copy.rows():
                yield Row(number, at, fields)
            return
        copy = RowCopy(self.name) if self.seekable else None
        if self._copy is not None:
            self._copy.close()
        self._copy = copy
        for number, fields in self.read_rows():
            yield Row(number, copy.add(number, fields) if copy else -1, fields)
        if copy is not None:
            copy.finish()

    def row_at(self, number: int, at: int) -> dict[str, Any]:  # noqa: D102
        if self._copy is None or not self._copy.complete or at < 0:
            raise ValueError(f"{self.name}: row {number} was not kept (open it seekable)")
        return self._copy.read(at)[1]
