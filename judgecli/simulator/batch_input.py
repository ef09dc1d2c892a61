"""Reading a Batch API input file: one chat completion request per JSON line, each with
its ``custom_id``, ``method``, ``url`` and ``body``, checked as OpenAI checks them.

OpenAI accepts any file at batch creation and reports what is wrong with it later, as a
``failed`` batch whose ``errors.data`` name each bad line (1-based) and a code; the codes
here are OpenAI's documented ones (``invalid_json_line``, ``duplicate_custom_id``,
``url_mismatch``, ``model_mismatch``, ``empty_file``) or its generic parameter ones.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from judgecli.simulator.wire import request_problem


@dataclass(frozen=True)
class BatchLine:
    """One request of a batch: where it is in the input file, its id and its body."""

    line: int
    """1-based line number in the input file."""
    custom_id: str
    body: dict[str, Any]


@dataclass(frozen=True)
class BatchError:
    """Why a batch failed: an entry of its ``errors.data``."""

    code: str
    message: str
    line: int | None = None
    param: str | None = None

    def as_object(self) -> dict[str, Any]:
        """The entry as OpenAI's batch object shows it."""
        return {"code": self.code, "message": self.message, "param": self.param, "line": self.line}


def read_batch_input(content: bytes, endpoint: str) -> tuple[list[BatchLine], list[BatchError]]:
    """The requests of a batch input file, and every problem found in it (none: valid).

    Blank lines are skipped; every other line must be a JSON object with a unique string
    ``custom_id``, ``method`` POST, ``url`` equal to the batch's ``endpoint``, and a chat
    completion request as ``body``, all for one ``model``.
    """
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return [], [BatchError("invalid_file", "The input file is not UTF-8 text.")]
    lines: list[BatchLine] = []
    errors: list[BatchError] = []
    seen: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        found = _check_line(raw, number, endpoint, seen)
        if isinstance(found, BatchError):
            errors.append(found)
        else:
            lines.append(found)
            seen.add(found.custom_id)
    if not lines and not errors:
        errors.append(BatchError("empty_file", "The input file has no requests."))
    errors.extend(_model_mismatches(lines))
    return lines, errors


def _check_line(raw: str, number: int, endpoint: str, seen: set[str]) -> BatchLine | BatchError:
    """Line ``number`` read as a request, or the first thing wrong with it."""
    try:
        row = json.loads(raw)
    except ValueError:
        row = None
    if not isinstance(row, dict):
        return BatchError("invalid_json_line", "This line is not parseable as valid JSON.", number)
    custom_id, body = row.get("custom_id"), row.get("body")
    for name, value in (("custom_id", custom_id), ("method", row.get("method"))):
        if not isinstance(value, str) or not value:
            return _missing(name, number)
    if custom_id in seen:
        message = f"The custom_id {custom_id!r} is used by an earlier line of this file."
        return BatchError("duplicate_custom_id", message, number, "custom_id")
    if row["method"] != "POST":
        message = f"Invalid value: {row['method']!r}. Only 'POST' is supported."
        return BatchError("invalid_value", message, number, "method")
    if row.get("url") != endpoint:
        message = f"The url {row.get('url')!r} does not match the batch's endpoint {endpoint!r}."
        return BatchError("url_mismatch", message, number, "url")
    if not isinstance(body, dict):
        return _missing("body", number)
    if not isinstance(body.get("model"), str) or not body["model"]:
        return _missing("body.model", number)
    problem = request_problem(body)
    if problem is not None:
        return BatchError("invalid_request", f"Invalid body: {problem}.", number, "body")
    return BatchLine(number, str(custom_id), body)


def _missing(param: str, number: int) -> BatchError:
    """A line lacking ``param``, in OpenAI's words."""
    message = f"Missing required parameter: '{param}'."
    return BatchError("missing_required_parameter", message, number, param)


def _model_mismatches(lines: list[BatchLine]) -> list[BatchError]:
    """The lines whose ``model`` differs from the first line's: a batch serves one model."""
    if not lines:
        return []
    first = lines[0].body["model"]
    return [
        BatchError(
            "model_mismatch",
            f"The model {line.body['model']!r} differs from the first line's model {first!r}.",
            line.line,
            "body.model",
        )
        for line in lines
        if line.body["model"] != first
    ]
