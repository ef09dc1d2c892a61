"""Reading a run's files back: results.jsonl (a torn last line skipped or cut) and
summary.json, each bad line or field an InputError naming the file (and line) and the fix.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from judgecli.errors import InputError
from judgecli.result import CaseResult
from judgecli.summary.facts import Command
from judgecli.summary.run import RunSummary, parse_summary


def repair_torn_tail(path: Path) -> bool:
    """Cut an incomplete last line (no newline: the process died mid-write). True if cut."""
    with path.open("rb+") as handle:
        data = handle.read()
        if not data or data.endswith(b"\n"):
            return False
        handle.truncate(data.rfind(b"\n") + 1)
        return True


def read_results(path: Path) -> Iterator[CaseResult]:
    """Stream a results.jsonl; a torn last line (a crash mid-write) is skipped."""
    try:
        handle = path.open("r", encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file", hint="pass a run's results.jsonl") from None
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror}") from None
    with handle:
        pending: tuple[int, str] | None = None
        for number, line in enumerate(handle, start=1):
            if pending is not None:
                yield parse_result_line(path, *pending)
            pending = (number, line) if line.strip() else None
        if pending is not None:
            try:
                yield parse_result_line(path, *pending)
            except InputError:
                if pending[1].endswith("\n"):
                    raise


def parse_result_line(path: Path, number: int, line: str) -> CaseResult:
    """One results.jsonl line as a CaseResult, or an InputError naming file:line."""
    try:
        return CaseResult.model_validate_json(line)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        problem = f"{field}: {first['msg']}" if field else first["msg"]
        raise InputError(
            f"{path}:{number}: not a judge results line ({problem})",
            hint="pass the results.jsonl a judge run wrote",
        ) from None


def read_summary(path: Path) -> RunSummary:
    """A run's summary.json, validated as its command's summary."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file", hint="pass a run's summary.json") from None
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror}") from None
    try:
        return parse_summary(text)
    except ValidationError as err:
        first = err.errors()[0]
        if first["type"] == "json_invalid":
            # pydantic's own words for broken JSON ("(: Invalid JSON...") say nothing a
            # user can act on; a JSONL dataset or results file is the usual mix-up.
            raise InputError(
                f"{path}: not a judge summary.json: {json_problem(text)}",
                hint="pass the summary.json of a finished run (RUN_DIR/summary.json)",
            ) from None
        raise InputError(f"{path}: not a judge summary.json ({summary_problem(first)})") from None


def json_problem(text: str) -> str:
    """What is wrong with a text that is not one JSON document."""
    try:
        json.loads(text)
    except json.JSONDecodeError as err:
        if err.msg == "Extra data":
            return f"holds more than one JSON value (line {err.lineno}): JSON Lines?"
        return f"not JSON ({err.msg} at line {err.lineno}, column {err.colno})"
    return "not JSON"


def summary_problem(error: ErrorDetails) -> str:
    """One validation error of a summary.json, said as `field: problem`."""
    commands = ", ".join(c.value for c in Command)
    if error["type"] == "union_tag_not_found":
        return f"command: Field required (one of {commands})"
    if error["type"] == "union_tag_invalid":
        return f"command: {error.get('ctx', {}).get('tag')!r} is not one of {commands}"
    # Past the tag, the location starts with the command's name: it says which model.
    where = ".".join(str(p) for p in error["loc"][1:])
    return f"{where}: {error['msg']}" if where else error["msg"]
