"""The simulated OpenAI Batch API: each batch's state machine and the store of batches.

A batch moves one step per retrieve (``GET /v1/batches/{id}``), never by the clock, so a
test of a batch client is deterministic: with `SimulatorConfig.batch_steps` N it reads
``validating``, then ``in_progress`` (its request counts growing), ``finalizing`` when N > 2,
and at the N-th retrieve ``completed`` (see `phase`); N = 0 ends it at creation. Its lines
are answered in input order as the steps reach them, by the same function that answers
online requests, and at the end they are written, shuffled by seed as real batch outputs
are unordered, to an output file (HTTP 200 lines) and an error file (the rest).

Faults: a seeded share of lines fail with a 500 (`SimulatorConfig.batch_fail_rate`);
`SimulatorConfig.batch_expire` ends every batch ``expired`` with only the first half of its
lines answered and the rest in the error file as ``batch_expired``; an invalid input file
(`judgecli.simulator.batch_input`) or a scripted failure ends it ``failed`` at the first
retrieve; a cancel makes it ``cancelling``, then ``cancelled`` at the next retrieve.
"""

from __future__ import annotations

import collections
import hashlib
import itertools
import json
import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import Any

from judgecli.simulator.batch_input import BatchError, BatchLine
from judgecli.simulator.files import OUTPUT_PURPOSE, FileStore

EXPIRED_MESSAGE = "This request could not be executed before the completion window expired."
TOKEN_LIMIT_MESSAGE = (
    "Enqueued token limit reached in organization org-simulator. Please try again once "
    "some in_progress batches have been completed."
)
"""OpenAI's most common whole-batch failure, the default of a scripted one."""


class BatchStatus(StrEnum):
    """The statuses of an OpenAI batch."""

    VALIDATING = "validating"
    FAILED = "failed"
    IN_PROGRESS = "in_progress"
    FINALIZING = "finalizing"
    COMPLETED = "completed"
    EXPIRED = "expired"
    CANCELLING = "cancelling"
    CANCELLED = "cancelled"


FINAL = frozenset(
    {BatchStatus.FAILED, BatchStatus.COMPLETED, BatchStatus.EXPIRED, BatchStatus.CANCELLED}
)
"""Statuses a batch never leaves."""
_CANCELLABLE = frozenset({BatchStatus.VALIDATING, BatchStatus.IN_PROGRESS, BatchStatus.FINALIZING})


def phase(step: int, steps: int) -> tuple[BatchStatus, Fraction]:
    """The status after ``step`` retrieves of a batch that takes ``steps``, and the share of
    its lines answered by then (`BatchStatus.COMPLETED` stands for whatever end it meets).

    steps 1: validating, completed. 2: validating, in_progress (1/2), completed.
    3: validating, in_progress (1/2), finalizing (all), completed. 4: validating,
    in_progress (1/3), in_progress (2/3), finalizing, completed; and so on.
    """
    if step >= steps:
        return BatchStatus.COMPLETED, Fraction(1)
    if step == 0:
        return BatchStatus.VALIDATING, Fraction(0)
    # Finalizing needs a step of its own, which only three or more steps leave room for.
    working = steps - 1 if steps <= 2 else steps - 2
    if step <= working:
        return BatchStatus.IN_PROGRESS, Fraction(step, working + 1)
    return BatchStatus.FINALIZING, Fraction(1)


@dataclass(frozen=True)
class LineResult:
    """What one batch line was answered: the status and JSON body of the online reply."""

    status_code: int
    body: dict[str, Any]


Answer = Callable[["Batch", BatchLine, bool], LineResult]
"""Answers a line of a batch (and records it); True: the line fails by `batch_fail_rate`."""


@dataclass(frozen=True)
class BatchRules:
    """How every batch of a server behaves (from `SimulatorConfig`)."""

    seed: int = 0
    steps: int = 2
    fail_rate: float = 0.0
    expire: bool = False


@dataclass(frozen=True)
class BatchRequest:
    """What ``POST /v1/batches`` asked for, checked."""

    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: dict[str, str] | None
    headers: dict[str, str]
    """The creating request's headers (lower-cased), recorded with each line it pays for."""


