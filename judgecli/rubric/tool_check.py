"""The rubric's `tool_calls` block: how the calls an agent's run made are checked against
the case's `expected_tool_calls`, deterministically, before any judge (docs/tool-calls.md).
The check itself is grading.tool_calls'; this module holds only what a rubric says of it.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class ArgumentMatch(StrEnum):
    """How an expected tool call's arguments must match a call made (`tool_calls.match`);
    docs/tool-calls.md.
    """

    EXACT = "exact"
    """The same arguments, compared as parsed JSON values: key order and spacing never
    matter, numbers compare by value (1 = 1.0), a boolean is never a number."""
    SUBSET = "subset"
    """The expected arguments within the call's: every expected key is there with a
    matching value (objects inside compared the same way); the call may pass more."""


class CallOrder(StrEnum):
    """Whether the calls a case expects must come in order (`tool_calls.order`)."""

    ANY = "any"
    """In any order: each expected call is matched to at most one call made."""
    STRICT = "strict"
    """In the order expected: the expected calls as a subsequence of the calls made (other
    calls may come between them)."""


class CheckedCases(StrEnum):
    """Which cases the judge grades in a rubric with both a prompt and the tool-call check
    (`tool_calls.judge`); the check decides the others.
    """

    UNCHECKED = "unchecked"
    """The cases the check cannot decide: those without `expected_tool_calls`."""
    EXTRA = "extra"
    """Those, and the cases whose only fault is calls beyond the expected ones (every
    expected call was made): whether the extra calls were reasonable is the judge's call."""
    ALL = "all"
    """Every case: the judge's verdict is the case's, the check's findings stand beside it."""


class ToolCallsCheck(BaseModel):
    """The rubric's `tool_calls` block: check the calls a run made against the case's
    `expected_tool_calls`, deterministically, before any judge (grading.tool_calls).
    Unknown keys are errors, as everywhere in a rubric.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    match: ArgumentMatch = ArgumentMatch.EXACT
    order: CallOrder = CallOrder.ANY
    judge: CheckedCases | None = None
    """With a prompt: which cases the judge grades (None: `unchecked`). A rubric without a
    prompt has no judge, and the check decides every case."""

    @property
    def judged(self) -> CheckedCases:
        """Which cases the judge grades (the cases the check cannot decide, unless told)."""
        return self.judge or CheckedCases.UNCHECKED
