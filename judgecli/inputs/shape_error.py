"""The one base of the errors raised for a case's value whose shape cannot be read (its
`messages`, tool calls, `rubric_items`, an image, an OpenTelemetry trace): each reading
module raises its own kind, and the reader of cases turns any of them into one line naming
file:line, with the hint.
"""

from __future__ import annotations


class ShapeError(ValueError):
    """A case's value that cannot be read; the message says what, the hint how to fix it."""

    def __init__(self, problem: str, hint: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.hint = hint
