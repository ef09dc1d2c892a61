"""Carrying the reply cache between machines (shards of one job run on several): `judge
cache export` / `import` as JSON Lines, one `{"key", "model", "created", "reply"}` object a
line, gzipped when the file name ends in `.gz`. An export is written whole to a temporary
sibling and renamed; an import is one transaction (ReplyCache.merge_all), so a bad line
anywhere leaves the cache as it was.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from math import isfinite
from pathlib import Path
from typing import Any

from judgecli.errors import InputError
from judgecli.store.cache import CachedReply

EXPORT_FIELDS = ("key", "model", "created", "reply")
EXPORT_HINT = (
    'each line must be a JSON object {"key": str, "model": str, "created": number, '
    '"reply": str} as `judge cache export` writes it; re-export the file'
)


def write_entries(entries: Iterable[CachedReply], write: Callable[[str], object]) -> int:
    """Entries as JSON lines, each given to `write` (a text stream's write); how many."""
    count = 0
    for entry in entries:
        write(entry.to_json() + "\n")
        count += 1
    return count


def export_entries(entries: Iterable[CachedReply], path: Path) -> int:
    """Entries as JSON lines in `path` (gzipped when it ends in `.gz`), written to a
    temporary sibling and renamed: a failed export leaves no file, or the old one whole.
    Returns how many were written.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with tmp.open("wb") as raw:
            if path.name.endswith(".gz"):
                # mtime=0: the same entries give the same bytes.
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
                    count = write_entries(entries, lambda text: packed.write(text.encode()))
            else:
                count = write_entries(entries, lambda text: raw.write(text.encode()))
            raw.flush()
            os.fsync(raw.fileno())
        tmp.replace(path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise InputError(
            f"cannot write {path}: {err.strerror or err}",
            hint="choose a writable path for the export",
        ) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return count


def read_entries(handle: Iterable[bytes], name: str) -> Iterator[CachedReply]:
    """The entries of an export, read from the lines of a binary stream named `name` (for
    messages); InputError naming `name:line` at the first line that is not one. Blank
    lines are skipped.
    """
    line_no = 0
    try:
        for line_no, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8-sig" if line_no == 1 else "utf-8")
            except UnicodeDecodeError:
                raise InputError(f"{name}:{line_no}: not UTF-8 text", hint=EXPORT_HINT) from None
            if line.strip():
                yield _parse_entry(line, f"{name}:{line_no}")
    except (OSError, EOFError, zlib.error) as err:
        # A .gz that is not gzip (BadGzipFile is an OSError), truncated (EOFError) or corrupt.
        raise InputError(
            f"{name}:{line_no + 1}: cannot be read ({err})",
            hint="the file is truncated, or not what `judge cache export` wrote; re-export it",
        ) from None


def _parse_entry(line: str, where: str) -> CachedReply:
    """One export line, checked field by field."""
    try:
        row: Any = json.loads(line)
    except json.JSONDecodeError as err:
        raise InputError(f"{where}: not JSON ({err.msg})", hint=EXPORT_HINT) from None
    if not isinstance(row, dict):
        raise InputError(f"{where}: a JSON {type(row).__name__}, not an object", hint=EXPORT_HINT)
    missing = [field for field in EXPORT_FIELDS if field not in row]
    if missing:
        raise InputError(f"{where}: missing {', '.join(missing)}", hint=EXPORT_HINT)
    for field in ("key", "model", "reply"):
        if not isinstance(row[field], str) or not row[field]:
            raise InputError(f"{where}: {field} must be a non-empty string", hint=EXPORT_HINT)
    created = row["created"]
    if isinstance(created, bool) or not isinstance(created, int | float) or not isfinite(created):
        raise InputError(f"{where}: created must be a number (a Unix time)", hint=EXPORT_HINT)
    # A reply is replayed as a JudgeReply: at least a JSON object with its text.
    try:
        reply = json.loads(row["reply"])
    except json.JSONDecodeError:
        reply = None
    if not isinstance(reply, dict) or not isinstance(reply.get("text"), str):
        raise InputError(
            f'{where}: reply must be a stored judge reply (JSON text of an object with "text")',
            hint=EXPORT_HINT,
        )
    return CachedReply(row["key"], row["model"], float(created), row["reply"])


@contextmanager
def open_export(path: Path) -> Iterator[io.BufferedIOBase]:
    """An export file opened for reading (gunzipped when its name ends in `.gz`);
    InputError when it cannot be opened.
    """
    try:
        raw = path.open("rb")
    except FileNotFoundError:
        raise InputError(
            f"{path}: no such file", hint="give the path of a `judge cache export` file"
        ) from None
    except OSError as err:
        raise InputError(
            f"{path}: cannot read: {err.strerror or err}",
            hint="give the path of a readable `judge cache export` file",
        ) from None
    with raw:
        if path.name.endswith(".gz"):
            with gzip.GzipFile(fileobj=raw, mode="rb") as packed:
                yield packed
        else:
            yield raw
