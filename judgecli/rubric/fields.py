"""The case fields a rubric's templates may name and require, and reading a template's
`{field}` names (with a did-you-mean for a typo).
"""

from __future__ import annotations

import difflib
import string

# Fields a template may name. Pairwise templates use output_a/output_b, filled by the
# prompt builder from the two cases of a pair (the order decides which is which).
# `conversation` is a case's turns before the answer graded (judgecli.inputs.conversation);
# `trajectory` an agent's whole run and `step` the tool call graded (judgecli.inputs.trajectory).
CASE_FIELDS = frozenset(
    {"input", "output", "reference", "context", "category", "conversation", "trajectory", "step"}
    | {"rubric_items"}
)
PAIRWISE_FIELDS = frozenset({"output_a", "output_b"})
# Case fields a rubric may require beside the ones its prompt can name: the calls a case
# expects, which the deterministic tool-call check reads (`tool_calls`).
REQUIRABLE = CASE_FIELDS | {"expected_tool_calls"}
# Fields a pairwise template may not name, and what it names instead.
NOT_PAIRWISE = {
    "output": "a pairwise prompt shows the two answers as {output_a} and {output_b}, not {output}",
    "conversation": "a pairwise prompt shows the two conversations as {output_a} and "
    "{output_b}, not {conversation}",
    "trajectory": "a pairwise prompt shows the two runs as {output_a} and {output_b}, not "
    "{trajectory}",
    "step": "a pairwise prompt compares two runs whole ({output_a} and {output_b}); {step} is "
    "the tool call a pointwise or binary rubric grades under steps: each",
}


def unknown_field(field: str, known: frozenset[str]) -> str:
    """`{outptu} is not a case field; did you mean {output}? ...` for a template typo."""
    close = difflib.get_close_matches(field, sorted(known), n=1)
    guess = f"; did you mean {{{close[0]}}}?" if close else ""
    names = ", ".join(f"{{{f}}}" for f in sorted(known))
    return (
        f"{{{field}}} is not a case field{guess} (fields: {names}; "
        "write {{ and }} for a literal brace)"
    )


def fields_or_none(template: str) -> list[str]:
    """template_fields, or none when its braces are wrong (a later check says how)."""
    try:
        return template_fields(template)
    except ValueError:
        return []


def template_fields(template: str) -> list[str]:
    """The `{field}` names a template uses, in order (raises ValueError on bad braces)."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
