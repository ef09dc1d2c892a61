"""The store: the only package that writes files (the run directory, the reply cache, the
review sheets).

A run directory holds results.jsonl (appended and flushed a line at a time, so a crash
loses at most the line being written, or lines the reply cache replays for free), run.json,
summary.json and report.md (each written whole to a temporary file and renamed, so a
reader never sees half a file). One process writes it at a time: the one holding its lock
(store/lock.py). A write the file system refuses (no space, read-only) is an error naming
the file and the fix (store/disk.py), and leaves no half line and no temporary file behind.

- `lock`: one writer per run directory (RUN_DIR/.lock)
- `lines`: results.jsonl appended whole lines only
- `disk`: a write the file system refused, said as the user's to fix
- `reading`: results.jsonl read back (summary.json is `summary.run`'s)
- `cache`, `cache_transfer`: the reply cache (SQLite), and it exported and imported
- `sheets`: the labelling sheets of `judge review export`
- `plans`: the label plans of `judge review plan`
- `labels`: the label files `judge view` appends to (RUN/labels/<rater>.jsonl), one whole
  line per label under a lock
- `qualification`: the qualification record `judge qualify` writes
- `step_summary`: report.md appended to a CI job's summary ($GITHUB_STEP_SUMMARY)
- `inputs`: datasets and rubrics the Python API was given in memory, kept in the run
  directory; a fresh run directory for each API run
- `spec`: an evaluation spec written as YAML (`judge plan ... --write-spec FILE`)
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgecli.errors import InputError, JudgeError, RunDirectoryError
from judgecli.result import CaseResult, CaseStatus
from judgecli.store.disk import directory_error, how_to_continue, problem, storage_error
from judgecli.store.lines import LineFile
from judgecli.store.lock import LOCK, hold_run_dir, release_run_dir

# Re-exported: what reads a run's files back is imported from here.
from judgecli.store.reading import read_results as read_results
from judgecli.store.reading import repair_torn_tail

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
directory is the user's and stays (but its lock, LOCK, which is neither, and INPUTS)."""
INPUTS = "inputs"
"""The folder in which the Python API keeps what it was given in memory before the run
starts (store/inputs.py): the run's, and kept by --force (it was just written for it)."""


def default_run_dir(command: str, rubric_name: str, *, now: datetime | None = None) -> Path:
    """runs/<UTC time>-<command>-<rubric>, sortable by time, with a -2, -3... suffix when
    that name is taken.

    A script's second run started in the same second as its first so gets a directory of
    its own instead of exit 2. Two processes started at the same instant may still pick one
    name: the directory's lock then refuses the second, naming the first
    (store/inputs.fresh_run_dir reserves the name, for the Python API).
    """
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    base = Path("runs") / f"{stamp}-{command}-{rubric_name}"
    number = 1
    path = base
    while path.exists():
        number += 1
        path = base.with_name(f"{base.name}-{number}")
    return path


