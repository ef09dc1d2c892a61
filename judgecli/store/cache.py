"""The reply cache: SQLite (stdlib, WAL) from request hash to a validated judge reply.

An identical request is never paid twice: a re-run, a resume, or another run that asks the
same judge the same thing is answered from here. Only replies that parsed into a valid
verdict are stored (a malformed reply must be asked again, not replayed). WAL mode lets two
runs share the file; `synchronous=NORMAL` loses at most the last commits on power loss,
never on a crash of this process, and never corrupts the file.

A damaged file (not a database, or malformed: garbage, a text file, a truncated copy) is
an error naming it and the fix (delete it, or `judge cache clear`, which removes it and
starts an empty cache in its place). Carrying replies between machines (`judge cache
export` / `import`) is cache_transfer.py's.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from judgecli.errors import InputError, RunIncompleteError

SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    created REAL NOT NULL,
    reply TEXT NOT NULL
) WITHOUT ROWID
"""
CACHE_FILE = "replies.sqlite"


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


# What SQLite says of a file that is no database, or one whose pages are damaged (garbage,
# a text file, a truncated copy): the file cannot be repaired, only removed.
CORRUPT = frozenset({"SQLITE_NOTADB", "SQLITE_CORRUPT"})


def corrupt(err: BaseException) -> bool:
    """Whether an error says the cache file is damaged (not locked, not unreadable)."""
    return isinstance(err, sqlite3.DatabaseError) and (
        getattr(err, "sqlite_errorname", None) in CORRUPT
    )


def corrupt_hint(path: Path) -> str:
    """How to get past a damaged cache file: remove it (its replies are lost), or run
    without it.
    """
    return f"delete {path} or run judge cache clear; or set JUDGE_CACHE_DIR / pass --no-cache"


class CacheCorruptError(InputError):
    """The cache file is damaged (not a database, or malformed): only removing it helps."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"cannot open the reply cache {path}: {problem}", hint=corrupt_hint(path))
        self.problem = problem


class ReplyCache:
    """A handle on the cache file; one per run (sqlite3 connections are per thread)."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / CACHE_FILE
        db = None
        try:
            directory.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            set_up(db)
        except (OSError, sqlite3.Error) as err:
            if db is not None:
                db.close()
            if corrupt(err):
                raise CacheCorruptError(self.path, str(err)) from None
            raise InputError(
                f"cannot open the reply cache {self.path}: {err}",
                hint="set JUDGE_CACHE_DIR to a writable folder, or pass --no-cache",
            ) from None
        self._db = db

    def get(self, key: str) -> str | None:
        """The stored reply (JSON text) for a request hash, or None."""
        with self._damage_said():
            row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, model: str, reply: str) -> None:
        """Store a validated reply (first writer wins when two runs race)."""
        with self._damage_said():
            self._db.execute(
                "INSERT OR IGNORE INTO replies (key, model, created, reply) VALUES (?, ?, ?, ?)",
                (key, model, time.time(), reply),
            )

    @contextmanager
    def _damage_said(self) -> Iterator[None]:
        """Damage found only once the file is in use (a page a truncated copy lacks) stops
        the run (exit 3): what it finished is kept, and the error says the fix.
        """
        try:
            yield
        except sqlite3.DatabaseError as err:
            if not corrupt(err):
                raise
            raise RunIncompleteError(
                f"the reply cache {self.path} is damaged ({err}): delete it or run judge "
                "cache clear (or pass --no-cache)"
            ) from None

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


@dataclass(frozen=True)
class Cleared:
    """What `judge cache clear` removed."""

    path: Path
    entries: int | None
    """Replies deleted; None when the file was damaged and removed whole."""
    damage: str | None = None
    """What SQLite said of a damaged file."""
    size_bytes: int = 0
    """The size of the damaged file(s) removed."""


def clear_cache(directory: Path) -> Cleared:
    """Delete every cached reply in `directory`. A damaged cache file cannot be opened to
    delete from: it and its WAL files are removed instead, and a new, empty cache is made
    in their place.
    """
    path = directory / CACHE_FILE
    try:
        cache = ReplyCache(directory)
        try:
            return Cleared(path=path, entries=cache.clear())
        finally:
            cache.close()
    except CacheCorruptError as err:
        damage = err.problem
    except sqlite3.DatabaseError as err:  # damage found while deleting
        if not corrupt(err):
            raise
        damage = str(err)
    size = remove_cache_files(directory)
    ReplyCache(directory).close()
    return Cleared(path=path, entries=None, damage=damage, size_bytes=size)


def remove_cache_files(directory: Path) -> int:
    """Remove the cache file and SQLite's files beside it (WAL, shared memory, journal);
    their total size in bytes.
    """
    size = 0
    for suffix in ("", "-wal", "-shm", "-journal"):
        part = directory / f"{CACHE_FILE}{suffix}"
        try:
            size += part.stat().st_size
            part.unlink()
        except FileNotFoundError:
            continue
        except OSError as err:
            raise InputError(
                f"cannot remove the damaged reply cache {part}: {err.strerror or err}",
                hint=f"delete {part} yourself, or set JUDGE_CACHE_DIR to another folder",
            ) from None
    return size
