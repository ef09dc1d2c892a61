"""Datasets: JSONL files of cases, read as a stream with `file:line` errors.

A dataset is read twice: `scan_dataset` validates every line and picks the lines to judge
(holding only ids and line numbers, so a million-line file costs megabytes, not
gigabytes), then `iter_cases` streams those lines again as `Case` objects while the runner
works. All input is therefore checked before the first judge call.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from judgecli.errors import DatasetError
from judgecli.inputs.conversation import (
    Role,
    Turn,
    TurnsError,
    answer_positions,
    last_user_turn,
    parse_turns,
    render_turns,
)
from judgecli.inputs.jsonl import iter_lines, parse_object
from judgecli.inputs.sampling import SampleSize, Selector
from judgecli.inputs.shard import Shard

T = TypeVar("T")
KNOWN_FIELDS = ("id", "input", "output", "reference", "context", "category", "messages")
TEXT_FIELDS = ("input", "output", "reference", "category")
# Rubric fields (`requires`) a conversation's `messages` gives a case: the last user turn
# before the answer graded, the answer, and the turns before it.
FROM_MESSAGES = frozenset({"input", "output", "conversation"})
CASE_EXAMPLE = '{"id": "q1", "input": "What is 2+2?", "output": "4"}'
"""One case as a JSONL line, for hints."""


class Case(BaseModel):
    """One case to grade. Unknown keys of the JSON line are kept in `metadata`."""

    model_config = ConfigDict(frozen=True)

    id: str
    input: str | None = None
    output: str | None = None
    reference: str | None = None
    context: list[str] | None = None
    category: str | None = None
    messages: list[Turn] | None = None
    """A conversation (judgecli.inputs.conversation), instead of input and output: its last turn is
    the assistant's answer graded."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    line: int = 0
    """Line number in the source file (1-based), for messages."""

    def field_text(self, name: str) -> str | None:
        """The named case field as prompt text (context passages are numbered).

        A conversation gives `input` (the last user turn before the answer), `output` (the
        answer: its last turn) and `conversation` (the turns before the answer); a case
        with an input is a one-turn conversation.
        """
        if name == "context":
            if self.context is None:
                return None
            return "\n\n".join(f"[{i}] {p}" for i, p in enumerate(self.context, start=1))
        if self.messages is not None and name in FROM_MESSAGES:
            before = self.messages[:-1]
            if name == "conversation":
                return render_turns(before)
            return last_user_turn(before) if name == "input" else self.messages[-1].content
        if name == "conversation":
            if self.input is None:
                return None
            return render_turns([Turn(role=Role.USER, content=self.input)])
        value = getattr(self, name)
        return value if value is None else str(value)

    def answer_turns(self) -> list[Case]:
        """A conversation as one case per assistant turn, each ending at that turn (what
        `turns: each` grades); a case without messages is its own only turn.
        """
        if self.messages is None:
            return [self]
        return [
            self.model_copy(update={"messages": self.messages[: i + 1]})
            for i in answer_positions(self.messages)
        ]


@dataclass(frozen=True)
class DatasetScan:
    """What the validation pass learned: which lines to judge, and what to warn about."""

    path: Path
    lines: list[int]
    """Line numbers (1-based) of the selected cases, in file order."""
    total: int
    """Valid cases in the file, before --limit/--sample."""
    warnings: list[str] = field(default_factory=list)


def parse_field_map(pairs: list[str]) -> dict[str, str]:
    """`--field output=answer` flags → {"output": "answer"} (our name → the file's name)."""
    mapping: dict[str, str] = {}
    for pair in pairs:
        ours, sep, theirs = pair.partition("=")
        if not sep or not ours or not theirs:
            raise DatasetError(
                "--field", None, f"{pair!r} is not NAME=COLUMN", hint="e.g. --field output=answer"
            )
        if ours not in KNOWN_FIELDS:
            raise DatasetError(
                "--field",
                None,
                f"{ours!r} is not a case field {KNOWN_FIELDS}",
                hint="--field NAME=COLUMN names a case field first, then your file's column: "
                "e.g. --field output=answer",
            )
        mapping[ours] = theirs
    return mapping