def write_atomic(path: Path, text: str) -> None:
    """Write a whole file via a temporary sibling and rename (atomic on POSIX). OSError if
    the file system refuses: the old file is then as it was, and the temporary one gone.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise


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
    """An open run directory. Its writes raise RunStorageError (exit 3, resumable) when the
    file system refuses them, or RunDirectoryError (exit 2) while it is being opened.
    """

    def __init__(self, path: Path, *, then: str | None = None) -> None:
        """A run directory to write (its lock is taken at the first write, if this process
        does not hold it yet); `then`: how to go on after a failed write (default:
        how_to_continue).
        """
        self.path = path
        self.then = then
        self._results: LineFile | None = None
        self._opening = False
        self._failure: JudgeError | None = None
        self.created = False
        """This store made the directory (a new run): discard() may remove it."""

    def discard(self) -> None:
        """Undo a new run that turned out not to be runnable (bad input found at its first
        call): its files go, and its directory (with its lock) if this store made it and
        nothing else is in it. Only under the run's lock: never another process's files.
        """
        self.abandon()
        self.hold()
        remove_run_files(self.path)
        if self.created:
            release_run_dir(self.path)
            with contextlib.suppress(OSError):  # not empty: the user's files stay
                self.path.rmdir()

    @classmethod
    def create(
        cls,
        path: Path,
        *,
        with_results: bool = True,
        replace: bool = False,
        then: str | None = None,
    ) -> RunStore:
        """Create a run directory and lock it; refuse one another process writes
        (RunInUseError), or one that already holds results, unless `replace` (--force),
        which first deletes the old run's files (only those: RUN_FILES). The lock is taken
        before anything is looked at, so two processes started together cannot both pass.
        """
        created = not path.exists()
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise RunDirectoryError(
                f"cannot create run directory {path}: {problem(err)}",
                hint="choose another --out (a directory you can write to)",
            ) from None
        store = cls(path, then=then)
        store.created = created
        try:
            store.hold()
        except JudgeError:
            # Not ours to clean up: another run's (in use), or nothing was made in it.
            if created:
                with contextlib.suppress(OSError):
                    path.rmdir()
            raise
        with store.opening():
            results = path / RESULTS
            if replace:
                try:
                    clear_run(path)
                except OSError as err:
                    raise store.failed(path, err) from None
            if results.exists() and results.stat().st_size > 0:
                raise InputError(
                    f"{path} already holds a run ({RESULTS} is not empty)",
                    hint="choose another --out directory, or start it over with --force",
                )
            if with_results:
                store.open_results()
        return store

    @classmethod
    def reopen(cls, path: Path, *, retry_failed: bool) -> tuple[RunStore, PreviousRun]:
        """Open an interrupted run to continue it (once its lock is taken: RunInUseError
        while another process writes it): a torn last line (a crash mid-write) is cut off;
        with `retry_failed` the failed cases' lines are removed so they are judged again.
        Returns the store (appending) and what the run already holds.
        """
        hint = "pass the --out directory of the run to continue"
        read_run_info(path, hint=hint)  # a run at all, before its lock is made
        store = cls(path)
        with store.opening():
            store.hold()
            info = read_run_info(path, hint=hint)  # as the last writer left it
            results = path / RESULTS
            try:
                results.touch()
                repair_torn_tail(results)
            except OSError as err:
                raise store.failed(results, err) from None
            kept = list(read_results(results))
            if retry_failed:
                kept = [r for r in kept if r.status is CaseStatus.OK]
                store.write_text(
                    RESULTS, "".join(r.model_dump_json(exclude_none=True) + "\n" for r in kept)
                )
            store.open_results()
        previous = PreviousRun(
            info=info,
            done={r.id for r in kept},
            spent_usd=sum(r.spent_usd for r in kept),
            failed=sum(r.status is CaseStatus.FAILED for r in kept),
        )
        return store, previous

    def hold(self) -> None:
        """Take the run directory's lock for this process (see store/lock.py)."""
        hold_run_dir(self.path, make=self.created)

    @contextmanager
    def opening(self) -> Iterator[None]:
        """Within: the run is being opened, nothing has been called yet. A write the file
        system refuses is a RunDirectoryError (exit 2); any error closes the results, and
        discards the directory if this store made it.
        """
        self._opening = True
        try:
            yield
        except BaseException:
            with contextlib.suppress(JudgeError, OSError):
                if self.created:
                    self.discard()
                else:
                    self.abandon()
            raise
        finally:
            self._opening = False

    def open_results(self) -> None:
        """Open results.jsonl for appending."""
        path = self.path / RESULTS
        try:
            self._results = LineFile(path)
        except OSError as err:
            raise self.failed(path, err) from None

    def failed(self, path: Path, err: OSError) -> JudgeError:
        """The error for a write of `path` the file system refused: the first one this
        store met, if a later write (run.json on the way out) fails for the same cause.
        """
        if self._opening:
            return directory_error(self.path, path, err)
        if self._failure is None:
            self._failure = storage_error(
                path, err, then=self.then or how_to_continue(self.path, self.path / RUN_INFO)
            )
        return self._failure

    def append_result(self, result: CaseResult) -> None:
        """Append one case line and flush it to the OS (survives a crash of this process).

        A case replayed whole from the reply cache stays in the write buffer until the next
        flush (a paid case, a full buffer, close): a crash loses only lines a re-run replays
        for free, and a re-run of a finished job makes no write call a case. A failed write
        leaves results.jsonl ending in the last whole line, and raises.
        """
        assert self._results is not None, "store not opened for writing"
        try:
            self._results.append(
                result.model_dump_json(exclude_none=True) + "\n", flush=not replayed(result)
            )
        except OSError as err:
            path = self._results.path
            self.abandon()
            raise self.failed(path, err) from None

    def close(self) -> None:
        """Flush results to disk."""
        if self._results is not None:
            results, self._results = self._results, None
            try:
                results.close()
            except OSError as err:
                raise self.failed(results.path, err) from None

    def abandon(self) -> None:
        """Close the results without writing what is buffered (the run is given up)."""
        if self._results is not None:
            with contextlib.suppress(OSError):
                self._results.abandon()
            self._results = None

    def read_json(self, name: str) -> Any:
        """A JSON file this store wrote (run.json, summary.json)."""
        return json.loads((self.path / name).read_text(encoding="utf-8"))

    def write_json(self, name: str, obj: Any) -> Path:
        """Write run.json / summary.json atomically."""
        return self.write_text(name, to_json(obj))

    def write_text(self, name: str, text: str) -> Path:
        """Write a report atomically (under the run's lock)."""
        self.hold()
        target = self.path / name
        try:
            write_atomic(target, text)
        except OSError as err:
            raise self.failed(target, err) from None
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
    if not run_dir.is_dir() or not any(p.name not in (LOCK, INPUTS) for p in run_dir.iterdir()):
        return
    if not (run_dir / RUN_INFO).is_file():
        raise InputError(
            f"--force: {run_dir} is not a judge run directory (no {RUN_INFO}), so nothing in "
            "it is deleted",
            hint="pass --out a new directory, or the directory of an earlier judge run",
        )


def clear_run(run_dir: Path) -> None:
    """Delete an old run's files in `run_dir` so a new run never mixes with it (the caller
    holds its lock: no live run's files are deleted).
    """
    check_replaceable(run_dir)
    remove_run_files(run_dir)


def remove_run_files(run_dir: Path) -> None:
    """Delete the files a run writes (RUN_FILES, its batches' replies) from `run_dir`."""
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


def replayed(result: CaseResult) -> bool:
    """Whether every judge call behind a case was answered by the reply cache (nothing was
    sent or paid, so nothing is lost if its line is), and it generated no answers.
    """
    calls = result.all_judgements
    return bool(calls) and all(call.cached for call in calls) and not result.attempts
