"""Tables: CSV (and TSV) files read with the csv module, and Parquet files read with pyarrow
(the `judgecli[parquet]` extra), row by row in bounded memory.

A CSV file is UTF-8 (a BOM is fine) with a header row naming the columns; its rows are
numbered as a spreadsheet numbers them (the header is row 1; a cell may hold line breaks,
so a row may span several lines of the file), and an empty row is skipped. Every cell is
text, and an empty cell is the empty string (an empty answer is data). The list fields are
read from their cell's text (`typed_cells`): `context` is a JSON array of strings when its
cell holds one (else one passage), `messages` must hold JSON.

A Parquet file's values map to the case fields as JSON's do: strings, lists (`context`)
and structs (`messages`' turns); a null is a missing value. It is read a batch of rows at
a time, never whole.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, TypeVar

from judgecli.errors import DatasetError
from judgecli.inputs.copies import CopiedSource
from judgecli.inputs.jsonl import BOM, open_input
from judgecli.inputs.rows import Format, Row, RowSource, require

T = TypeVar("T")
PARQUET_BATCH = 256
"""Rows of a Parquet file decoded at a time: memory holds one batch, whatever the file."""
PARQUET_BUFFER = 1 << 20
"""Bytes read from a Parquet file at a time (pyarrow would otherwise read a whole column
chunk, which in a file written with the defaults is the whole column)."""
CELL_LIMIT = 2**31 - 1
"""The csv module's largest cell (its default, 128 KiB, is less than a long answer)."""
CONVERSATION_SHAPE = '[{"role": "user", "content": "..."}, {"role": "assistant", "content": "..."}]'


class NotUtf8(Exception):
    """A line of a CSV file that is not UTF-8."""


class OffsetLines:
    """A binary file's lines as text for csv.reader (a BOM dropped), counting the bytes
    read: before a row is read, `offset` is where it starts.
    """

    def __init__(self, handle: IO[bytes], offset: int = 0) -> None:
        self._handle = handle
        self.offset = offset

    def __iter__(self) -> OffsetLines:
        return self

    def __next__(self) -> str:
        raw = self._handle.readline()
        if not raw:
            raise StopIteration
        if self.offset == 0 and raw.startswith(BOM):
            raw = raw[len(BOM) :]
            self.offset += len(BOM)
        self.offset += len(raw)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise NotUtf8 from None


class CsvSource(RowSource):
    """A CSV file (or TSV, `delimiter` a tab); a row is found again at its byte offset."""

    def __init__(self, path: Path, *, delimiter: str = ",") -> None:
        super().__init__(path, str(path))
        self.delimiter = delimiter
        self.format = Format.TSV if delimiter == "\t" else Format.CSV
        self._header: list[str] | None = None

    def records(self, handle: IO[bytes], offset: int = 0) -> Iterator[tuple[int, int, list[str]]]:
        """(row number, byte offset, cells) of each record from `offset` on (the header is
        row 1 when read from the start), a blank line included: it is a row in a sheet.
        """
        handle.seek(offset)
        lines = OffsetLines(handle, offset)
        csv.field_size_limit(max(csv.field_size_limit(), CELL_LIMIT))
        # Strict: a quote never closed would otherwise take the rest of the file into one
        # cell, and the rows after it would be lost without a word.
        reader = csv.reader(lines, delimiter=self.delimiter, strict=True)
        number = 0
        while True:
            at = lines.offset
            number += 1
            try:
                cells = next(reader)
            except StopIteration:
                return
            except NotUtf8:
                raise self.error(
                    number, "not UTF-8", hint="save the file as UTF-8 (in Excel: CSV UTF-8)"
                ) from None
            except csv.Error as err:
                problem, hint = csv_problem(err)
                raise self.error(number, problem, hint=hint) from None
            yield number, at, cells

    def rows(self) -> Iterator[Row]:  # noqa: D102
        with open_input(self.path, "rb") as handle:
            records = self.records(handle)
            first = next(records, None)
            if first is None:
                return
            header = self.header(first[2])
            for number, at, cells in records:
                if any(cell.strip() for cell in cells):
                    yield Row(number, at, self.fields(number, header, cells))

    def row_at(self, number: int, at: int) -> dict[str, Any]:  # noqa: D102
        with open_input(self.path, "rb") as handle:
            if self._header is None:
                self.header(next(self.records(handle))[2])
            _, _, cells = next(self.records(handle, at))
        return self.fields(number, self._header or [], cells)

    def header(self, cells: list[str]) -> list[str]:
        """The column names of row 1 (spaces around a name dropped), checked."""
        names = [cell.strip() for cell in cells]
        seen: dict[str, int] = {}
        for column, name in enumerate(names, start=1):
            if name and name in seen:
                raise self.error(
                    1,
                    f'the column "{name}" is there twice (columns {seen[name]} and {column})',
                    hint="rename one of them: each column is one field of the cases",
                )
            seen[name] = column
        self._header = names
        return names

    def fields(self, number: int, header: list[str], cells: list[str]) -> dict[str, Any]:
        """A row's cells by column name; its cells must match the header's columns."""
        extra = cells[len(header) :]
        if len(cells) < len(header) or any(cell.strip() for cell in extra):
            sep = "a tab" if self.delimiter == "\t" else "a comma"
            raise self.error(
                number,
                f"{len(cells)} cells, but the header has {len(header)} columns",
                hint=f"a cell holding a line break or {sep} must be in double quotes",
            )
        found: dict[str, Any] = {}
        for column, (name, cell) in enumerate(zip(header, cells, strict=False), start=1):
            if name:
                found[name] = cell
            elif cell.strip():
                raise self.error(
                    number,
                    f"a value in column {column}, which has no name in the header",
                    hint="name the column in row 1, or delete it",
                )
        return found