def parse_case(
    path: Path, number: int, text: str, *, field_map: Mapping[str, str], requires: list[str]
) -> Case:
    """Turn one JSON line into a Case, or raise DatasetError naming file:line and the fix."""
    obj = parse_object(path, number, text, example=CASE_EXAMPLE)
    values: dict[str, Any] = {}
    for name in KNOWN_FIELDS:
        key = field_map.get(name, name)
        if key in obj:
            values[name] = obj.pop(key)
    case_id = values.pop("id", None)
    if case_id is None:
        case_id = f"line-{number}"
    elif isinstance(case_id, bool) or not isinstance(case_id, str | int):
        raise DatasetError(
            path,
            number,
            f'"id" must be a string or integer, got {case_id!r}',
            hint='write the id as a string, e.g. "id": "q1"',
        )
    for name in TEXT_FIELDS:
        if name in values and values[name] is not None and not isinstance(values[name], str):
            raise not_text(path, number, name, field_map.get(name, name), values[name])
    if "messages" in values:
        values["messages"] = conversation_turns(path, number, values)
    context = values.get("context")
    if isinstance(context, str):
        values["context"] = [context]
    elif context is not None and not (
        isinstance(context, list) and all(isinstance(p, str) for p in context)
    ):
        raise DatasetError(
            path,
            number,
            '"context" must be a string or a list of strings',
            hint='e.g. "context": "a passage" or "context": ["passage 1", "passage 2"]',
        )
    for name in requires:
        # An empty string (a refusal, a truncated answer) is data to grade, not a missing
        # field: only an absent key or null is refused.
        key = field_map.get(name, name)
        if values.get("messages") is not None and name in FROM_MESSAGES:
            continue
        if name == "conversation":
            if values.get("input") is None:
                raise DatasetError(
                    path,
                    number,
                    f'missing required field "{field_map.get("messages", "messages")}"',
                    hint=f"the rubric requires {requires}: give the conversation as messages "
                    '(or an "input": a conversation of one turn)',
                )
            continue
        if name not in values:
            raise DatasetError(
                path,
                number,
                f'missing required field "{key}"',
                hint=f"the rubric requires {requires}; "
                f"use --field {name}=COLUMN to map another name",
            )
        if values[name] is None:
            raise DatasetError(
                path,
                number,
                f'"{key}" is null',
                hint=f'write "" for an empty {name} (it is judged as given), or drop the case',
            )
    return Case(id=str(case_id), metadata=obj, line=number, **values)


def not_text(path: Path, number: int, name: str, key: str, value: object) -> DatasetError:
    """A text field (input, output, reference, category; `key` in the file) holding another
    JSON type.
    """
    kind = type(value).__name__
    if isinstance(value, list | dict) and name in ("input", "output"):
        hint = (
            f'write "{key}" as one text; a conversation goes in "messages": '
            '[{"role": "user", "content": "..."}, {"role": "assistant", "content": "..."}]'
        )
    elif isinstance(value, list | dict):
        hint = f'write "{key}" as one text, e.g. "{key}": "some text"'
    else:
        hint = f"write it as text: {json.dumps(key)}: {json.dumps(json.dumps(value))}"
    return DatasetError(path, number, f'"{key}" must be a string, got {kind}', hint=hint)


def conversation_turns(path: Path, number: int, values: dict[str, Any]) -> list[Turn] | None:
    """The case's `messages` as turns (None when null), or DatasetError naming the line."""
    raw = values["messages"]
    if raw is None:
        return None
    clash = " and ".join(
        f'"{name}"' for name in ("input", "output") if values.get(name) is not None
    )
    if clash:
        raise DatasetError(
            path,
            number,
            f'a case has "messages" or {clash}, not both',
            hint="in a conversation, the user turns are the input and the assistant turns "
            "the answers",
        )
    try:
        return parse_turns(raw)
    except TurnsError as err:
        raise DatasetError(path, number, err.problem, hint=err.hint) from None


def is_blank(case: Case, name: str) -> bool:
    """Whether the case's field is present but empty (or only whitespace)."""
    text = case.field_text(name)
    return text is not None and not text.strip()


