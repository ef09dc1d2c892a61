"""The label files `judge view` writes, read back: `RUN/labels/<rater>.jsonl`, one label
per line (`{"id", "label", "rater", "at", "note"?, "inclusion_probability"?, "strategy"?,
"budget"?}`), appended one whole line at a time.

A later line for the same rater and id replaces the earlier one (a relabel); `"label":
null` withdraws it (an undo). A last line without its newline that is not JSON is the tail
of a write a crash cut short, and is ignored; any other bad line is an error naming
file:line. `rater` names the rater (the file's name when absent), as `annotator` does in
other labels files. `inclusion_probability` is the probability a label plan had of
drawing the case (`judge review plan`): with it, `--labels` weighs the label back
(`stats.active`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgecli.errors import DatasetError, InputError

LABELS_FOLDER = "labels"
"""A run directory's folder of label files, one per rater."""
FILE_EXAMPLE = '{"id": "q1", "label": "new", "rater": "ana", "at": "2026-01-01T12:00:00Z"}'


@dataclass(frozen=True)
class RawLabel:
    """One line of a label file that still stands (not replaced, not withdrawn), its label
    not yet checked against the rubric.
    """

    path: Path
    line: int
    id: str
    raw: Any
    rater: str
    inclusion_probability: float | None
    strategy: str | None
    budget: int | None
    fields: Mapping[str, Any]
    """The whole line as written (its `note` and `at` too: what the viewer shows)."""


def label_files(path: Path) -> list[Path] | None:
    """The label files `path` names — a run directory (its `labels/` folder), a `labels/`
    folder, or one file inside such a folder or holding `rater` lines — or None when `path`
    is a labels file of another kind (a sheet, a plain JSONL of labels).

    Raises:
        InputError: A folder without label files.
    """
    if path.is_dir():
        run = (path / "results.jsonl").exists() or (path / "run.json").exists()
        folder = path / LABELS_FOLDER if run or (path / LABELS_FOLDER).is_dir() else path
        files = sorted(p for p in folder.glob("*.jsonl") if p.is_file())
        if not files:
            raise InputError(
                f"{folder}: no label files (<rater>.jsonl, as judge view writes them)",
                hint="label the run's cases with `judge view`, or pass a labels file",
            )
        return files
    if path.suffix == ".jsonl" and (path.parent.name == LABELS_FOLDER or first_has_rater(path)):
        return [path]
    return None


