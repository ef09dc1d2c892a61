"""Which reader reads a dataset: picked by its name (rows.py's docstring lists them), so
that the readers of cases, pairs and labels open any format with one call.
"""

from __future__ import annotations

from pathlib import Path

from judgecli.inputs.hub import HubSource
from judgecli.inputs.jsonl import ANY_EXAMPLE
from judgecli.inputs.otel import OtelSource
from judgecli.inputs.rows import DataPath, Format, JsonlSource, RowSource, format_of, hub_text
from judgecli.inputs.tables import CsvSource, ParquetSource


def open_rows(
    path: DataPath | RowSource, *, example: str = ANY_EXAMPLE, seekable: bool = False
) -> RowSource:
    """The dataset at `path` as a row source, its reader picked by the name; with
    `seekable`, every row's `at` finds it again. ConfigError (exit 2) when the reader's
    optional extra is not installed. An open source is returned as is.
    """
    if isinstance(path, RowSource):
        return path
    kind = format_of(path)
    if kind is Format.HUB:
        return HubSource(hub_text(path) or "")
    file = Path(path)
    if kind is Format.JSONL:
        return JsonlSource(file, example=example)
    if kind is Format.PARQUET:
        return ParquetSource(file, seekable=seekable)
    if kind is Format.OTEL:
        return OtelSource(file, seekable=seekable)
    return CsvSource(file, delimiter="\t" if kind is Format.TSV else ",")
