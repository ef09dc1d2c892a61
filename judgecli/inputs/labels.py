"""Human labels for `judge calibrate`: `{"id", "label", "annotator"?}` per JSONL line (or
Parquet or hf:// row, rows.py; `rater` is read as `annotator`), the rows of a CSV sheet
with `id`, `label` and `annotator` columns (`judge review export`), or the label files
`judge view` writes (`RUN/labels/<rater>.jsonl`: a file, the folder, or the run
directory; label_files.py).

A label is checked against what it labels: a score must lie on the rubric's scale, a
choice must be one of the rubric's choices (pass/fail and true/false are accepted for a
two-choice rubric), a pairwise label must be old, new or tie (`--label-map A=old,B=new`
translates other spellings). Anything else is an input error naming file:line. Labels of
none of the cases they are read for are an error too (`check_labels_match`), for calibrate
and for score's and pairwise's --labels alike.

A blind pairwise sheet (`judge review export` of a pairwise run: `output_a`/`output_b`
columns and a `code` per row) is labelled A, B or tie; the run's key maps each row's code
to which of A and B is NEW. Without the key such a sheet is an error, never a guess.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgecli.errors import ConfigError, DatasetError
from judgecli.inputs.dataset import case_ids
from judgecli.inputs.jsonl import open_input
from judgecli.inputs.label_files import (
    PLAN_COLUMNS,
    RawLabel,
    label_files,
    read_label_files,
    sheet_design,
)
from judgecli.inputs.pairs import named
from judgecli.inputs.rows import DataPath, RowSource, hub_text, shown
from judgecli.inputs.sources import open_rows
from judgecli.inputs.tables import CsvSource
from judgecli.result import Winner
from judgecli.rubric import Rubric, RubricKind

if TYPE_CHECKING:
    # A blind sheet's key is read by store.sheets, with the review module it needs.
    from judgecli.inputs.review import ReviewKey

Value = float | str
LABEL_EXAMPLE = '{"id": "q1", "label": 3}'
"""One label as a JSONL line, for hints."""


@dataclass(frozen=True)
class Label:
    """One human judgement of one case."""

    id: str
    value: Value
    """A score (float), a rubric choice, or a Winner value ("old"/"new"/"tie")."""
    annotator: str | None
    line: int
    inclusion_probability: float | None = None
    """The probability a label plan had of drawing the case (`judge review plan`), or
    None for a label made outside a plan."""
    strategy: str | None = None
    """The plan's strategy (`uniform`, `disagreement`, `uncertainty`), when it says."""
    budget: int | None = None
    """The plan's budget of labels, when it says."""


@dataclass(frozen=True)
class LabelSpace:
    """What labels may be: the kind of verdict, and for scores the scale."""

    kind: RubricKind
    choices: list[str] | None = None
    passing: str | None = None
    scale: tuple[float, float] | None = None

    @classmethod
    def of(cls, rubric: Rubric) -> LabelSpace:
        """The label space a rubric defines."""
        scale = (rubric.scale.min, rubric.scale.max) if rubric.scale else None
        return cls(
            kind=rubric.kind, choices=rubric.choices, passing=rubric.passing_choice, scale=scale
        )


def parse_label_map(text: str | None) -> dict[str, str]:
    """`A=old,B=new,1=old,2=new` → {"a": "old", ...} (keys compared case-insensitively)."""
    if not text:
        return {}
    mapping = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ConfigError(
                f"--label-map {text!r}: {part!r} is not FROM=TO",
                hint="e.g. --label-map A=old,B=new,1=old,2=new",
            )
        mapping[key.strip().casefold()] = value.strip()
    return mapping


def normalise(raw: Any, space: LabelSpace, label_map: Mapping[str, str]) -> Value | None:
    """A raw JSON label as a value of the label space, or None when it is not one."""
    if isinstance(raw, str | int | float) and not isinstance(raw, bool):
        raw = label_map.get(str(raw).strip().casefold(), raw)
    if space.kind is RubricKind.POINTWISE:
        if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
            return None
        if space.scale is not None and not space.scale[0] <= raw <= space.scale[1]:
            return None
        return float(raw)
    if space.kind is RubricKind.PAIRWISE:
        text = str(raw).strip().casefold() if isinstance(raw, str) else None
        return text if text in {w.value for w in Winner} else None
    return binary_choice(raw, space)


def binary_choice(raw: Any, space: LabelSpace) -> str | None:
    """A binary label: one of the choices, or pass/fail (true/false) for two choices."""
    choices = space.choices
    if choices is None:  # no rubric: any non-empty string is a class
        return raw.strip() if isinstance(raw, str) and raw.strip() else None
    if isinstance(raw, bool):
        raw = "pass" if raw else "fail"
    if not isinstance(raw, str):
        return None
    wanted = raw.strip().casefold()
    for choice in choices:
        if choice.casefold() == wanted:
            return choice
    if len(choices) == 2 and wanted in {"pass", "fail"}:
        passing = space.passing or choices[0]
        other = next(c for c in choices if c != passing)
        return passing if wanted == "pass" else other
    return None


