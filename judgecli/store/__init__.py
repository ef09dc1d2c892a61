"""The store: the only module that writes files.

A run directory holds results.jsonl (appended and flushed a line at a time, so a crash
loses at most the line being written, or lines the reply cache replays for free), run.json,
summary.json and report.md (each written whole to a temporary file and renamed, so a
reader never sees half a file).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from judgecli.errors import InputError
from judgecli.result import CaseResult, CaseStatus
from judgecli.summary.facts import Command
from judgecli.summary.run import RunSummary, parse_summary

RESULTS = "results.jsonl"
SUMMARY = "summary.json"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
JUNIT = "results.junit.xml"
RUN_INFO = "run.json"
DISAGREEMENTS = "disagreements.jsonl"
ANSWERS = "answers.jsonl"
BATCH_INFO = "batch.json"
BATCH_REPLIES = "batch-*.jsonl"
"""--batch: batch.json records the provider's batches, batch-<id>.jsonl their replies."""
RUN_FILES = (
    RESULTS,
    SUMMARY,
    REPORT_MD,
    REPORT_HTML,
    JUNIT,
    RUN_INFO,
    DISAGREEMENTS,
    ANSWERS,
    BATCH_INFO,
)
"""Every file a run writes into its directory: what --force replaces. Anything else in the
directory is the user's and stays."""


def default_run_dir(command: str, rubric_name: str, *, now: datetime | None = None) -> Path:
    """runs/<UTC time>-<command>-<rubric>, sortable by time."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return Path("runs") / f"{stamp}-{command}-{rubric_name}"


def write_atomic(path: Path, text: str) -> None:
    """Write a whole file via a temporary sibling and rename (atomic on POSIX)."""
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(path)


def read_run_info(run_dir: Path, *, hint: str) -> dict[str, Any]:
    """A run's run.json (the command, argv, rubric and judges that made it); InputError
    naming the directory when there is none or it is not one judge wrote.
    """
    path = run_dir / RUN_INFO
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{run_dir}: not a judge run (no {RUN_INFO})", hint=hint) from None
    except (OSError, ValueError) as err:
        raise InputError(f"{path}: cannot read ({err})", hint=hint) from None
    if not isinstance(info, dict):
        raise InputError(f"{path}: not a judge run.json", hint=hint)
    return info


def to_json(obj: Any) -> str:
    """Stable, readable JSON for the run's files."""
    return json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


