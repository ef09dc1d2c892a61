"""Datasets: files of cases (JSONL, CSV, Parquet, hf://: rows.py), read as a stream with
`file:line` errors.

A dataset is read twice: `scan_dataset` validates every row and picks the rows to judge
(holding only ids and row numbers, so a million-row file costs megabytes, not
gigabytes), then `iter_cases` streams those rows again as `Case` objects while the runner
works. All input is therefore checked before the first judge call.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from judgecli.errors import DatasetError
from judgecli.inputs.case_fields import (
    CASE_EXAMPLE,
    FROM_MESSAGES,
    KNOWN_FIELDS,
    RUN_FIELDS,
    case_values,
)
from judgecli.inputs.conversation import (
    Turn,
    answer_index,
    answer_positions,
    final_answer,
    last_user_turn,
    render_turns,
)
from judgecli.inputs.empty_fields import EmptyFields
from judgecli.inputs.images import ImageCases, ImagesShown, image_count
from judgecli.inputs.jsonl import parse_object
from judgecli.inputs.rows import DataPath, Format, JsonlSource, RowSource
from judgecli.inputs.rubric_items import RubricItem, render_items
from judgecli.inputs.sampling import SampleSize, Selector
from judgecli.inputs.shard import Shard
from judgecli.inputs.sources import open_rows
from judgecli.inputs.tools import ToolCall
from judgecli.inputs.trajectory import plain_run, render_step, render_trajectory

T = TypeVar("T")


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
    the assistant's answer graded. An agent's run is one too: its turns may call tools."""
    tools: list[dict[str, Any]] | None = None
    """The tool schemas an agent's run was offered, as given (inputs.tools)."""
    expected_tool_calls: list[ToolCall] | None = None
    """The tool calls the case expects the run to make (`[]`: none), for the deterministic
    check of the calls it made."""
    rubric_items: list[RubricItem] | None = None
    """The case's own checklist (inputs.rubric_items), graded item by item by a `checklist`
    rubric."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    line: int = 0
    """Line (row) number in the source file (1-based), for messages."""

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
        if name == "rubric_items":
            return None if self.rubric_items is None else render_items(self.rubric_items)
        if name in RUN_FIELDS:
            turns = self.field_turns(name)
            if turns is None:
                return None
            if name == "trajectory":
                return render_trajectory(turns, self.tools)
            return render_step(turns) if name == "step" else render_turns(turns)
        if self.messages is not None and name in FROM_MESSAGES:
            turns = self.field_turns("conversation") or []
            return last_user_turn(turns) if name == "input" else final_answer(self.messages)
        value = getattr(self, name)
        return value if value is None else str(value)

    @property
    def images_shown(self) -> int:
        """How many images the case shows (its fields' and turns' parts: inputs.images)."""
        turns = [turn.content for turn in self.messages or []]
        return sum(image_count(text) for text in [self.input, self.output, self.reference, *turns])

    def field_turns(self, name: str) -> list[Turn] | None:
        """The turns `{conversation}` (those before the answer graded) or `{trajectory}` and
        `{step}` (the whole run) show; a case with an input is a run of one user turn (and
        its answer); None for a case with neither.
        """
        if self.messages is None:
            if self.input is None:
                return None
            return plain_run(self.input, None if name == "conversation" else self.output)
        if name != "conversation":
            return list(self.messages)
        # A run that ended on a tool's result has no answer: all of it came before.
        at = answer_index(self.messages)
        return self.messages[:at] if at is not None else list(self.messages)

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
    """What the validation pass learned: which rows to judge, and what to warn about."""

    source: RowSource
    lines: list[int]
    """Line (row) numbers of the selected cases, in file order."""
    total: int
    """Valid cases in the file, before --limit/--sample."""
    warnings: list[str] = field(default_factory=list)
    images: ImagesShown | None = None
    """The selected cases that show images (a vision judge is needed), if any."""

    @property
    def path(self) -> Path:
        """The dataset's path."""
        return self.source.path

    @property
    def name(self) -> str:
        """The dataset as messages name it."""
        return self.source.name


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
    return case_from(JsonlSource(path), number, obj, field_map=field_map, requires=requires)


def open_cases(path: DataPath | RowSource, *, seekable: bool = False) -> RowSource:
    """A dataset of cases as a row source (rows.open_rows)."""
    return open_rows(path, example=CASE_EXAMPLE, seekable=seekable)


def case_from(
    source: RowSource,
    number: int,
    fields: Mapping[str, Any],
    *,
    field_map: Mapping[str, str],
    requires: list[str],
) -> Case:
    """Turn one row's fields into a Case, or raise DatasetError naming the row and the fix.
    Fields that are not the case's own are kept in its metadata.
    """
    case_id, values, metadata = case_values(
        source, number, fields, field_map=field_map, requires=requires
    )
    return Case(id=case_id, metadata=metadata, line=number, **values)