class Batch:
    """One batch: its lines, how far it got and the object the API shows for it."""

    def __init__(
        self,
        batch_id: str,
        request: BatchRequest,
        lines: list[BatchLine],
        errors: list[BatchError],
        rules: BatchRules,
    ) -> None:
        """A new batch, ``validating``; call `start` to let zero-step rules end it at once."""
        self.id = batch_id
        self.request = request
        self.lines = lines
        self.errors = errors
        self.rules = rules
        self.status = BatchStatus.VALIDATING
        self.step = 0
        self.results: list[tuple[BatchLine, LineResult]] = []
        self.output_file_id: str | None = None
        self.error_file_id: str | None = None
        self.times: dict[str, int] = {"created_at": int(time.time())}
        # Keyed on the requests, not the batch id: the same file fails and orders alike
        # in every batch and every run with the same seed.
        self._key = hashlib.sha256(
            json.dumps([[line.custom_id, line.body] for line in lines], sort_keys=True).encode()
        ).hexdigest()
        # Rounded half up (round() would take 2.5 to 2): a quarter of 10 lines fails 3.
        count = math.floor(rules.fail_rate * len(lines) + 0.5)
        picked = random.Random(f"{rules.seed}\x1fbatch-fail\x1f{self._key}").sample(
            range(len(lines)), count
        )
        self.failing = frozenset(picked)

    @property
    def limit(self) -> int:
        """How many lines get answered: all, or the first half of a batch that expires."""
        return len(self.lines) // 2 if self.rules.expire else len(self.lines)

    def start(self, answer: Answer, files: FileStore) -> None:
        """Enter the first phase (with zero steps, the end)."""
        self._enter(phase(0, self.rules.steps), answer, files)

    def advance(self, answer: Answer, files: FileStore) -> None:
        """One retrieve: move a step on (a cancelling batch ends cancelled)."""
        if self.status in FINAL:
            return
        if self.status is BatchStatus.CANCELLING:
            self._finish(BatchStatus.CANCELLED, files)
            return
        self.step += 1
        self._enter(phase(self.step, self.rules.steps), answer, files)

    def cancel(self) -> bool:
        """Start cancelling; False when the batch is past being cancelled."""
        if self.status is BatchStatus.CANCELLING:
            return True
        if self.status not in _CANCELLABLE:
            return False
        self.status = BatchStatus.CANCELLING
        self.times["cancelling_at"] = int(time.time())
        return True

    def _enter(self, where: tuple[BatchStatus, Fraction], answer: Answer, files: FileStore) -> None:
        """Answer the lines due by this phase and take its status."""
        status, share = where
        if self.errors and status is not BatchStatus.VALIDATING:
            self._finish(BatchStatus.FAILED, files)
            return
        due = math.floor(self.limit * share)
        for index in range(len(self.results), due):
            line = self.lines[index]
            self.results.append((line, answer(self, line, index in self.failing)))
        if status is BatchStatus.COMPLETED:
            self._finish(BatchStatus.EXPIRED if self.rules.expire else status, files)
            return
        if status is not self.status:
            self.status = status
            self.times.setdefault(f"{status.value}_at", int(time.time()))

    def _finish(self, status: BatchStatus, files: FileStore) -> None:
        """End in ``status``, writing the output and error files of the lines answered."""
        now = int(time.time())
        if status in {BatchStatus.COMPLETED, BatchStatus.EXPIRED}:
            # A batch that ran passed through these even when no retrieve showed them.
            self.times.setdefault("in_progress_at", now)
        if status is BatchStatus.COMPLETED:
            self.times.setdefault("finalizing_at", now)
        self.status = status
        self.times[f"{status.value}_at"] = now
        if status is BatchStatus.FAILED:
            return
        done = [self._line(line, result) for line, result in self.results]
        good = [row for row in done if row["response"]["status_code"] == 200]
        bad = [row for row in done if row["response"]["status_code"] != 200]
        if status is BatchStatus.EXPIRED:
            bad += [self._expired(line) for line in self.lines[len(self.results) :]]
        self.output_file_id = self._write(files, good, "output")
        self.error_file_id = self._write(files, bad, "error")

    def _line(self, line: BatchLine, result: LineResult) -> dict[str, Any]:
        """The output (or error) file line of an answered request, in OpenAI's shape."""
        response = {
            "status_code": result.status_code,
            "request_id": self._id("req_", line, 32),
            "body": result.body,
        }
        return {
            "id": self._id("batch_req_", line),
            "custom_id": line.custom_id,
            "response": response,
            "error": None,
        }

    def _expired(self, line: BatchLine) -> dict[str, Any]:
        """The error file line of a request the batch expired before answering."""
        error = {"code": "batch_expired", "message": EXPIRED_MESSAGE}
        return {
            "id": self._id("batch_req_", line),
            "custom_id": line.custom_id,
            "response": None,
            "error": error,
        }

    def _id(self, prefix: str, line: BatchLine, length: int = 24) -> str:
        """A stable id for one line of this batch."""
        digest = hashlib.sha256(f"{prefix}\x1f{self.id}\x1f{line.custom_id}".encode())
        return prefix + digest.hexdigest()[:length]

    def _write(self, files: FileStore, rows: list[dict[str, Any]], kind: str) -> str | None:
        """Store ``rows`` shuffled as a JSONL file; its id, None when there are none."""
        if not rows:
            return None
        random.Random(f"{self.rules.seed}\x1f{kind}\x1f{self._key}").shuffle(rows)
        content = "".join(json.dumps(row) + "\n" for row in rows).encode()
        return files.add(f"{self.id}_{kind}.jsonl", OUTPUT_PURPOSE, content).id

    def as_object(self) -> dict[str, Any]:
        """The OpenAI batch object for this batch, as it stands."""
        answered = [result for _, result in self.results]
        completed = sum(result.status_code == 200 for result in answered)
        errors = None
        if self.status is BatchStatus.FAILED:
            errors = {"object": "list", "data": [error.as_object() for error in self.errors]}
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.request.endpoint,
            "model": self.lines[0].body["model"] if self.lines else None,
            "errors": errors,
            "input_file_id": self.request.input_file_id,
            "completion_window": self.request.completion_window,
            "status": self.status.value,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            **{key: self.times.get(key) for key in _TIME_KEYS},
            "expires_at": self.times["created_at"] + 24 * 3600,
            "request_counts": {
                "total": 0 if self.errors else len(self.lines),
                "completed": completed,
                "failed": len(answered) - completed,
            },
            "usage": _usage(answered),
            "metadata": self.request.metadata,
        }


