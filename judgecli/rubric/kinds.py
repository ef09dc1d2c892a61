"""What a rubric grades and how: its kind, which turns of a conversation or steps of an
agent's run, and how their verdicts make a case's.
"""

from __future__ import annotations

from enum import StrEnum


class RubricKind(StrEnum):
    """What the judge returns: a score, one of fixed choices, a winner of two answers, or
    whether each item of a case's own checklist (`rubric_items`) is met.
    """

    POINTWISE = "pointwise"
    BINARY = "binary"
    PAIRWISE = "pairwise"
    CHECKLIST = "checklist"


class Turns(StrEnum):
    """Which assistant turns of a conversation (a case with `messages`) are graded."""

    LAST = "last"
    """The last one, with the turns before it as its context."""
    EACH = "each"
    """Every one, each with the turns up to it as its context; the case's verdict is the
    `aggregate` of the turns' verdicts."""


class Steps(StrEnum):
    """What of an agent's run (a case whose `messages` call tools) is graded."""

    FINAL = "final"
    """The outcome: the run as a whole, one verdict per case."""
    EACH = "each"
    """Every tool call, each in its context (the run up to and including the call, and its
    result); the case's verdict is the `aggregate` of the steps' verdicts. A run without a
    tool call is graded once, as a whole."""


class TurnAggregate(StrEnum):
    """How the verdicts of the graded turns (`turns: each`) or steps (`steps: each`) make
    the case's verdict.
    """

    MEAN = "mean"
    """Pointwise: the mean score. Binary: the case passes when most turns pass."""
    MIN = "min"
    """Pointwise: the worst turn's score. Binary: the case passes when every turn passes."""
