"""Labelling sheets for `judge review export`: CSV or JSONL, written whole and atomically.

The CSV is UTF-8 with a byte-order mark, which spreadsheets (Excel above all) need to read
non-ASCII text correctly; CSV has no comments, so the rubric's scale is part of the label
column's header: `label (1-4; pass at 3)`. A JSONL row carries it as `label_scale`.
"""

from __future__ import annotations

import csv
import io
import json
from enum import StrEnum
from pathlib import Path
from typing import Any

from judgecli.errors import InputError
from judgecli.review import Sheet
from judgecli.store import RUN_INFO, to_json, write_atomic


class SheetFormat(StrEnum):
    """The file format of a labelling sheet."""

    CSV = "csv"
    JSONL = "jsonl"


def render_sheet(sheet: Sheet, fmt: SheetFormat) -> str:
    """The sheet as file text."""
    if fmt is SheetFormat.JSONL:
        note = {"label_scale": sheet.label_note} if sheet.label_note else {}
        return "".join(
            json.dumps(
                {k: (None if k in {"label", "annotator"} else row[k]) for k in sheet.columns}
                | note,
                ensure_ascii=False,
            )
            + "\n"
            for row in sheet.rows
        )
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    header = [
        f"label ({sheet.label_note})" if c == "label" and sheet.label_note else c
        for c in sheet.columns
    ]
    writer.writerow(header)
    writer.writerows([row[c] for c in sheet.columns] for row in sheet.rows)
    return "\ufeff" + buffer.getvalue()


def write_sheet(path: Path, sheet: Sheet, fmt: SheetFormat) -> Path:
    """Write a new sheet; an existing file is never replaced (it may hold a rater's work)."""
    if path.exists():
        raise InputError(f"{path} already exists (it may hold labels)",
                         hint="choose another --out, or delete the old sheet")  # fmt: skip
    if not path.parent.exists():
        raise InputError(f"{path.parent}: no such directory", hint="create it, or change --out")
    write_atomic(path, render_sheet(sheet, fmt))
    return path


def record_export(run_dir: Path, info: dict[str, Any], entry: dict[str, Any]) -> None:
    """Add an export (its argv, seed and size) to the run's run.json (`info`, as read)
    under `review_exports`.
    """
    exports = [*info.get("review_exports", []), entry]
    write_atomic(run_dir / RUN_INFO, to_json(info | {"review_exports": exports}))
