"""Labelling sheets for `judge review export`: CSV or JSONL, written whole and atomically,
and the key of the blind pairwise sheets (`RUN_DIR/review-key.json`).

The CSV is UTF-8 with a byte-order mark, which spreadsheets (Excel above all) need to read
non-ASCII text correctly; CSV has no comments, so the rubric's scale is part of the label
column's header: `label (1-4; pass at 3)`. A JSONL row carries it as `label_scale`.

The key stays in the run directory, not beside the sheet, because the sheet travels to
raters and the key must not: it says which of A and B is NEW on every row (by the row's
code) and why the case was picked. Every blind sheet of a run adds its codes to the one
key, so `calibrate --results RUN_DIR/results.jsonl --labels SHEET` finds it by itself.
"""

from __future__ import annotations

import csv
import io
import json
import secrets
from enum import StrEnum
from pathlib import Path
from typing import Any

from judgecli.errors import InputError
from judgecli.inputs.review import KeyEntry, ReviewKey, Sheet
from judgecli.store import RUN_INFO, to_json, write_atomic

REVIEW_KEY = "review-key.json"


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


def write_sheet(
    path: Path, sheet: Sheet, fmt: SheetFormat, *, key: ReviewKey | None = None
) -> Path:
    """Write a new sheet, and first add its codes to the run's key (a blind sheet without
    its key could not be read back); an existing sheet is never replaced (it may hold a
    rater's work).
    """
    if path.exists():
        raise InputError(
            f"{path} already exists (it may hold labels)",
            hint="choose another --out, or delete the old sheet",
        )
    if not path.parent.exists():
        raise InputError(f"{path.parent}: no such directory", hint="create it, or change --out")
    if key is not None and sheet.key:
        codes = {code: vars(entry) for code, entry in (key.codes | sheet.key).items()}
        write_atomic(key.path, to_json({"salt": key.salt, "codes": codes}))
    write_atomic(path, render_sheet(sheet, fmt))
    return path


def review_key(run_dir: Path) -> ReviewKey:
    """The run's key, or a new one (with a fresh salt) when it has none yet."""
    path = run_dir / REVIEW_KEY
    if path.exists():
        return read_review_key(path)
    return ReviewKey(path=path, salt=secrets.token_hex(16), codes={})


def read_review_key(path: Path) -> ReviewKey:
    """A `review-key.json`; InputError naming the file when it is missing or not one."""
    hint = "pass the review-key.json in the directory of the run the sheet was exported from"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        codes = {
            str(code): KeyEntry(id=str(e["id"]), new=e["new"], reasons=tuple(e["reasons"]))
            for code, e in data["codes"].items()
        }
        salt = str(data["salt"])
    except FileNotFoundError:
        raise InputError(f"{path}: no such file", hint=hint) from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise InputError(f"{path}: not a review key ({err})", hint=hint) from None
    if any(entry.new not in ("A", "B") for entry in codes.values()):
        raise InputError(f'{path}: not a review key ("new" must be "A" or "B")', hint=hint)
    return ReviewKey(path=path, salt=salt, codes=codes)


def record_export(run_dir: Path, info: dict[str, Any], entry: dict[str, Any]) -> None:
    """Add an export (its argv, seed and size) to the run's run.json (`info`, as read)
    under `review_exports`.
    """
    exports = [*info.get("review_exports", []), entry]
    write_atomic(run_dir / RUN_INFO, to_json(info | {"review_exports": exports}))