_TIME_KEYS = (
    "created_at",
    "in_progress_at",
    "finalizing_at",
    "completed_at",
    "failed_at",
    "expired_at",
    "cancelling_at",
    "cancelled_at",
)


def _usage(results: list[LineResult]) -> dict[str, Any]:
    """The batch's token usage: the sum over its answered lines, in OpenAI's batch shape."""
    counts = [result.body.get("usage") or {} for result in results if result.status_code == 200]
    prompt = sum(int(usage.get("prompt_tokens", 0)) for usage in counts)
    generated = sum(int(usage.get("completion_tokens", 0)) for usage in counts)
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": generated,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + generated,
    }


class BatchStore:
    """The batches of one server, and the script of whole-batch failures to come.

    Handlers call it on the loop thread and `reset` from a test's; one lock covers both.
    Lines are answered under it: the answer may take the server state's lock, never the
    other way round.
    """

    def __init__(self, rules: BatchRules, files: FileStore) -> None:
        """No batches yet; batches follow ``rules`` and write their outputs to ``files``."""
        self.rules = rules
        self.files = files
        self.lock = threading.Lock()
        self._batches: dict[str, Batch] = {}
        self._failures: collections.deque[BatchError] = collections.deque()
        # Never restarted, as file ids are not: a kept id answers 404 after a reset.
        self._numbers = itertools.count(1)

    def create(
        self,
        request: BatchRequest,
        lines: list[BatchLine],
        errors: list[BatchError],
        answer: Answer,
    ) -> dict[str, Any]:
        """Start a batch over the lines of a read input file; its object."""
        with self.lock:
            if not errors and self._failures:
                errors = [self._failures.popleft()]
            batch_id = f"batch_sim{next(self._numbers):06d}"
            batch = Batch(batch_id, request, lines, errors, self.rules)
            self._batches[batch_id] = batch
            batch.start(answer, self.files)
            return batch.as_object()

    def retrieve(self, batch_id: str, answer: Answer) -> dict[str, Any] | None:
        """Advance the batch one step; its object, or None for an unknown id."""
        with self.lock:
            batch = self._batches.get(batch_id)
            if batch is None:
                return None
            batch.advance(answer, self.files)
            return batch.as_object()

    def cancel(self, batch_id: str) -> tuple[dict[str, Any] | None, bool]:
        """Start cancelling the batch; its object (None: unknown) and whether it could be."""
        with self.lock:
            batch = self._batches.get(batch_id)
            if batch is None:
                return None, False
            cancelling = batch.cancel()
            return batch.as_object(), cancelling

    def listing(self) -> list[dict[str, Any]]:
        """Every batch's object, newest first, as OpenAI lists them; none is advanced."""
        with self.lock:
            return [batch.as_object() for batch in reversed(self._batches.values())]

    def fail_next(self, error: BatchError) -> None:
        """Make the next batch with a valid input file fail with ``error``."""
        with self.lock:
            self._failures.append(error)

    def clear(self) -> None:
        """Forget every batch and scripted failure."""
        with self.lock:
            self._batches.clear()
            self._failures.clear()