def first_has_rater(path: Path) -> bool:
    """Whether the file's first non-blank line is a JSON object with a `rater`."""
    try:
        with path.open("r", encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    found = json.loads(line)
                    return isinstance(found, dict) and "rater" in found
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return False


def read_label_files(files: list[Path]) -> list[RawLabel]:
    """The standing labels of the files, in file and line order (each (rater, id) at the
    line that last set it); an InputError when none stands.
    """
    found = [raw for raw in standing_lines(files) if raw.raw is not None]
    one_draw(found)
    if not found:
        where = files[0].parent if len(files) > 1 else files[0]
        raise InputError(
            f"{where}: no labels (every label was withdrawn, or the files are empty)",
            hint=f"a label file holds one label per line, e.g. {FILE_EXAMPLE}",
        )
    return found


def one_draw(labels: list[RawLabel]) -> None:
    """InputError when the planned labels come from two draws: two strategies, budgets or
    seeds. The weighted estimate needs the cases one draw picked, each labelled; the labels
    of two draws are neither draw's (docs/statistics.md, active inference).
    """
    planned = [raw for raw in labels if raw.inclusion_probability is not None]
    for key in ("strategy", "budget", "seed"):
        seen = sorted({str(raw.fields[key]) for raw in planned if raw.fields.get(key) is not None})
        if len(seen) > 1:
            first = next(raw for raw in planned if str(raw.fields.get(key)) == seen[1])
            raise InputError(
                f"{first.path}:{first.line}: the labels come from label plans of different "
                f"{key}s ({', '.join(seen)}): the corrected estimate needs the cases of one draw",
                hint="label one plan (one strategy, budget and --seed) to its end, or move the "
                "other plan's label files out of the folder",
            )


def standing_lines(files: list[Path]) -> list[RawLabel]:
    """The lines of the files that still stand, withdrawals included (`raw` None): each
    (rater, id) at the line that last set it, in file and line order. The one rule of
    relabel and undo, for the statistics' reader and the viewer alike.
    """
    standing: dict[tuple[str, str], RawLabel] = {}
    for path in files:
        for raw in file_lines(path):
            standing.pop((raw.rater, raw.id), None)  # a later line goes after the others
            standing[(raw.rater, raw.id)] = raw
    return list(standing.values())


def file_lines(path: Path) -> list[RawLabel]:
    """Every line of one label file, checked for shape (not yet for the rubric)."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror}") from None
    lines = data.split(b"\n")
    torn = bool(lines and lines[-1].strip())
    found = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            fields = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            if torn and number == len(lines):
                continue  # the tail of a write cut short by a crash
            raise DatasetError(
                path, number, "not a JSON object", hint=f"one label per line, e.g. {FILE_EXAMPLE}"
            ) from None
        found.append(line_label(path, number, fields))
    return found


def line_label(path: Path, number: int, fields: Any) -> RawLabel:
    """One parsed line as a RawLabel, or a DatasetError naming path:line."""

    def bad(problem: str, hint: str = f"e.g. {FILE_EXAMPLE}") -> DatasetError:
        return DatasetError(path, number, problem, hint=hint)

    if not isinstance(fields, dict):
        raise bad("not a JSON object")
    case_id = fields.get("id")
    if isinstance(case_id, bool) or not isinstance(case_id, str | int) or case_id == "":
        raise bad('missing or invalid "id" (a string or integer)')
    if "label" not in fields:
        raise bad('missing "label" (null withdraws a label)')
    rater = fields.get("rater", fields.get("annotator", path.stem))
    if not isinstance(rater, str) or not rater:
        raise bad('"rater" must be a non-empty string', 'e.g. "rater": "ana"')
    return RawLabel(
        path=path,
        line=number,
        id=str(case_id),
        raw=fields["label"],
        rater=rater,
        inclusion_probability=probability(fields, bad),
        strategy=text_or_none(fields, "strategy", bad),
        budget=budget_or_none(fields, bad),
        fields=fields,
    )


def probability(fields: Mapping[str, Any], bad: Any) -> float | None:
    """`inclusion_probability`: absent or null, or a number in (0, 1]."""
    value = fields.get("inclusion_probability")
    if value is None:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not 0 < value <= 1:
        raise bad(
            f'"inclusion_probability" {value!r} is not a number in (0, 1]',
            "keep the probability the plan gave (`judge review plan`), or drop the key",
        )
    return float(value)


def text_or_none(fields: Mapping[str, Any], key: str, bad: Any) -> str | None:
    """An optional string field."""
    value = fields.get(key)
    if value is not None and not isinstance(value, str):
        raise bad(f'"{key}" must be a string')
    return value


def budget_or_none(fields: Mapping[str, Any], bad: Any) -> int | None:
    """`budget`: absent or null, or a positive integer."""
    value = fields.get("budget")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise bad(f'"budget" {value!r} is not a positive integer')
    return value


PLAN_COLUMNS = ("inclusion_probability", "strategy", "budget")
"""What a review sheet made from a plan carries per row, so labels made on it keep it."""


@dataclass(frozen=True)
class PlannedRow:
    """One case of a plan file (`judge review plan --out`)."""

    id: str
    inclusion_probability: float
    strategy: str | None
    budget: int | None
    why: str


def read_plan(path: Path) -> list[PlannedRow]:
    """A plan file, in its order; each bad line a DatasetError naming path:line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(
            f"{path}: no such file", hint="write one with `judge review plan RUN --out FILE`"
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"{path}: cannot read: {err}") from None
    rows, seen = [], set()
    example = '{"id": "q1", "inclusion_probability": 0.25, "why": "orders disagree"}'
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue

        def bad(problem: str, hint: str = f"a plan line, e.g. {example}") -> DatasetError:
            return DatasetError(path, number, problem, hint=hint)  # noqa: B023

        try:
            fields = json.loads(line)
        except ValueError:
            raise bad("not a JSON object") from None
        if not isinstance(fields, dict):
            raise bad("not a JSON object")
        case_id = fields.get("id")
        if isinstance(case_id, bool) or not isinstance(case_id, str | int) or case_id == "":
            raise bad('missing or invalid "id"')
        pi = probability(fields, bad)
        if pi is None:
            raise bad('missing "inclusion_probability"')
        if str(case_id) in seen:
            raise bad(f"id {case_id!r} is planned twice", "pass the file `judge review plan` wrote")
        seen.add(str(case_id))
        why = fields.get("why")
        rows.append(
            PlannedRow(
                id=str(case_id),
                inclusion_probability=pi,
                strategy=text_or_none(fields, "strategy", bad),
                budget=budget_or_none(fields, bad),
                why=why if isinstance(why, str) else "",
            )
        )
    if not rows:
        raise InputError(f"{path}: an empty plan", hint="plan with `judge review plan RUN`")
    return rows


def sheet_design(source_error: Any, number: int, fields: Mapping[str, Any]) -> dict[str, Any]:
    """A labels row's plan columns (a sheet exported from a plan, or a JSONL line) as
    Label fields: blank cells are absent; a bad value an error naming the row.
    """

    def bad(problem: str, hint: str | None = None) -> DatasetError:
        error: DatasetError = source_error(number, problem, hint=hint)
        return error

    given = {k: fields[k] for k in PLAN_COLUMNS if fields.get(k) not in (None, "")}
    for key in ("inclusion_probability", "budget"):
        if isinstance(given.get(key), str):  # a CSV cell
            try:
                given[key] = json.loads(given[key])
            except ValueError:
                raise bad(f'"{key}" {given[key]!r} is not a number') from None
    return {
        "inclusion_probability": probability(given, bad),
        "strategy": text_or_none(given, "strategy", bad),
        "budget": budget_or_none(given, bad),
    }
