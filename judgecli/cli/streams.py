"""judge's output streams: consoles that keep lines whole in files and pipes, and stdout
that outlives its reader.

`judge rubrics list > l.txt`, `judge gate ... | grep PASS`: with no terminal to fit, rich
lays output out for 80 columns, so a table's last column was cut mid-word and a verdict
line broken in two, which a `grep 'PASS —.*Gate'` in CI then misses. A file or a CI log has
no width: `WholeLines` lays out for an unbounded one there (unless COLUMNS says otherwise),
and for the terminal's width in a terminal.

`judge report RUN | head`, `judge pairwise ... | grep PASS`: the reader may close the pipe
before judge has written everything. Python then raises BrokenPipeError on the next write or
flush, and click turns that into exit 1 — which CI reads as "the gate failed". The outcome
of a run does not depend on who reads its tables, so once the reader is gone the rest of
the output goes to /dev/null and the command exits with its own code.
"""

from __future__ import annotations

import os
from typing import Any, TextIO

from rich.align import AlignMethod
from rich.console import Console, ConsoleDimensions
from rich.rule import Rule
from rich.style import Style
from rich.text import TextType

UNBOUNDED = 100_000
"""The width a console lays out for when it writes to no terminal: longer than any line
judge prints, so none is wrapped or cropped (rich pads nothing to the width but rules)."""
RULE_WIDTH = 80
"""A rule's width when there is no terminal width to span."""


class WholeLines(Console):
    """A rich Console that keeps every line whole when its stream is not a terminal.

    In a terminal it is rich's Console as it is. Elsewhere (a file, a pipe, a CI log) it
    lays out for UNBOUNDED columns, so tables take their natural width and no text is
    wrapped or cropped; an explicit COLUMNS (or `width=`) still wins. Decided at each
    write, since the stream behind the console can change (tests swap sys.stdout).
    """

    @property
    def size(self) -> ConsoleDimensions:
        """The terminal's size, or an unbounded width without a terminal."""
        size = super().size
        if self._width is None and not self.is_terminal and "COLUMNS" not in self._environ:
            return ConsoleDimensions(UNBOUNDED, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        """Set the width and height, as rich's Console does."""
        width, height = new_size
        self._width, self._height = width, height

    def rule(
        self,
        title: TextType = "",
        *,
        characters: str = "─",
        style: str | Style = "rule.line",
        align: AlignMethod = "center",
    ) -> None:
        """A rule across the terminal, or RULE_WIDTH wide without one."""
        line = Rule(title=title, characters=characters, style=style, align=align)
        self.print(line, width=RULE_WIDTH if self.width == UNBOUNDED else None)


class PipeSafe:
    """A text stream that stops writing, silently, when its reader is gone."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        """Write, unless the reader left."""
        if not self.gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._leave()
        return len(text)

    def flush(self) -> None:
        """Flush, unless the reader left."""
        if not self.gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._leave()

    def _leave(self) -> None:
        self.gone = True
        # What is still buffered would be flushed at interpreter exit and fail again
        # ("Exception ignored ... BrokenPipeError", exit 120): send it to /dev/null.
        try:
            fd = self._stream.fileno()
        except (AttributeError, OSError, ValueError):
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def pipe_safe(stream: TextIO) -> TextIO:
    """`stream` wrapped in PipeSafe (once)."""
    return stream if isinstance(stream, PipeSafe) else PipeSafe(stream)  # type: ignore[return-value]
