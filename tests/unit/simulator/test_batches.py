"""The pure pieces of the simulated Batch API: the step table, the input file checks, the
batch state machine over a stub answer, and its settings and flags."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from judgecli.cli.main import app
from judgecli.simulator.batch_input import BatchLine, read_batch_input
from judgecli.simulator.batches import (
    Batch,
    BatchRequest,
    BatchRules,
    BatchStatus,
    BatchStore,
    LineResult,
    phase,
)
from judgecli.simulator.config import SimulatorConfig
from judgecli.simulator.files import FileStore
from tests.unit.simulator.requests import request

ENDPOINT = "/v1/chat/completions"
V, P, F, C = (
    BatchStatus.VALIDATING,
    BatchStatus.IN_PROGRESS,
    BatchStatus.FINALIZING,
    BatchStatus.COMPLETED,
)


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        (0, [(C, 1)]),
        (1, [(V, 0), (C, 1)]),
        (2, [(V, 0), (P, Fraction(1, 2)), (C, 1)]),
        (3, [(V, 0), (P, Fraction(1, 2)), (F, 1), (C, 1)]),
        (4, [(V, 0), (P, Fraction(1, 3)), (P, Fraction(2, 3)), (F, 1), (C, 1)]),
    ],
)
def test_each_retrieve_is_one_step_and_finalizing_needs_three(steps, expected):
    assert [phase(step, steps) for step in range(steps + 1)] == expected
    assert phase(steps + 5, steps) == (C, 1)


# --- The input file ---


def row(custom_id: str = "a", **changes: Any) -> dict[str, Any]:
    """A valid input line, with ``changes``."""
    return {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": request(), **changes}


def content(*rows: dict[str, Any] | str) -> bytes:
    """Rows (or raw text lines) as the bytes of an input file."""
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows).encode()


def test_a_valid_file_reads_as_its_lines_skipping_blank_ones():
    lines, errors = read_batch_input(content(row("a"), "", row("b")), ENDPOINT)

    assert errors == []
    assert [(line.line, line.custom_id) for line in lines] == [(1, "a"), (3, "b")]
    assert lines[0].body == request()


@pytest.mark.parametrize(
    ("bad", "code", "param"),
    [
        ("{not json", "invalid_json_line", None),
        ('["a list"]', "invalid_json_line", None),
        (row("", method="POST"), "missing_required_parameter", "custom_id"),
        (row("b", method=None), "missing_required_parameter", "method"),
        (row("a"), "duplicate_custom_id", "custom_id"),
        (row("b", method="GET"), "invalid_value", "method"),
        (row("b", url="/v1/completions"), "url_mismatch", "url"),
        (row("b", body="text"), "missing_required_parameter", "body"),
        (row("b", body={"messages": []}), "missing_required_parameter", "body.model"),
        (row("b", body={"model": "sim"}), "invalid_request", "body"),
        (row("b", body={**request(), "stream": True}), "invalid_request", "body"),
        (row("b", body=request(model="other")), "model_mismatch", "body.model"),
    ],
)
def test_a_bad_line_is_named_with_its_code_and_line_number(bad, code, param):
    lines, errors = read_batch_input(content(row("a"), bad), ENDPOINT)

    assert [(e.code, e.line, e.param) for e in errors] == [(code, 2, param)]
    assert all(error.message for error in errors)
    assert [line.custom_id for line in lines] == (["a", "b"] if code == "model_mismatch" else ["a"])


def test_an_empty_or_binary_file_fails_without_a_line():
    empty_lines, empty = read_batch_input(b"\n\n", ENDPOINT)
    binary_lines, binary = read_batch_input(b"\xff\xfe", ENDPOINT)

    assert (empty_lines, [(e.code, e.line) for e in empty]) == ([], [("empty_file", None)])
    assert (binary_lines, [(e.code, e.line) for e in binary]) == ([], [("invalid_file", None)])


# --- The state machine, over a stub answer that records what it was asked ---


class Answers:
    """A stand-in for the server's line answer: 200 with a fixed usage, or 500 when failed."""

    def __init__(self) -> None:
        """Nothing asked yet."""
        self.asked: list[tuple[str, str, bool]] = []

    def __call__(self, batch: Batch, line: BatchLine, fail: bool) -> LineResult:
        """Record the question; answer 500 if failed, else 200 with 3 + 2 tokens."""
        self.asked.append((batch.id, line.custom_id, fail))
        if fail:
            return LineResult(500, {"error": {"message": "boom", "type": "server_error"}})
        usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
        return LineResult(200, {"object": "chat.completion", "usage": usage})


def store(**rules: Any) -> tuple[BatchStore, FileStore]:
    """A batch store with ``rules`` and its file store."""
    files = FileStore()
    return BatchStore(BatchRules(**rules), files), files


def submit(batches: BatchStore, answers: Answers, count: int) -> dict[str, Any]:
    """Create a batch of ``count`` valid lines c0, c1 ...; its object."""
    lines, errors = read_batch_input(content(*(row(f"c{i}") for i in range(count))), ENDPOINT)
    asked = BatchRequest("file-x", ENDPOINT, "24h", None, {"authorization": "Bearer k"})
    return batches.create(asked, lines, errors, answers)


def file_rows(files: FileStore, file_id: str | None) -> list[dict[str, Any]]:
    """The JSON lines of a stored file ([] for none)."""
    if file_id is None:
        return []
    stored = files.get(file_id)
    assert stored is not None
    return [json.loads(line) for line in stored.content.decode().splitlines()]