def describe(space: LabelSpace) -> str:
    """What labels the space accepts, for error messages."""
    if space.kind is RubricKind.POINTWISE:
        return (
            f"a number from {space.scale[0]:g} to {space.scale[1]:g}" if space.scale else "a number"
        )
    if space.kind is RubricKind.PAIRWISE:
        return 'one of "old", "new", "tie" (use --label-map A=old,B=new for other spellings)'
    return f"one of {space.choices}" + (
        " or pass/fail" if space.choices and len(space.choices) == 2 else ""
    )


def read_labels(
    path: DataPath,
    space: LabelSpace,
    *,
    label_map: Mapping[str, str] | None = None,
    key: ReviewKey | None = None,
) -> list[Label]:
    """Every label of the file (JSONL, Parquet, hf://, or a `.csv` sheet), validated; (id,
    annotator) must be unique. A blank label (null or "" in JSONL, an empty cell in CSV) is
    skipped: a review sheet may be handed back partly filled. `key` reads a blind pairwise
    sheet.
    """
    label_map = label_map or {}
    files = None if hub_text(path) else label_files(Path(path))
    if files is not None:
        return [file_label(raw, space, label_map) for raw in read_label_files(files)]
    labels: list[Label] = []
    first: dict[tuple[str, str | None], int] = {}
    source = open_rows(path, example=LABEL_EXAMPLE)
    rows = (
        csv_rows(source, space, label_map) if isinstance(source, CsvSource) else object_rows(source)
    )
    for number, case_id, raw, annotator, fields in rows:
        blank = raw is None or raw == ""
        code = None if blank else blind_code(source, number, fields, space)
        if isinstance(case_id, bool) or not isinstance(case_id, str | int) or case_id == "":
            raise source.error(
                number,
                'missing or invalid "id" (a string or integer)',
                hint=f"a label names its case by the case's id, e.g. {LABEL_EXAMPLE}",
            )
        if blank:
            continue
        if annotator is not None and not isinstance(annotator, str | int):
            raise source.error(
                number,
                '"annotator" must be a string',
                hint='name the rater who gave the label, e.g. "annotator": "rater-1"',
            )
        if code is not None:
            raw = unblind(
                source, number, str(case_id), raw, code, key=key, space=space, label_map=label_map
            )
        value = normalise(raw, space, label_map)
        if value is None:
            raise source.error(
                number, f"label {raw!r} is not {describe(space)}", hint=label_hint(space)
            )
        who = None if annotator in (None, "") else str(annotator)
        pair = (str(case_id), who)
        if pair in first:
            by = who or "the same (unnamed) annotator"
            raise source.error(
                number,
                f"id {case_id!r} is labelled twice by {by} (first on {source.unit} {first[pair]})",
                hint='add an "annotator" field to tell raters apart',
            )
        first[pair] = number
        design = sheet_design(source.error, number, fields)
        labels.append(Label(id=str(case_id), value=value, annotator=who, line=number, **design))
    if not labels:
        raise source.error(
            None,
            "no labels (the file is empty)",
            hint=f"a labels file holds one label per line, e.g. {LABEL_EXAMPLE}",
        )
    return labels


def file_label(raw: RawLabel, space: LabelSpace, label_map: Mapping[str, str]) -> Label:
    """A standing line of `judge view`'s label files, checked against the label space."""
    value = normalise(raw.raw, space, label_map)
    if value is None:
        problem = f"label {raw.raw!r} is not {describe(space)}"
        raise DatasetError(raw.path, raw.line, problem, hint=label_hint(space))
    planned = raw.inclusion_probability
    return Label(raw.id, value, raw.rater, raw.line, planned, raw.strategy, raw.budget)


def label_hint(space: LabelSpace) -> str:
    """How to write a label the space accepts."""
    if space.kind is RubricKind.POINTWISE:
        if space.scale is None:
            return 'write the score as a number, e.g. "label": 3'
        low, high = space.scale
        return (
            f'write a score from the rubric\'s scale as a number, e.g. "label": {high:g} '
            f"({low:g} to {high:g})"
        )
    if space.kind is RubricKind.PAIRWISE:
        return 'e.g. "label": "new"; name other spellings with --label-map A=old,B=new'
    example = (space.choices or ["YES"])[0]
    return f'write one of the rubric\'s choices, e.g. "label": {json.dumps(example)}'


Row = tuple[int, Any, Any, Any, Mapping[str, Any]]
"""(line number, id, raw label, annotator, every field of the row) as read from a labels
file; the fields tell a blind pairwise row (`blind_code`)."""


