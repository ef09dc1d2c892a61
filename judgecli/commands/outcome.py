"""How a finished run ends, as the contract's exit code (docs/contract.md, "Exit codes"): the
command line exits with it, and the Python API's `Run.exit_code` is it.

An incomplete run (the judge could not grade enough of it) is 3 whatever its gate says: an
outage is neither a pass nor a regression. A gate whose evidence cannot decide is 3 too; a
gate that failed on judged evidence is 1; anything else is 0.
"""

from __future__ import annotations

from typing import Protocol

from judgecli.errors import ExitCode


class Gated(Protocol):
    """A gate's verdict (a RunSummary's, or the arena's)."""

    @property
    def passed(self) -> bool:
        """Whether every check passed."""
        ...

    @property
    def decided(self) -> bool:
        """False when the evidence cannot decide (then `passed` is false too)."""
        ...


class Finished(Protocol):
    """A finished run's summary: why it is incomplete (None: it is not), and its gate."""

    @property
    def incomplete(self) -> str | None:
        """Why the cases judged cannot stand for a verdict; None when they can."""
        ...

    @property
    def gate(self) -> Gated | None:
        """The gate's verdict; None without thresholds (or on an incomplete run)."""
        ...


def exit_code(summary: Finished) -> ExitCode:
    """The exit code of a finished run: 3 incomplete or undecided, 1 gate failed, else 0."""
    if summary.incomplete:
        return ExitCode.INCOMPLETE
    if summary.gate is not None and not summary.gate.decided:
        # Issue 29: evidence that cannot decide is neither a pass nor a regression.
        return ExitCode.INCOMPLETE
    if summary.gate is not None and not summary.gate.passed:
        return ExitCode.GATE_FAILED
    return ExitCode.OK
