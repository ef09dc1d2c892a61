"""Errors `judge` raises on purpose, and the exit code each one means.

* JudgeError                       (base; its message is shown to the user, with an optional hint)
  x InputError          -> 2       bad usage or input: nothing was called, nothing half-written
    + RubricError                  a rubric file is not valid YAML or not a valid rubric
    + DatasetError                 a JSONL dataset line is malformed (carries path and line)
    + ConfigError                  flags, environment and rubric do not make a runnable config
  x RunIncompleteError  -> 3       the run stopped early; what was done is kept
    + RunInterruptedError          Ctrl-C / SIGTERM
    + TooManyFailuresError         the failure policy stopped a run that is clearly broken
    + BudgetExceededError          the next call would pass --max-cost
    + JudgeUnavailableError        the judge endpoint cannot serve the run (key, URL, server)

Per-case problems are not exceptions that escape the runner: a JudgeCallError (transport,
4xx/5xx after retries) or a VerdictError (unparseable or off-schema reply) becomes a
CaseResult with status "failed", the reason and the raw text.
A failed gate is a result (GateResult.passed is False -> exit 1), not an error.
"""

from __future__ import annotations

from enum import IntEnum
from pathlib import Path


class ExitCode(IntEnum):
    """The process exit codes of the contract (DESIGN.md)."""

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