def unblind(
    source: RowSource,
    number: int,
    case_id: str,
    raw: Any,
    code: str,
    *,
    key: ReviewKey | None,
    space: LabelSpace,
    label_map: Mapping[str, str],
) -> str:
    """A blind row's A/B/tie label as new/old/tie, through the key of its run."""
    if space.kind is not RubricKind.PAIRWISE:
        raise source.error(
            number,
            f"a blind pairwise sheet, but the labels must be {describe(space)}",
            hint="calibrate it against the pairwise run it was exported from",
        )
    if key is None:
        raise source.error(
            number,
            "a blind pairwise sheet (A/B answers, a code per row): its labels "
            "are read through the key `judge review export` kept with the run",
            hint="pass --results RUN_DIR/results.jsonl of that run, or --key "
            "RUN_DIR/review-key.json",
        )
    if label_map:
        raise ConfigError(
            "--label-map does not apply to a blind sheet: its key maps A and B",
            hint="drop --label-map",
        )
    entry = key.codes.get(code)
    if entry is None:
        raise source.error(
            number,
            f"code {code!r} is not in {key.path}",
            hint="the sheet comes from another run: use that run's key",
        )
    if entry.id != case_id:
        raise source.error(
            number,
            f"code {code!r} is the code of id {entry.id!r}, not {case_id!r}",
            hint="keep the id and code columns as exported",
        )
    said = raw.strip().casefold() if isinstance(raw, str) else None
    if said == Winner.TIE.value:
        return said
    if said not in ("a", "b"):
        raise source.error(number, f"label {raw!r} is not A, B or tie")
    return Winner.NEW.value if said.upper() == entry.new else Winner.OLD.value


def blind_code(
    source: RowSource, number: int, fields: Mapping[str, Any], space: LabelSpace
) -> str | None:
    """The row's code when it is a row of a blind pairwise sheet, else None. A row is
    blind when it has both answer columns of one, or a code under a pairwise rubric: a
    rater may hand back only id, code and label.
    """
    answers = "output_a" in fields and "output_b" in fields
    if not answers and not ("code" in fields and space.kind is RubricKind.PAIRWISE):
        return None
    code = fields.get("code")
    if not isinstance(code, str) or not code.strip():
        raise source.error(
            number,
            'a blind pairwise sheet row without its "code"',
            hint="keep the code column as exported",
        )
    return code.strip()


def object_rows(source: RowSource) -> Iterator[Row]:
    """The label rows of a JSONL, Parquet or hf:// source; a row without "label" is an
    error.
    """
    for row in source.rows():
        fields = row.fields
        if "label" not in fields:
            raise source.error(row.number, 'missing "label"', hint=f"e.g. {LABEL_EXAMPLE}")
        who = fields.get("annotator", fields.get("rater"))
        yield row.number, fields.get("id"), fields.get("label"), who, fields


def csv_rows(source: CsvSource, space: LabelSpace, label_map: Mapping[str, str]) -> Iterator[Row]:
    """The label rows of a CSV sheet (`judge review export`): the `id` column, the `label`
    column (its header may carry a note: `label (1-4; pass at 3)`) and, if present,
    `annotator`; other columns are ignored. Rows are numbered as a spreadsheet shows them
    (the header is row 1).
    """
    with open_input(source.path, "rb") as handle:
        records = source.records(handle)
        first = next(records, None)
        header = [h.strip().casefold() for h in first[2]] if first else []
        names = ("id", "annotator", "code", "output_a", "output_b", *PLAN_COLUMNS)
        where: dict[str, int] = {n: header.index(n) for n in names if n in header}
        labelled = [i for i, h in enumerate(header) if h == "label" or h.startswith("label (")]
        if "id" not in where or len(labelled) != 1:
            raise source.error(
                1,
                'the header needs an "id" and one "label" column',
                hint="hand back the sheet `judge review export` wrote",
            )
        where["label"] = labelled[0]
        for number, _, cells in records:
            if not any(cell.strip() for cell in cells):
                continue
            get = {k: (cells[i].strip() if i < len(cells) else "") for k, i in where.items()}
            raw = number_or_text(get["label"], space, label_map)
            yield number, get["id"], raw, get.get("annotator"), get


def number_or_text(raw: str, space: LabelSpace, label_map: Mapping[str, str]) -> Value:
    """A CSV cell as a label: a number for a pointwise scale (unless --label-map names it)."""
    if space.kind is not RubricKind.POINTWISE or raw.casefold() in label_map:
        return raw
    try:
        return float(raw)
    except ValueError:
        return raw


def check_labels_match(
    labels: list[Label], case_ids: list[str], labels_path: DataPath, cases_path: DataPath
) -> None:
    """InputError unless some label's id is a case id. Labels of other cases (another
    run's, or ids spelled differently) would give an all-n/a report that looks like a
    result; the message shows both sides' ids, so the mismatch is visible at once.
    """
    known = set(case_ids)
    if any(label.id in known for label in labels):
        return
    label_ids = sorted({label.id for label in labels})
    raise DatasetError(
        shown(labels_path),
        None,
        f"none of the {len(labels)} labels match a case id of {shown(cases_path)} "
        f"(labels: {named(label_ids)}; cases: {named(sorted(known)) or 'none'})",
        hint='labels are joined to cases on "id": pass the labels of these cases',
    )


def dataset_ids(path: DataPath, field_map: dict[str, str]) -> list[str]:
    """The case ids of a dataset, in file order."""
    return case_ids(path, field_map)
