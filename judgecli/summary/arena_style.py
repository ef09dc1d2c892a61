"""The style of an arena comparison's two answers, the covariates of `--style-control`
(Arena-Hard's style control, Li et al. 2024): how much longer, and how much more markdown,
the first system's answer is than the second's (arena.md, "Style control").
"""

from __future__ import annotations

import re

from judgecli.result import CaseResult

HEADER = re.compile(r"^ {0,3}#{1,6}\s", re.MULTILINE)
BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s", re.MULTILINE)


def markdown_density(text: str) -> float:
    """Markdown elements (headers, bold spans, list items) per 1,000 characters."""
    if not text:
        return 0.0
    found = len(HEADER.findall(text)) + len(BOLD.findall(text)) + len(LIST_ITEM.findall(text))
    return 1000.0 * found / len(text)


def style_of(result: CaseResult) -> tuple[float, float]:
    """The old answer's style minus the new one's: length as (a − b)/(a + b), in [−1, 1],
    and the difference in markdown density.
    """
    old, new = result.case.get("output_old", ""), result.case.get("output_new", "")
    total = len(old) + len(new)
    length = (len(old) - len(new)) / total if total else 0.0
    return length, markdown_density(old) - markdown_density(new)