@pytest.mark.parametrize(("rate", "count", "failed"), [(0.25, 10, 3), (0.5, 5, 3), (0.1, 4, 0)])
def test_the_fail_rate_fails_its_share_rounded_half_up(rate, count, failed):
    batches, files = store(steps=0, fail_rate=rate)
    answers = Answers()

    done = submit(batches, answers, count)

    assert done["request_counts"] == {"total": count, "completed": count - failed, "failed": failed}
    assert sum(fail for _, _, fail in answers.asked) == failed
    assert len(file_rows(files, done["error_file_id"])) == failed


def test_the_same_lines_fail_whatever_the_batch_and_another_seed_picks_others():
    picked = []
    for seed in (0, 0, 1):
        batches, _ = store(steps=0, fail_rate=0.5, seed=seed)
        answers = Answers()
        submit(batches, answers, 12)
        picked.append({custom_id for _, custom_id, fail in answers.asked if fail})

    assert picked[0] == picked[1]
    assert picked[0] != picked[2]


def test_lines_are_answered_as_steps_reach_them_and_once_only():
    batches, _ = store(steps=4)
    answers = Answers()
    batch_id = submit(batches, answers, 9)["id"]
    seen = []
    for _ in range(6):
        found = batches.retrieve(batch_id, answers)
        assert found is not None
        seen.append((found["status"], found["request_counts"]["completed"], len(answers.asked)))

    assert seen == [
        ("in_progress", 3, 3),
        ("in_progress", 6, 6),
        ("finalizing", 9, 9),
        ("completed", 9, 9),
        ("completed", 9, 9),
        ("completed", 9, 9),
    ]
    assert [custom_id for _, custom_id, _ in answers.asked] == [f"c{i}" for i in range(9)]


def test_the_batch_object_has_every_field_of_openais():
    batches, _ = store(steps=0)

    done = submit(batches, Answers(), 2)

    assert set(done) == {
        "id",
        "object",
        "endpoint",
        "model",
        "errors",
        "input_file_id",
        "completion_window",
        "status",
        "output_file_id",
        "error_file_id",
        "created_at",
        "in_progress_at",
        "expires_at",
        "finalizing_at",
        "completed_at",
        "failed_at",
        "expired_at",
        "cancelling_at",
        "cancelled_at",
        "request_counts",
        "metadata",
        "usage",
    }
    assert done["model"] == "sim"
    assert done["expires_at"] == done["created_at"] + 24 * 3600
    assert done["usage"]["input_tokens"] == 6
    assert done["usage"]["output_tokens"] == 4
    assert done["usage"]["total_tokens"] == 10


def test_zero_steps_with_expiry_expire_at_creation_with_the_first_half_answered():
    batches, files = store(steps=0, expire=True)
    answers = Answers()

    done = submit(batches, answers, 5)

    assert done["status"] == "expired"
    assert done["request_counts"] == {"total": 5, "completed": 2, "failed": 0}
    assert [custom_id for _, custom_id, _ in answers.asked] == ["c0", "c1"]
    expired = file_rows(files, done["error_file_id"])
    assert sorted(r["custom_id"] for r in expired) == ["c2", "c3", "c4"]
    assert {r["error"]["code"] for r in expired} == {"batch_expired"}


def test_a_batch_cancelled_while_validating_answers_nothing_and_writes_no_file():
    batches, _ = store(steps=2)
    answers = Answers()
    batch_id = submit(batches, answers, 4)["id"]

    cancelling, accepted = batches.cancel(batch_id)
    cancelled = batches.retrieve(batch_id, answers)

    assert accepted
    assert cancelling is not None
    assert cancelling["status"] == "cancelling"
    assert isinstance(cancelling["cancelling_at"], int)
    assert cancelled is not None
    assert cancelled["status"] == "cancelled"
    assert (cancelled["output_file_id"], cancelled["error_file_id"]) == (None, None)
    assert answers.asked == []
    assert batches.cancel(batch_id)[1] is False
    assert batches.cancel("batch_nope") == (None, False)


def test_store_ids_are_never_reused_after_clear():
    batches, files = store(steps=0)
    first = submit(batches, Answers(), 1)
    batches.clear()
    files.clear()

    second = submit(batches, Answers(), 1)

    assert first["id"] != second["id"]
    assert first["output_file_id"] != second["output_file_id"]
    assert batches.retrieve(first["id"], Answers()) is None
    assert files.get(first["output_file_id"]) is None


# --- Settings and flags ---


def test_batch_settings_are_checked_and_described_only_when_set():
    with pytest.raises(ValidationError):
        SimulatorConfig(batch_steps=-1)
    with pytest.raises(ValidationError):
        SimulatorConfig(batch_fail_rate=1.5)

    described = SimulatorConfig(batch_steps=3, batch_fail_rate=0.1, batch_expire=True).describe()

    assert described[-1] == "batches expire half done after 3 retrieves; batch lines failed: 0.1"
    assert not any("batch" in line for line in SimulatorConfig().describe())


def test_the_batch_flags_reach_the_simulator_config(monkeypatch):
    import judgecli.simulator.server as server_module

    served: list[SimulatorConfig] = []

    async def record(config: SimulatorConfig, **_: Any) -> None:
        """Stand in for serving: keep the config and return at once."""
        served.append(config)

    monkeypatch.setattr(server_module, "serve_forever", record)
    argv = ["simulate", "--batch-steps", "0", "--batch-fail-rate", "0.2", "--batch-expire"]

    run = CliRunner().invoke(app, argv, catch_exceptions=False)

    assert run.exit_code == 0, run.stderr
    assert [(c.batch_steps, c.batch_fail_rate, c.batch_expire) for c in served] == [(0, 0.2, True)]
