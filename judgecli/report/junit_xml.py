"""JUnit XML as text: a testcase's outcome (`Outcome`, `Ending`, `JunitCase`), a suite,
and the document, written the way ElementTree would write it. Pure, no I/O. What each
testcase of a run is lives in `report.junit` (and `report.junit_arena` for an arena).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from enum import StrEnum
from typing import NamedTuple

from judgecli.report.escape import XML_ATTRIBUTE, XML_TEXT, escaped

# XML 1.0 allows only tab, newline, CR, U+0020-U+D7FF, U+E000-U+FFFD and U+10000 up (the
# spec's Char production, section 2.2). Judge replies can hold others (NUL, terminal
# escapes, lone surrogates from JSON "\ud800"), and one of them makes the whole report
# unreadable, so they are removed, not escaped. The class lists the characters left out
# rather than negating the allowed ones: a range up to U+10FFFF takes re ~9 ms to compile.
NOT_XML_CHAR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

# A dot in classname is a package separator to Jenkins and GitLab; a rubric or category
# name keeps its letters, digits, "_" and "-", and anything else becomes "-".
NOT_NAME_CHAR = re.compile(r"[^\w-]+")

XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'


class Outcome(StrEnum):
    """How a testcase ended; the value is its child element's name (none for a pass)."""

    PASSED = "passed"
    FAILURE = "failure"
    ERROR = "error"
    SKIPPED = "skipped"


# NamedTuples rather than frozen dataclasses: one of each is built per case, and a frozen
# dataclass takes about three times as long to build (object.__setattr__ per field).
class Ending(NamedTuple):
    """How a testcase ended, and what a CI's test view shows of it."""

    outcome: Outcome = Outcome.PASSED
    message: str | None = None
    kind: str | None = None
    """The `type` attribute of `<failure>`/`<error>`."""
    text: str | None = None
    """The body of `<failure>`/`<error>`: reasoning, raw replies."""
    out: str | None = None
    """`<system-out>`: the verdict of a case that passed."""


class JunitCase(NamedTuple):
    """One `<testcase>` before it becomes XML."""

    classname: str
    name: str
    time_s: float
    ending: Ending = Ending()


Suite = tuple[str, list[JunitCase]]
"""A `<testsuite>`: its name and its testcases."""


# The document is written as text, not built as an xml.etree tree: at 2,000 cases building
# and serialising the tree took more than half of render_junit's time. The bytes are those
# ElementTree.indent + tostring wrote (a test compares the two): two spaces of indent per
# level, `<tag attrs />` for an element with nothing in it, and ElementTree's escapes.
def junit_document(suites: Sequence[Suite]) -> str:
    """The testsuites as an indented XML document."""
    every = [c for _, group in suites for c in group]
    lines = [XML_DECLARATION, f"<testsuites{attributes(counts(every, name='judge'))}>"]
    for name, group in suites:
        attrs = attributes(counts(group, name=name, skipped=True))
        if not group:
            lines.append(f"  <testsuite{attrs} />")
            continue
        lines.append(f"  <testsuite{attrs}>")
        lines += [testcase_xml(case) for case in group]
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    return "\n".join(lines) + "\n"


def counts(cases: Sequence[JunitCase], *, name: str, skipped: bool = False) -> dict[str, str]:
    """A suite's attributes. junit-10.xsd has no `skipped` on `<testsuites>`."""
    outcomes = Counter(c.ending.outcome for c in cases)
    attrs = {
        "name": clean(name),
        "tests": str(len(cases)),
        "failures": str(outcomes[Outcome.FAILURE]),
        "errors": str(outcomes[Outcome.ERROR]),
    }
    if skipped:
        attrs["skipped"] = str(outcomes[Outcome.SKIPPED])
    attrs["time"] = seconds(sum(c.time_s for c in cases))
    return attrs


def testcase_xml(case: JunitCase) -> str:
    """One `<testcase>` and what is in it, indented as a suite's child."""
    head = (
        f'    <testcase classname="{escape_attr(case.classname)}" '
        f'name="{escape_attr(case.name)}" time="{seconds(case.time_s)}"'
    )
    end = case.ending
    children = []
    if end.outcome is not Outcome.PASSED:
        attrs = f' message="{escape_attr(clean(end.message or ""))}"'
        if end.kind is not None:
            attrs += f' type="{escape_attr(end.kind)}"'
        children.append(text_element(end.outcome.value, attrs, clean(end.text or "")))
    if end.out:
        children.append(text_element("system-out", "", clean(end.out)))
    if not children:
        return f"{head} />"
    inside = "\n      ".join(children)
    return f"{head}>\n      {inside}\n    </testcase>"


def text_element(tag: str, attrs: str, text: str) -> str:
    """An element holding only text (no text: written as empty); `attrs` is escaped."""
    return f"<{tag}{attrs}>{escape_text(text)}</{tag}>" if text else f"<{tag}{attrs} />"


def attributes(attrs: dict[str, str]) -> str:
    """Attributes in the order given, each after a space."""
    return "".join(f' {name}="{escape_attr(value)}"' for name, value in attrs.items())


def escape_text(text: str) -> str:
    """Character data escaped as ElementTree escapes it."""
    return escaped(text, XML_TEXT)


def escape_attr(value: str) -> str:
    """An attribute value escaped as ElementTree escapes it."""
    return escaped(value, XML_ATTRIBUTE)


def clean(text: str) -> str:
    """Text with the characters XML 1.0 cannot hold removed."""
    return NOT_XML_CHAR.sub("", text)


def name_part(text: str | None) -> str:
    """A rubric, command or category name as one dot-free segment of a classname."""
    return NOT_NAME_CHAR.sub("-", clean(text or "")).strip("-") or "unnamed"


def number(value: float) -> str:
    """A score or rate, short: 2 not 2.0, 0.55 not 0.550000."""
    return f"{value:.4g}"


def seconds(value: float) -> str:
    """A duration as junit-10.xsd's time pattern accepts it (no exponent, no sign)."""
    return f"{max(value, 0.0):.3f}"
