"""The cells and tables every report is built from: Section, how numbers are shown, and how
a Section becomes a terminal table that fits the 80 columns of a pipe or CI log.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.table import Table

from judgecli.stats.intervals import Interval, too_few

NA = "n/a"
TOO_FEW_TEXT = "too few to tell"
"""What a group's interval cell says when the group has fewer than TOO_FEW cases."""

TERMINAL_WIDTH = 80
"""The width tables are laid out for: rich uses 80 columns when stderr is not a terminal
(pipes, CI logs), where a cut label or a wrapped interval cannot be widened away."""
SHORT_CELL = 24
"""Cells up to this long (numbers, intervals, counts) are never wrapped; longer ones are text."""
# A header may break after a space or an en dash ("judge–" / "human").
HEADER_BREAK = re.compile(r"(?<=[ –])")


@dataclass(frozen=True)
class Section:
    """A titled table of a report."""

    title: str
    header: list[str]
    rows: Sequence[tuple[str, ...]]
    note: str | None = None
    """A sentence under the table saying what its numbers mean in plain words."""


def heading(title: str) -> str:
    """A section title as a heading: its first letter upper-cased, the rest kept (names such
    as Wilson and PPI++ keep their case, which str.capitalize would lower).
    """
    return title[:1].upper() + title[1:]


def fmt(value: float | None, digits: int = 2) -> str:
    """A number for a report cell."""
    return NA if value is None else f"{value:.{digits}f}"


def fmt_pct(value: float | None) -> str:
    """A share as a percentage."""
    return NA if value is None else f"{value:.1%}"


def money(value: float | None) -> str:
    """USD to four places, n/a when unknown."""
    return NA if value is None else f"${value:.4f}"


def fmt_ci(ci: Interval | None, *, pct: bool = False, why: str | None = None) -> str:
    """A 95% interval as [lo, hi]; without one "n/a", and why when the summary says
    ("n/a (too few informative cases: ...)", its `no_interval` reason).
    """
    if ci is None or ci[0] is None or ci[1] is None:
        return no_interval_text(why)
    show = fmt_pct if pct else fmt
    return f"[{show(ci[0])}, {show(ci[1])}]"


def no_interval_text(why: str | None) -> str:
    """What an interval cell says without an interval: "n/a", with why when known."""
    return NA if why is None else f"{NA} ({why})"


def reason_for(no_interval: dict[str, str] | None, key: str) -> str | None:
    """Why the statistic `key` has no interval, from a summary object's `no_interval`."""
    return None if no_interval is None else no_interval.get(key)


def group_ci(ci: Interval | None, n: int, *, pct: bool = False, why: str | None = None) -> str:
    """A group's (category's) interval, or "too few to tell" under TOO_FEW cases: there the
    interval is either undefined or so wide that printing it invites reading it.
    """
    return TOO_FEW_TEXT if too_few(n) else fmt_ci(ci, pct=pct, why=why)


def count_of(n: int | None, singular: str, plural: str | None = None) -> str:
    """'1 tie', '21 losses': a count with its noun in the right number."""
    noun = singular if n == 1 else (plural or f"{singular}s")
    return f"{NA if n is None else n} {noun}"


def wrap_header(header: str, width: int) -> str:
    """A header broken into lines of at most `width` cells at spaces and en dashes (a piece
    longer than `width` keeps its own line: it is never cut).
    """
    lines: list[str] = []
    line = ""
    for piece in HEADER_BREAK.split(header):
        if line and cell_len((line + piece).rstrip()) > width:
            lines.append(line.rstrip())
            line = piece
        else:
            line += piece
    return "\n".join([*lines, line.rstrip()])


def table_width(widths: Sequence[int]) -> int:
    """Cells a rich table with the default box needs: each column's content, one space of
    padding either side and a border, plus the closing border.
    """
    return sum(widths) + 3 * len(widths) + 1


def rich_table(sec: Section, *, width: int = TERMINAL_WIDTH) -> Table:
    """A Section as a rich Table laid out to fit `width` columns without cutting a label or
    a number: headers wider than their column wrap first (at spaces and en dashes); short
    cells (numbers, intervals) never wrap; label and text columns wrap at words, folding a
    word too long for the column instead of cutting it with an ellipsis.
    """
    columns = [[row[i] for row in sec.rows] for i in range(len(sec.header))]
    content = [max((cell_len(c) for c in column), default=0) for column in columns]
    headers = list(sec.header)
    natural = [max(cell_len(h), w) for h, w in zip(headers, content, strict=True)]
    if table_width(natural) > width:
        headers = [wrap_header(h, max(w, 1)) for h, w in zip(headers, content, strict=True)]
    table = Table(title=sec.title, caption=sec.note, caption_justify="left")
    for i, (name, cells) in enumerate(zip(headers, content, strict=True)):
        short = i > 0 and cells <= SHORT_CELL
        table.add_column(
            name, justify="left" if i == 0 else "right", no_wrap=short, overflow="fold"
        )
    for row in sec.rows:
        table.add_row(*row)
    return table
