"""The reply cache: SQLite (stdlib, WAL) from request hash to a validated judge reply.

An identical request is never paid twice: a re-run, a resume, or another run that asks the
same judge the same thing is answered from here. Only replies that parsed into a valid
verdict are stored (a malformed reply must be asked again, not replayed). WAL mode lets two
runs share the file; `synchronous=NORMAL` loses at most the last commits on power loss,
never on a crash of this process, and never corrupts the file.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

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


@dataclass(frozen=True)
class CacheStats:
    """What the cache holds."""

    path: Path
    entries: int
    size_bytes: int
    models: dict[str, int]


class ReplyCache:
    """A handle on the cache file; one per run (sqlite3 connections are per thread)."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / CACHE_FILE
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(SCHEMA)
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

    def close(self) -> None:
        """Close the connection."""
        self._db.close()
