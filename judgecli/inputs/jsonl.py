"""Reading JSON Lines: a file's numbered lines (a BOM, CRLF line ends and blank lines
tolerated), each one JSON object, and every problem said in plain words with `file:line`
and the fix (a line cut short, a trailing comma, NUL bytes, a JSON array file), as
yamlfile.py says YAML's. What the objects must hold is their reader's (dataset.py: cases,
labels.py: human labels).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from judgecli.errors import DatasetError

BOM = b"\xef\xbb\xbf"
ANY_EXAMPLE = '{"id": "q1", ...}'
"""A JSONL line of no particular kind, for hints."""


def iter_lines(path: Path) -> Iterator[tuple[int, int, str]]:
    """Yield (line number, byte offset, decoded text) for each non-blank line; BOM and CRLF
    tolerated.
    """
    with open_input(path, "rb") as handle:
        offset = 0
        for number, raw in enumerate(handle, start=1):
            start, offset = offset, offset + len(raw)
            text = decode_line(
                path, number, raw[3:] if number == 1 and raw.startswith(BOM) else raw
            )
            if text.strip():
                yield number, start, text


def open_input(path: Path, mode: str, **kwargs: Any) -> IO[Any]:
    """`path` opened for reading, or a DatasetError naming it (missing, unreadable)."""
    try:
        return path.open(mode, **kwargs)
    except FileNotFoundError:
        where = "" if path.is_absolute() else f" (relative to {Path.cwd()})"
        raise DatasetError(path, None, "no such file", hint=f"check the path{where}") from None
    except IsADirectoryError:
        kind = path.suffix or ".jsonl"
        raise DatasetError(
            path, None, "is a folder, not a file", hint=f"give the path of a {kind} file"
        ) from None
    except OSError as err:
        raise DatasetError(
            path, None, f"cannot read: {err.strerror}", hint="check the file's permissions"
        ) from None


def decode_line(path: Path, number: int, raw: bytes) -> str:
    """A line's bytes as text, or a DatasetError naming the line."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DatasetError(
            path, number, f"not UTF-8 (byte {err.start + 1})", hint="save the file as UTF-8"
        ) from None


def read_line_at(path: Path, number: int, offset: int) -> str:
    """The text of line `number`, which starts at byte `offset` (found by an earlier scan)."""
    with path.open("rb") as handle:
        handle.seek(offset)
        raw = handle.readline()
    return decode_line(path, number, raw[3:] if number == 1 and raw.startswith(BOM) else raw)


def parse_object(
    path: Path, number: int, text: str, *, example: str = ANY_EXAMPLE
) -> dict[str, Any]:
    """One JSONL line as a JSON object, or a DatasetError naming file:line and the fix
    (`example`: a good line of the file's kind, for the hint).
    """
    if number == 1:
        check_not_json(path, text)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        problem, hint = line_problem(text, err, example=example)
        raise DatasetError(path, number, problem, hint=hint) from None
    if not isinstance(obj, dict):
        kind = type(obj).__name__
        raise DatasetError(
            path,
            number,
            f"expected a JSON object, got {kind}",
            hint=f"each line is one JSON object, e.g. {example}",
        )
    return obj


def check_not_json(path: Path, first: str) -> None:
    """DatasetError when the file's first line says it is a JSON file rather than JSON
    Lines: an array (`[`), or an object spread over several lines (`{` alone).
    """
    opened = first.strip()
    name, target = shlex.quote(str(path)), shlex.quote(f"{path.stem}.jsonl")
    if opened.startswith("["):
        raise DatasetError(
            path,
            1,
            "this is a JSON array; JSONL needs one object per line",
            hint=f"convert it: jq -c '.[]' {name} > {target}",
        )
    if opened == "{":
        raise DatasetError(
            path,
            1,
            "this is pretty-printed JSON; JSONL needs each object whole on one line",
            hint=f"convert it: jq -c . {name} > {target}",
        )


def line_problem(text: str, err: json.JSONDecodeError, *, example: str) -> tuple[str, str]:
    """What is wrong with a line that is not JSON, in plain words, and the fix."""
    # The decoder counts the line's own newline as a second line: the column is taken on
    # the line's text instead, at most one past its end.
    line = text.rstrip("\r\n")
    column = f"(column {min(err.pos, len(line)) + 1})"
    if "\x00" in text:
        return (
            f"invalid JSON: a NUL byte (column {text.index(chr(0)) + 1}): not text",
            "remove the NUL bytes; is this a binary file, or text saved as UTF-16? "
            "JSONL is UTF-8 text",
        )
    ended = err.pos >= len(text.rstrip())
    if err.msg.startswith("Unterminated string") or (
        err.msg.startswith("Invalid control character") and ended
    ):
        return (
            f"invalid JSON: the line ends inside a string {column}",
            "the line is cut short, or a text holds a raw line break: write it as \\n",
        )
    if ended:
        return (
            f"invalid JSON: the line ends before its object does {column}",
            f"the line is cut short: each line holds one whole JSON object, e.g. {example}",
        )
    if err.msg == "Extra data":
        rest = text[err.pos :].strip()
        if rest == ",":
            return (
                f"invalid JSON: a ',' after the object {column}",
                "remove the ',': JSONL has one object per line and no commas between them",
            )
        return (
            f"invalid JSON: more after the object {column}",
            "each line holds one JSON object and nothing after it: put each on a line of its own",
        )
    if err.msg.startswith("Invalid control character"):
        return (
            f"invalid JSON: a control character inside a string {column}",
            "write a tab as \\t and a line break as \\n inside a JSON string",
        )
    if err.msg.startswith("Expecting property name"):
        return (
            f"invalid JSON: {err.msg} {column}",
            "JSON puts keys in double quotes and has no ',' before a closing '}'",
        )
    return (
        f"invalid JSON: {err.msg} {column}",
        f"each line holds one JSON object, e.g. {example}",
    )
