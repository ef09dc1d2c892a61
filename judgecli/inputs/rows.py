"""Row sources: a case file of any format as numbered rows of fields, so that the readers of
cases, pairs and labels (dataset.py, pairs.py, labels.py) never see the format.

A dataset is named by a path, its format by the suffix, and sources.open_rows opens it with
its reader (docs/usage.md, "CSV, Parquet and Hugging Face datasets"):

* `.csv` and `.tsv`: a table with a header row (tables.py, the csv module);
* `.parquet` (or `.pq`): a Parquet file, read in batches (tables.py, pyarrow: the
  `judgecli[parquet]` extra);
* `hf://owner/name[/config][@revision][:split]`: a Hugging Face dataset, streamed (hub.py,
  the `datasets` library: the `judgecli[hf]` extra);
* `.otel.json` or `.otlp.json` (also `.jsonl`): an OpenTelemetry export of GenAI spans, one
  case per trace (otel.py);
* anything else: JSON Lines (jsonl.py).

Every source yields `Row`s: the number a message names the row by (a JSONL line, a CSV
row as a spreadsheet shows it, a Parquet or hub row counted from 1) and where to find it
again (`RowSource.row_at`: the sides of `judge pairwise` and `judge arena` are read back
out of order while the run works). A JSONL or CSV row is found again at its byte offset in
the file; a Parquet or hub row has none, so a source opened `seekable` keeps a copy of the
rows it read (copies.py) and finds them there.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import ModuleType
from typing import Any

from judgecli.errors import ConfigError, DatasetError
from judgecli.inputs.jsonl import ANY_EXAMPLE, iter_lines, parse_object, read_line_at

HUB_SCHEME = "hf://"
DataPath = Path | str
"""A dataset as a command line names it: a file, or `hf://...` (as a str, or as the Path
typer makes of it, whose `//` is folded to `/`: `hf:/owner/name`)."""


class Format(StrEnum):
    """The formats a dataset may have."""

    JSONL = "jsonl"
    CSV = "csv"
    TSV = "tsv"
    PARQUET = "parquet"
    HUB = "hf"
    OTEL = "otel"

    @property
    def text_cells(self) -> bool:
        """Whether every value is a string (a table's cells), so that a list field is read
        from the text of its cell (tables.typed_cells).
        """
        return self in (Format.CSV, Format.TSV)


OTEL_SUFFIXES = (".otel.json", ".otlp.json", ".otel.jsonl", ".otlp.jsonl")
"""The names of OpenTelemetry exports of GenAI spans (otel.py)."""
SUFFIXES = {
    ".csv": Format.CSV,
    ".tsv": Format.TSV,
    ".parquet": Format.PARQUET,
    ".pq": Format.PARQUET,
}


@dataclass(frozen=True)
class Row:
    """One row of a source: its number, where it is found again, and its fields."""

    number: int
    """Its number in messages: a JSONL line, a CSV row as a spreadsheet numbers it (the
    header is row 1), a Parquet or hub row counted from 1."""
    at: int
    """Where `RowSource.row_at` finds it again: a byte offset in the file or in its copy
    (-1: nowhere, the source was not opened seekable)."""
    fields: dict[str, Any]


class RowSource(ABC):
    """A dataset read as rows. `name` is how messages name it; `unit` what they call a row
    ("line" of a JSONL file, "row" of a table); `format` what it is.
    """

    format: Format
    unit = "row"

    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self.name = name

    @abstractmethod
    def rows(self) -> Iterator[Row]:
        """Every row, in order (a blank line or an empty table row is no row); a problem is
        a DatasetError naming the row.
        """

    @abstractmethod
    def row_at(self, number: int, at: int) -> dict[str, Any]:
        """The fields of row `number`, found at `at` (as an earlier `rows` gave them)."""

    def error(self, number: int | None, problem: str, *, hint: str | None = None) -> DatasetError:
        """A DatasetError naming this source and the row (`data.csv:17: ...`)."""
        return DatasetError(self.name, number, problem, hint=hint)

    def same_as(self, other: RowSource) -> bool:
        """Whether two sources are one dataset (a file through links or `./` too)."""
        try:
            return self.path.samefile(other.path)
        except OSError:
            return False


class JsonlSource(RowSource):
    """A JSON Lines file (jsonl.py); `example` is a good line of its kind, for hints."""

    format = Format.JSONL
    unit = "line"

    def __init__(self, path: Path, *, example: str = ANY_EXAMPLE) -> None:
        super().__init__(path, str(path))
        self.example = example

    def rows(self) -> Iterator[Row]:  # noqa: D102
        for number, offset, text in iter_lines(self.path):
            yield Row(number, offset, parse_object(self.path, number, text, example=self.example))

    def row_at(self, number: int, at: int) -> dict[str, Any]:  # noqa: D102
        text = read_line_at(self.path, number, at)
        return parse_object(self.path, number, text, example=self.example)


def hub_text(path: DataPath) -> str | None:
    """`hf://owner/name...` when `path` names a Hugging Face dataset (also as the Path typer
    makes of it, `hf:/owner/name`), else None.
    """
    text = str(path)
    if text.startswith(HUB_SCHEME):
        return text
    return HUB_SCHEME + text[len("hf:/") :] if text.startswith("hf:/") else None


def shown(path: DataPath) -> str:
    """A dataset's name as a person wrote it: a file's path, or `hf://owner/name`."""
    return hub_text(path) or str(path)


def anchored(path: Path, cwd: Path) -> Path:
    """A dataset's path as seen from `cwd` (a hub dataset is the same from anywhere)."""
    return path if hub_text(path) else cwd / path


def resolved(path: Path) -> Path:
    """A dataset's absolute path (a hub dataset's name as it is)."""
    return path if hub_text(path) else path.resolve()


def format_of(path: DataPath) -> Format:
    """The format a dataset's name says it has."""
    if hub_text(path):
        return Format.HUB
    if Path(path).name.lower().endswith(OTEL_SUFFIXES):
        return Format.OTEL
    return SUFFIXES.get(Path(path).suffix.lower(), Format.JSONL)


def require(module: str, *, package: str, extra: str, reading: str) -> ModuleType:
    """`module`, imported, or a ConfigError (exit 2, before anything is called) saying
    which extra installs it. A folder of the module's name in the current directory (a
    project's own `datasets/`) imports as an empty namespace package: that is missing too.
    """
    try:
        found: ModuleType | None = importlib.import_module(module)
    except ImportError:
        found = None
    if found is None or getattr(found, "__file__", None) is None:
        raise ConfigError(
            f"reading {reading} needs {package}",
            hint=f"pip install 'judgecli[{extra}]'",
        )
    return found
