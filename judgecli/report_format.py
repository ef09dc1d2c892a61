"""The cells and tables every report is built from: Section, and how numbers are shown."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judgecli.stats.intervals import Interval

NA = "n/a"


@dataclass(frozen=True)
class Section:
    """A titled table of a report."""

    title: str
    header: list[str]
    rows: Sequence[tuple[str, ...]]


def fmt(value: float | None, digits: int = 2) -> str:
    """A number for a report cell."""
    return NA if value is None else f"{value:.{digits}f}"


def fmt_pct(value: float | None) -> str:
    """A share as a percentage."""
    return NA if value is None else f"{value:.1%}"


def money(value: float | None) -> str:
    """USD to four places, n/a when unknown."""
    return NA if value is None else f"${value:.4f}"


def fmt_ci(ci: Interval | None, *, pct: bool = False) -> str:
    """A 95% interval as [lo, hi]."""
    if ci is None or ci[0] is None or ci[1] is None:
        return NA
    show = fmt_pct if pct else fmt
    return f"[{show(ci[0])}, {show(ci[1])}]"