def scan_dataset(
    path: DataPath | RowSource,
    *,
    requires: list[str],
    field_map: Mapping[str, str] | None = None,
    limit: int | None = None,
    sample: int | SampleSize | None = None,
    seed: int = 0,
    only: set[str] | None = None,
    shard: Shard | None = None,
) -> DatasetScan:
    """Validate every row of `path` and choose the cases to judge (see Selector); with
    `only`, just the cases with those ids (the rest are still validated); with `shard`,
    of the chosen cases those of the shard (chosen first, so that N shards judge exactly
    what one machine would).
    """
    field_map = field_map or {}
    source = open_cases(path)
    first_line: dict[str, int] = {}
    selector: Selector[int] = Selector(limit=limit, sample=sample, seed=seed)
    empty = EmptyFields(source.name, requires, field_map)
    shown = ImageCases()
    derived = 0
    for row in source.rows():
        case = case_from(source, row.number, row.fields, field_map=field_map, requires=requires)
        check_unique(source, case, first_line)
        derived += case.id == f"{source.unit}-{row.number}" and "id" not in field_map
        empty.note(case)
        shown.note(case.images_shown, row.number, f"{source.name}:{row.number}")
        if only is None or case.id in only:
            selector.offer(row.number)
    if not first_line:
        raise no_cases(source)
    lines = selector.chosen(key=int)
    if shard is not None:
        ids = {line: case_id for case_id, line in first_line.items()}
        lines = [line for line in lines if shard.holds(ids[line])]
    unit = source.unit
    warnings = [
        f"{source.name}: {derived} case(s) without an id; using {unit}-<number> as id"
    ] * bool(derived)
    return DatasetScan(
        source=source,
        lines=lines,
        total=len(first_line),
        warnings=warnings + empty.warnings(lines),
        images=shown.shown(lines),
    )


def no_cases(source: RowSource) -> DatasetError:
    """A dataset without a case (empty, only blank lines, or a table's header alone)."""
    if source.format is Format.HUB:
        return source.error(None, "no cases (the split is empty)", hint="name another split")
    if source.format is Format.OTEL:
        return source.error(
            None,
            "no cases: no trace has a GenAI span (a gen_ai.* attribute)",
            hint="export the traces of an instrumented agent (docs/agents.md, "
            '"OpenTelemetry traces")',
        )
    if source.format.text_cells:
        sep = "\t" if source.format is Format.TSV else ","
        hint = (
            f"a header row names the columns, then one case per row, e.g. id{sep}input{sep}output"
        )
    elif source.format is Format.PARQUET:
        hint = "a Parquet dataset holds one case per row, with columns such as id, input, output"
    else:
        hint = f"a dataset holds one case per line, e.g. {CASE_EXAMPLE}"
    return source.error(None, "no cases (the file is empty)", hint=hint)


def check_unique(source: RowSource, case: Case, first_line: dict[str, int]) -> None:
    """Record the case's id, or raise on a duplicate naming both rows."""
    if case.id in first_line:
        raise source.error(
            case.line,
            f"duplicate id {case.id!r} (first on {source.unit} {first_line[case.id]})",
            hint="ids must be unique within a file",
        )
    first_line[case.id] = case.line


def iter_cases(
    scan: DatasetScan, *, requires: list[str], field_map: Mapping[str, str] | None = None
) -> Iterator[Case]:
    """Stream the cases `scan` selected, in file order."""
    wanted = iter(scan.lines)
    target = next(wanted, None)
    source = scan.source
    for row in source.rows():
        if target is None:
            return
        if row.number == target:
            yield case_from(
                source, row.number, row.fields, field_map=field_map or {}, requires=requires
            )
            target = next(wanted, None)


def scan_labelled_cases(
    path: DataPath | RowSource,
    *,
    requires: list[str],
    field_map: Mapping[str, str] | None = None,
) -> DatasetScan:
    """The cases of a labels file that also holds case fields: one per id (its first row;
    further rows of an id are other annotators' labels and must agree on the fields).
    """
    field_map = field_map or {}
    source = open_cases(path)
    first: dict[str, Case] = {}
    empty = EmptyFields(source.name, requires, field_map)
    shown = ImageCases()
    for row in source.rows():
        case = case_from(source, row.number, row.fields, field_map=field_map, requires=requires)
        seen = first.setdefault(case.id, case)
        if seen is case:
            empty.note(case)
            shown.note(case.images_shown, row.number, f"{source.name}:{row.number}")
        fields = ("input", "output", "reference", "context", "messages")
        if seen is not case and any(getattr(seen, f) != getattr(case, f) for f in fields):
            raise source.error(
                row.number,
                f"id {case.id!r} has other case fields than on {source.unit} {seen.line}",
                hint="every label row of a case must carry the same input and output",
            )
    if not first:
        raise no_cases(source)
    lines = sorted(c.line for c in first.values())
    return DatasetScan(
        source=source,
        lines=lines,
        total=len(lines),
        warnings=empty.warnings(lines),
        images=shown.shown(lines),
    )


def case_ids(path: DataPath | RowSource, field_map: Mapping[str, str]) -> list[str]:
    """The case ids of a dataset, in file order (each row checked as a case)."""
    source = open_cases(path)
    return [
        case_from(source, row.number, row.fields, field_map=field_map, requires=[]).id
        for row in source.rows()
    ]
