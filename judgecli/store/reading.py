"""Reading a run's results.jsonl back (a torn last line skipped or cut), each bad line an
InputError naming the file and line and the fix. summary.json is read by `summary.run`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from judgecli.errors import InputError
from judgecli.result import CaseResult


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