def csv_problem(err: csv.Error) -> tuple[str, str]:
    """What is wrong with a row the csv module cannot read, and the fix."""
    doubled = 'a quote inside a quoted cell is written twice ("")'
    if "unexpected end of data" in str(err):
        return "a quoted cell is never closed (the file ends inside it)", f"close it; {doubled}"
    if "expected after" in str(err):
        return "text after the closing quote of a cell", doubled
    return f"not valid CSV ({err})", doubled


def typed_cells(
    source: RowSource, number: int, values: dict[str, Any], field_map: Mapping[str, str]
) -> None:
    """A table row's list fields read from their text, in place: `context` from a JSON
    array of strings when its cell holds one (else the text is one passage), `messages`
    from JSON (an empty cell: no conversation; beside a conversation, empty `input` and
    `output` cells are no fields), and an agent's `tools` and `expected_tool_calls` and a
    checklist's `rubric_items` from JSON (an empty cell: none given).
    """
    for name in ("tools", "expected_tool_calls", "rubric_items"):
        cell = values.get(name)
        if isinstance(cell, str):
            values[name] = json_cell(source, number, field_map.get(name, name), cell)
    context = values.get("context")
    if isinstance(context, str) and context.lstrip().startswith("["):
        try:
            passages = json.loads(context)
        except json.JSONDecodeError:
            passages = None
        if isinstance(passages, list):
            values["context"] = passages
    messages = values.get("messages")
    if isinstance(messages, str):
        if not messages.strip():
            values["messages"] = None
            return
        try:
            values["messages"] = json.loads(messages)
        except json.JSONDecodeError as err:
            key = field_map.get("messages", "messages")
            raise source.error(
                number,
                f'"{key}" is not JSON ({err.msg}, character {err.pos + 1} of the cell)',
                hint=f"write the conversation in its cell as JSON: {CONVERSATION_SHAPE}",
            ) from None
        # A table with conversations and single-turn cases has both kinds of columns: the
        # input and output cells a conversation leaves empty are not there.
        for name in ("input", "output"):
            if values.get(name) == "":
                del values[name]


def json_cell(source: RowSource, number: int, key: str, cell: str) -> Any:
    """A cell holding JSON, read (an empty cell: None), or DatasetError naming the row."""
    if not cell.strip():
        return None
    try:
        return json.loads(cell)
    except json.JSONDecodeError as err:
        raise source.error(
            number,
            f'"{key}" is not JSON ({err.msg}, character {err.pos + 1} of the cell)',
            hint=f'write "{key}" in its cell as a JSON list',
        ) from None


class ParquetSource(CopiedSource):
    """A Parquet file, read a batch at a time (pyarrow)."""

    format = Format.PARQUET

    def __init__(self, path: Path, *, seekable: bool = False) -> None:
        super().__init__(path, str(path), seekable=seekable)
        self._pa = require("pyarrow", package="pyarrow", extra="parquet", reading=self.name)
        self._pq = require("pyarrow.parquet", package="pyarrow", extra="parquet", reading=self.name)

    def read_rows(self) -> Iterator[tuple[int, dict[str, Any]]]:  # noqa: D102
        broken = (self._pa.ArrowException, OSError)
        if self.path.is_dir():
            raise self.error(
                None,
                "is a folder (a partitioned Parquet dataset?), not a file",
                hint="write the cases as one Parquet file, or give one file of the folder",
            )
        open_input(self.path, "rb").close()  # "no such file", "cannot read": as for JSONL
        try:
            table = self._pq.ParquetFile(
                str(self.path), pre_buffer=False, buffer_size=PARQUET_BUFFER
            )
        except broken as err:
            raise self.error(
                None,
                f"not a Parquet file, or one cut short ({first_line(err)})",
                hint="write it again (pyarrow, or pandas' DataFrame.to_parquet); a CSV file "
                "is named .csv, a JSONL file .jsonl",
            ) from None
        number = 0

        def failed(err: BaseException) -> DatasetError:
            return self.error(
                None,
                unreadable(number, err),
                hint="the file is damaged or cut short: write it again",
            )

        with table:
            batches = table.iter_batches(batch_size=PARQUET_BATCH, use_threads=False)
            for batch in read_each(batches, broken=broken, failed=failed):
                for fields in batch.to_pylist():
                    number += 1
                    yield number, fields


def read_each(
    items: Iterator[T],
    *,
    broken: type[BaseException] | tuple[type[BaseException], ...],
    failed: Callable[[BaseException], DatasetError],
) -> Iterator[T]:
    """Each item of a library's iterator; an error of the `broken` kinds while it reads the
    next one is the DatasetError `failed` makes of it (a library reads rows in batches, so
    the row at fault is not known: the message names the last row read).
    """
    while True:
        try:
            item = next(items)
        except StopIteration:
            return
        except broken as err:
            raise failed(err) from None
        yield item


def unreadable(number: int, err: BaseException) -> str:
    """A source that failed after `number` good rows, in words."""
    rows = f"the rows after row {number}" if number else "its rows"
    return f"cannot read {rows} ({first_line(err)})"


def first_line(err: BaseException) -> str:
    """The first line of an error's message (a library's may run on for lines)."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
