"""Escaping text for the reports' markup: HTML, XML text and XML attributes.

Each escape is a table of (character, reference) replaced in order, `&` first. A report row
escapes a dozen strings and most need nothing, so a character that is absent costs an `in`
test, not a replace (the stdlib's escapes replace every character every time, and
importing `html` or `xml.sax.saxutils` costs milliseconds of start-up).
"""

from __future__ import annotations

Table = tuple[tuple[str, str], ...]

HTML: Table = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&#x27;"))
"""As html.escape(quote=True): text and attribute values alike."""

XML_TEXT: Table = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))
"""As ElementTree escapes character data (so "]]>", which text may not hold, never appears)."""

XML_ATTRIBUTE: Table = (
    *XML_TEXT,
    ('"', "&quot;"),
    # As references, which a parser keeps: written out, XML's attribute-value normalisation
    # would read them back as spaces.
    ("\r", "&#13;"),
    ("\n", "&#10;"),
    ("\t", "&#09;"),
)
"""As ElementTree escapes a (double-quoted) attribute value."""


def escaped(text: str, table: Table) -> str:
    """`text` with each character of `table` replaced by its reference, in table order."""
    for char, reference in table:
        if char in text:
            text = text.replace(char, reference)
    return text


def esc(text: object) -> str:
    """Text or attribute value for HTML, escaped as html.escape(quote=True) escapes it."""
    return escaped(str(text), HTML)