class RunStore:
    """An open run directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._results: IO[str] | None = None
        self.created = False
        """This store made the directory (a new run): discard() may remove it."""

    def discard(self) -> None:
        """Undo a new run that turned out not to be runnable (bad input found at its first
        call): its files go, and its directory if this store made it and it is empty.
        """
        self.close()
        clear_run(self.path)
        if self.created and not any(self.path.iterdir()):
            self.path.rmdir()

    @classmethod
    def create(cls, path: Path, *, with_results: bool = True, replace: bool = False) -> RunStore:
        """Create a run directory; refuse one that already holds results, unless `replace`
        (--force), which first deletes the old run's files (only those: RUN_FILES).
        """
        results = path / RESULTS
        if replace:
            clear_run(path)
        if results.exists() and results.stat().st_size > 0:
            raise InputError(
                f"{path} already holds a run ({RESULTS} is not empty)",
                hint="choose another --out directory, or start it over with --force",
            )
        created = not path.exists()
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise InputError(f"cannot create run directory {path}: {err.strerror}") from None
        store = cls(path)
        store.created = created
        if with_results:
            store._results = results.open("a", encoding="utf-8")
        return store

    @classmethod
    def reopen(cls, path: Path, *, retry_failed: bool) -> tuple[RunStore, PreviousRun]:
        """Open an interrupted run to continue it: a torn last line (a crash mid-write) is
        cut off; with `retry_failed` the failed cases' lines are removed so they are judged
        again. Returns the store (appending) and what the run already holds.
        """
        info = read_run_info(path, hint="pass the --out directory of the run to continue")
        results = path / RESULTS
        results.touch()
        repair_torn_tail(results)
        kept = list(read_results(results))
        if retry_failed:
            kept = [r for r in kept if r.status is CaseStatus.OK]
            write_atomic(
                results, "".join(r.model_dump_json(exclude_none=True) + "\n" for r in kept)
            )
        previous = PreviousRun(
            info=info,
            done={r.id for r in kept},
            spent_usd=sum(r.spent_usd for r in kept),
            failed=sum(r.status is CaseStatus.FAILED for r in kept),
        )
        store = cls(path)
        store._results = results.open("a", encoding="utf-8")
        return store, previous

    def append_result(self, result: CaseResult) -> None:
        """Append one case line and flush it to the OS (survives a crash of this process).

        A case replayed whole from the reply cache stays in the write buffer until the next
        flush (a paid case, a full buffer, close): a crash loses only lines a re-run replays
        for free, and a re-run of a finished job makes no write call a case.
        """
        assert self._results is not None, "store not opened for writing"
        self._results.write(result.model_dump_json(exclude_none=True) + "\n")
        if not replayed(result):
            self._results.flush()

    def close(self) -> None:
        """Flush results to disk."""
        if self._results is not None:
            os.fsync(self._results.fileno())
            self._results.close()
            self._results = None

    def read_json(self, name: str) -> Any:
        """A JSON file this store wrote (run.json, summary.json)."""
        return json.loads((self.path / name).read_text(encoding="utf-8"))

    def write_json(self, name: str, obj: Any) -> Path:
        """Write run.json / summary.json atomically."""
        return self.write_text(name, to_json(obj))

    def write_text(self, name: str, text: str) -> Path:
        """Write a report atomically."""
        target = self.path / name
        write_atomic(target, text)
        return target

    def write_jsonl(self, name: str, rows: list[dict[str, Any]]) -> Path:
        """Write a whole JSONL file atomically (e.g. disagreements.jsonl)."""
        return self.write_text(
            name, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        )


def check_replaceable(run_dir: Path) -> None:
    """--force may only replace a judge run: refuse a directory that holds files but no
    run.json (it could be anything, and deleting in it is not ours to do).
    """
    if not run_dir.is_dir() or not any(run_dir.iterdir()):
        return
    if not (run_dir / RUN_INFO).is_file():
        raise InputError(
            f"--force: {run_dir} is not a judge run directory (no {RUN_INFO}), so nothing in "
            "it is deleted",
            hint="pass --out a new directory, or the directory of an earlier judge run",
        )


def clear_run(run_dir: Path) -> None:
    """Delete an old run's files in `run_dir` so a new run never mixes with it."""
    check_replaceable(run_dir)
    batches = [path.name for path in run_dir.glob(BATCH_REPLIES)] if run_dir.is_dir() else []
    for name in [*RUN_FILES, *batches]:
        # (.NAME.tmp: a write the old run did not finish, see write_atomic.)
        for path in (run_dir / name, run_dir / f".{name}.tmp"):
            path.unlink(missing_ok=True)


@dataclass(frozen=True)
class PreviousRun:
    """What an interrupted run already holds."""

    info: dict[str, Any]
    """Its run.json."""
    done: set[str]
    """Ids with a result line (ok, or failed unless --retry-failed)."""
    spent_usd: float
    failed: int = 0
    """Of those, how many failed (they count against --max-failures)."""


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


# GitHub rejects a step summary over 1 MiB; stay well under it.
STEP_SUMMARY_MAX_BYTES = 512 * 1024


def append_step_summary(path: Path, report: str) -> None:
    """Append the report to $GITHUB_STEP_SUMMARY (truncated to stay under GitHub's limit)."""
    data = report.encode("utf-8")
    if len(data) > STEP_SUMMARY_MAX_BYTES:
        cut = data[:STEP_SUMMARY_MAX_BYTES].decode("utf-8", errors="ignore")
        report = cut + "\n\n_(report truncated; see report.md in the run directory)_\n"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(report + "\n")


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


def replayed(result: CaseResult) -> bool:
    """Whether every judge call behind a case was answered by the reply cache (nothing was
    sent or paid, so nothing is lost if its line is), and it generated no answers.
    """
    calls = result.all_judgements
    return bool(calls) and all(call.cached for call in calls) and not result.attempts