class EmptyFields:
    """Counts the selected cases whose required fields are empty, for one scan warning per
    field: a dataset of empty answers is valid, but a user should hear how many there are.
    Only the lines of empty fields are kept, so memory follows the empties, not the file.
    """

    def __init__(self, path: Path, names: list[str], field_map: Mapping[str, str]) -> None:
        self._path = path
        self._names = names
        self._field_map = field_map
        self._lines: dict[str, list[int]] = {name: [] for name in names}

    def note(self, case: Case) -> None:
        """Record the case's empty fields."""
        for name in self._names:
            if is_blank(case, name):
                self._lines[name].append(case.line)

    def warnings(self, selected: Iterable[int]) -> list[str]:
        """`path: 3 cases have an empty "output" (judged as given)`, for the selected lines."""
        chosen = set(selected)
        found: list[str] = []
        for name, lines in self._lines.items():
            count = sum(line in chosen for line in lines)
            if count:
                key = self._field_map.get(name, name)
                verb = "case has" if count == 1 else "cases have"
                found.append(f'{self._path}: {count} {verb} an empty "{key}" (judged as given)')
        return found


def scan_dataset(
    path: Path,
    *,
    requires: list[str],
    field_map: Mapping[str, str] | None = None,
    limit: int | None = None,
    sample: int | SampleSize | None = None,
    seed: int = 0,
    only: set[str] | None = None,
    shard: Shard | None = None,
) -> DatasetScan:
    """Validate every line of `path` and choose the cases to judge (see Selector); with
    `only`, just the cases with those ids (the rest are still validated); with `shard`,
    of the chosen cases those of the shard (chosen first, so that N shards judge exactly
    what one machine would).
    """
    field_map = field_map or {}
    first_line: dict[str, int] = {}
    selector: Selector[int] = Selector(limit=limit, sample=sample, seed=seed)
    empty = EmptyFields(path, requires, field_map)
    derived = 0
    for number, _, text in iter_lines(path):
        case = parse_case(path, number, text, field_map=field_map, requires=requires)
        check_unique(path, case, first_line)
        derived += case.id == f"line-{number}" and "id" not in field_map
        empty.note(case)
        if only is None or case.id in only:
            selector.offer(number)
    if not first_line:
        raise no_cases(path)
    lines = selector.chosen(key=int)
    if shard is not None:
        ids = {line: case_id for case_id, line in first_line.items()}
        lines = [line for line in lines if shard.holds(ids[line])]
    warnings = [f"{path}: {derived} case(s) without an id; using line-<number> as id"] * bool(
        derived
    )
    return DatasetScan(
        path=path, lines=lines, total=len(first_line), warnings=warnings + empty.warnings(lines)
    )


def no_cases(path: Path) -> DatasetError:
    """A dataset without a case (empty, or only blank lines)."""
    return DatasetError(
        path,
        None,
        "no cases (the file is empty)",
        hint=f"a dataset holds one case per line, e.g. {CASE_EXAMPLE}",
    )


def check_unique(path: Path, case: Case, first_line: dict[str, int]) -> None:
    """Record the case's id, or raise on a duplicate naming both lines."""
    if case.id in first_line:
        raise DatasetError(
            path,
            case.line,
            f"duplicate id {case.id!r} (first on line {first_line[case.id]})",
            hint="ids must be unique within a file",
        )
    first_line[case.id] = case.line


def iter_cases(
    scan: DatasetScan, *, requires: list[str], field_map: Mapping[str, str] | None = None
) -> Iterator[Case]:
    """Stream the cases `scan` selected, in file order."""
    wanted = iter(scan.lines)
    target = next(wanted, None)
    for number, _, text in iter_lines(scan.path):
        if target is None:
            return
        if number == target:
            yield parse_case(scan.path, number, text, field_map=field_map or {}, requires=requires)
            target = next(wanted, None)


def scan_labelled_cases(
    path: Path, *, requires: list[str], field_map: Mapping[str, str] | None = None
) -> DatasetScan:
    """The cases of a labels file that also holds case fields: one per id (its first line;
    further lines of an id are other annotators' labels and must agree on the fields).
    """
    field_map = field_map or {}
    first: dict[str, Case] = {}
    empty = EmptyFields(path, requires, field_map)
    for number, _, text in iter_lines(path):
        case = parse_case(path, number, text, field_map=field_map, requires=requires)
        seen = first.setdefault(case.id, case)
        if seen is case:
            empty.note(case)
        fields = ("input", "output", "reference", "context", "messages")
        if seen is not case and any(getattr(seen, f) != getattr(case, f) for f in fields):
            raise DatasetError(
                path,
                number,
                f"id {case.id!r} has other case fields than on line {seen.line}",
                hint="every label line of a case must carry the same input and output",
            )
    if not first:
        raise no_cases(path)
    lines = sorted(c.line for c in first.values())
    return DatasetScan(path=path, lines=lines, total=len(lines), warnings=empty.warnings(lines))
