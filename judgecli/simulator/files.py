"""The simulator's in-memory store behind the OpenAI Files API: uploaded batch input files
and the output and error files batches write.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass
from typing import Any

UPLOAD_PURPOSES = frozenset({"assistants", "batch", "fine-tune", "vision", "user_data", "evals"})
"""The ``purpose`` values OpenAI accepts on upload (``batch_output`` is written, never sent)."""
OUTPUT_PURPOSE = "batch_output"
"""The ``purpose`` of the output and error files a batch writes."""


@dataclass(frozen=True)
class StoredFile:
    """One file: its bytes and what the Files API says about them."""

    id: str
    filename: str
    purpose: str
    content: bytes
    created_at: int

    def as_object(self) -> dict[str, Any]:
        """The OpenAI file object describing this file."""
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.content),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }


class FileStore:
    """Files by id, shared by the handlers (loop thread) and `reset` (a test's thread)."""

    def __init__(self) -> None:
        """An empty store."""
        self._lock = threading.Lock()
        self._files: dict[str, StoredFile] = {}
        # Never restarted, not even by clear(): an id a test kept from before a reset
        # answers 404 rather than naming a newer file.
        self._numbers = itertools.count(1)

    def add(self, filename: str, purpose: str, content: bytes) -> StoredFile:
        """Store ``content`` under a new ``file-...`` id and return it."""
        with self._lock:
            stored = StoredFile(
                id=f"file-sim{next(self._numbers):06d}",
                filename=filename,
                purpose=purpose,
                content=content,
                created_at=int(time.time()),
            )
            self._files[stored.id] = stored
        return stored

    def get(self, file_id: str) -> StoredFile | None:
        """The file with ``file_id``, or None."""
        with self._lock:
            return self._files.get(file_id)

    def clear(self) -> None:
        """Forget every file."""
        with self._lock:
            self._files.clear()
