"""The reply cache: SQLite (stdlib, WAL) from request hash to a validated judge reply.

An identical request is never paid twice: a re-run, a resume, or another run that asks the
same judge the same thing is answered from here. Only replies that parsed into a valid
verdict are stored (a malformed reply must be asked again, not replayed). WAL mode lets two
runs share the file; `synchronous=NORMAL` loses at most the last commits on power loss,
never on a crash of this process, and never corrupts the file.

`judge cache export` / `import` carry replies between machines (shards of one job run on
several) as JSON Lines, one `{"key", "model", "created", "reply"}` object a line, gzipped
when the file name ends in `.gz`. An export is written whole to a temporary sibling and
renamed; an import is one transaction, so a bad line anywhere leaves the cache as it was.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import sqlite3
import time
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from math import isfinite
from pathlib import Path
from typing import Any

from judgecli.errors import InputError

SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    created REAL NOT NULL,
    reply TEXT NOT NULL
) WITHOUT ROWID
"""
CACHE_FILE = "replies.sqlite"
EXPORT_FIELDS = ("key", "model", "created", "reply")
EXPORT_HINT = (
    'each line must be a JSON object {"key": str, "model": str, "created": number, '
    '"reply": str} as `judge cache export` writes it; re-export the file'
)


# Opening: how often, and how far apart, a lock held by another process opening the same
# file (--workers, two runs starting together) is waited out.
SET_UP_TRIES = 50
SET_UP_WAIT_S = 0.1


def set_up(db: sqlite3.Connection) -> None:
    """WAL mode, NORMAL sync and the table. Switching to WAL takes a lock SQLite does not
    wait for (no busy timeout), so processes opening a new cache file together get
    "database is locked": the setting is kept in the file, so it is skipped once made, and
    a lock is waited out a few seconds before it counts as an error.
    """
    for attempt in range(SET_UP_TRIES):
        try:
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(SCHEMA)
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or attempt == SET_UP_TRIES - 1:
                raise
            time.sleep(SET_UP_WAIT_S)


@dataclass(frozen=True)
class CacheStats:
    """What the cache holds."""

    path: Path
    entries: int
    size_bytes: int
    models: dict[str, int]


@dataclass(frozen=True)
class CachedReply:
    """One cache entry, as `judge cache export` writes it and `import` reads it."""

    key: str
    model: str
    created: float
    reply: str

    def to_json(self) -> str:
        """The entry as one JSON line (without the newline)."""
        return json.dumps(
            {"key": self.key, "model": self.model, "created": self.created, "reply": self.reply},
            ensure_ascii=False,
        )


@dataclass(frozen=True)
class MergeCount:
    """What an import did: entries added, and entries whose key the cache already held."""

    added: int
    already: int


class ReplyCache:
    """A handle on the cache file; one per run (sqlite3 connections are per thread)."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / CACHE_FILE
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            set_up(self._db)
        except (OSError, sqlite3.Error) as err:
            raise InputError(
                f"cannot open the reply cache {self.path}: {err}",
                hint="set JUDGE_CACHE_DIR to a writable folder, or pass --no-cache",
            ) from None

    def get(self, key: str) -> str | None:
        """The stored reply (JSON text) for a request hash, or None."""
        row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, model: str, reply: str) -> None:
        """Store a validated reply (first writer wins when two runs race)."""
        self._db.execute(
            "INSERT OR IGNORE INTO replies (key, model, created, reply) VALUES (?, ?, ?, ?)",
            (key, model, time.time(), reply),
        )

    def stats(self) -> CacheStats:
        """Entry counts per model and the file size."""
        models = dict(self._db.execute("SELECT model, COUNT(*) FROM replies GROUP BY model"))
        size = sum(p.stat().st_size for p in self.path.parent.glob(f"{CACHE_FILE}*"))
        return CacheStats(
            path=self.path, entries=sum(models.values()), size_bytes=size, models=models
        )

    def clear(self) -> int:
        """Delete every entry; returns how many there were."""
        count = int(self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])
        self._db.execute("DELETE FROM replies")
        self._db.execute("VACUUM")
        return count

    def entries(self, models: Collection[str] = ()) -> Iterator[CachedReply]:
        """Every entry (only those of `models` when given), oldest first."""
        query = "SELECT key, model, created, reply FROM replies"
        wanted = sorted(set(models))
        if wanted:
            query += f" WHERE model IN ({', '.join('?' * len(wanted))})"
        query += " ORDER BY created, key"
        for key, model, created, reply in self._db.execute(query, wanted):
            yield CachedReply(str(key), str(model), float(created), str(reply))

    def merge(self, entries: Iterable[CachedReply]) -> MergeCount:
        """Add the entries whose key is new, in one transaction (see merge_all)."""
        return self.merge_all([entries])[0]

    def merge_all(self, sources: Iterable[Iterable[CachedReply]]) -> list[MergeCount]:
        """Add the entries of every source whose key is new, all in one transaction, and
        count per source. An entry whose key the cache (or an earlier entry) already holds
        is left as it is: first writer wins. Whatever a source raises while being read (a
        bad line, a missing file) rolls everything back: the cache is then as it was.
        """
        counts: list[MergeCount] = []
        with self._transaction():
            for entries in sources:
                before = self._db.total_changes
                seen = 0
                batch: list[tuple[str, str, float, str]] = []
                for entry in entries:
                    batch.append((entry.key, entry.model, entry.created, entry.reply))
                    seen += 1
                    if len(batch) == 1000:
                        self._insert(batch)
                        batch.clear()
                self._insert(batch)
                added = self._db.total_changes - before
                counts.append(MergeCount(added=added, already=seen - added))
        return counts

    def _insert(self, rows: list[tuple[str, str, float, str]]) -> None:
        """Insert rows whose key is new (inside the caller's transaction)."""
        self._db.executemany(
            "INSERT OR IGNORE INTO replies (key, model, created, reply) VALUES (?, ?, ?, ?)",
            rows,
        )

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction: committed when the block ends, rolled back when it raises.

        IMMEDIATE takes the write lock up front (waiting for it, like every write here, up
        to the connection's timeout), so a merge never fails half-way on a lock.
        """
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        """Close the connection."""
        self._db.close()


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
