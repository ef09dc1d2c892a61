"""Errors `judge` raises on purpose, and the exit code each one means.

* JudgeError                       (base; its message is shown to the user, with an optional hint)
  x InputError          -> 2       bad usage or input: nothing was called, nothing half-written
    + RubricError                  a rubric file is not valid YAML or not a valid rubric
    + DatasetError                 a JSONL dataset line is malformed (carries path and line)
    + ConfigError                  flags, environment and rubric do not make a runnable config
    + RunDirectoryError            the run directory cannot be made, opened or written before
                                   the run starts (read-only, no space, no permission)
      + RunInUseError              another process is writing the run directory (its lock)
  x RunIncompleteError  -> 3       the run stopped early; what was done is kept
    + RunInterruptedError          Ctrl-C / SIGTERM
    + TooManyFailuresError         the failure policy stopped a run that is clearly broken
    + BudgetExceededError          the next call would pass --max-cost
    + JudgeUnavailableError        the judge endpoint cannot serve the run (key, URL, server)
    + RunStorageError              writing the run directory failed once the run had started
                                   (disk full, quota, a read-only remount)
  x GradeError          -> 3       the Python API's Judge got no verdict on the one case it
                                   was asked to grade (carries the raw replies and why)

A JudgeWarning is no error: a problem that changes no outcome (a CI job summary that cannot
be written), issued with `warnings.warn` and shown by `cli/` as one `warning:` line.

Per-case problems are not exceptions that escape the runner: a JudgeCallError (transport,
4xx/5xx after retries) or a VerdictError (unparseable or off-schema reply) becomes a
CaseResult with status "failed", the reason and the raw text. (Only the API's `Judge.grade`
and `compare`, asked for one case's verdict, raise GradeError in its place.)
A failed gate is a result (GateResult.passed is False -> exit 1), not an error.
"""

from __future__ import annotations

from enum import IntEnum
from pathlib import Path


class ExitCode(IntEnum):
    """The process exit codes of the contract (docs/contract.md, "Exit codes")."""

    OK = 0
    GATE_FAILED = 1
    BAD_INPUT = 2
    INCOMPLETE = 3


class JudgeError(Exception):
    """Base of every error `judge` raises on purpose."""

    exit_code: ExitCode = ExitCode.INCOMPLETE

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class JudgeWarning(UserWarning):
    """A problem that changes no outcome: the run, its files and its exit code stand."""


class InputError(JudgeError):
    """Bad usage or bad input, found before anything was called or written."""

    exit_code = ExitCode.BAD_INPUT


class RubricError(InputError):
    """A rubric file cannot be read, parsed or validated."""


class ConfigError(InputError):
    """Flags, environment and rubric do not add up to a runnable configuration."""


class DatasetError(InputError):
    """A dataset line is malformed; the message starts with `path:line:`."""

    def __init__(
        self, path: Path | str, line: int | None, problem: str, *, hint: str | None = None
    ) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}", hint=hint)
        self.path = Path(path)
        self.line = line


class RunIncompleteError(JudgeError):
    """The run stopped before every case was judged; results so far are kept."""

    exit_code = ExitCode.INCOMPLETE
    drains: bool = False
    """Whether the cases in flight are finished before the run stops (their calls are
    paid for) rather than cancelled."""


class RunInterruptedError(RunIncompleteError):
    """The user interrupted the run (Ctrl-C) or the process was asked to stop."""


class TooManyFailuresError(RunIncompleteError):
    """More cases failed than --max-failures allows: the run cannot end with a verdict."""

    drains = True


class BudgetExceededError(RunIncompleteError):
    """The next call would have passed the spending cap."""

    drains = True


class JudgeUnavailableError(RunIncompleteError):
    """The judge endpoint cannot serve this run: a key, provider, URL or model problem, or
    nothing listening. An outage, never a verdict: exit 3, not a failed gate.
    """


class RunDirectoryError(InputError):
    """The run directory cannot be made, locked, opened or written before anything was
    called: a read-only or full file system, no permission. Nothing was judged.
    """


class RunInUseError(RunDirectoryError):
    """Another process holds the run directory's lock (it is writing that run): a second
    writer would count its cases twice.
    """


class RunStorageError(RunIncompleteError):
    """Writing the run directory failed after the run started (no space left, a quota, a
    file system remounted read-only). The results written before are kept whole; the run
    continues with `judge resume` once the cause is fixed.
    """


class GradeError(JudgeError):
    """The judge gave no verdict on the one case `Judge.grade` or `Judge.compare` was asked
    about: every reply was unparseable or off the rubric (after the re-asks), or a call
    failed for good. In a run such a case is a failed case (data); asked for one verdict,
    it is this error, so that it is never read as a low score.
    """

    exit_code = ExitCode.INCOMPLETE
    case_id: str = ""
    reasons: tuple[str, ...] = ()
    """Why each judgement failed (`model: invalid verdict: ...`)."""
    raw: tuple[str, ...] = ()
    """Every reply text the judges sent for the case, exactly as received."""

    def __init__(
        self,
        message: str,
        *,
        case_id: str,
        reasons: tuple[str, ...],
        raw: tuple[str, ...],
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.case_id = case_id
        self.reasons = reasons
        self.raw = raw
