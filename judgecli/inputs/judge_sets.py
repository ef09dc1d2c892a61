"""Human-labelled judge sets for `judge qualify`: the bundled ones (`--set NAME`) and a
user's own (`--set FILE`).

A set is JSONL, one row per human verdict: `id`, `input`, `output_a`, `output_b` and
`label` (`a`, `b` or `tie`) for a pairwise rubric; `id`, `input`, `output` and `label` (a
score on the rubric's scale, or one of its choices) for a pointwise or binary one. Other
case fields (`reference`, `context`, `category`) are read as a dataset's are. Several rows
of one id are several raters of one case: each row is a label, and the case's texts must be
the same in each (an `annotator` or `rater` field names who gave the row's label).
Anything else is an input error naming file:line, before any call.

A pairwise set is read as `judge pairwise` reads OLD and NEW: `output_a` is OLD's answer
and `output_b` NEW's, so a label `a` is the winner `old`. Each case's id in the run is
`SET/ID`, so several sets share one run directory.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from judgecli.errors import ConfigError, DatasetError
from judgecli.inputs.dataset import Case, case_from
from judgecli.inputs.jsonl import iter_lines, parse_object
from judgecli.inputs.labels import Label, LabelSpace, describe, normalise
from judgecli.inputs.pairs import Pair
from judgecli.inputs.rows import JsonlSource
from judgecli.result import Winner
from judgecli.rubric import Rubric, RubricKind

PAIRWISE_EXAMPLE = (
    '{"id": "q1", "input": "...", "output_a": "...", "output_b": "...", "label": "a"}'
)
POINTWISE_EXAMPLE = '{"id": "q1", "input": "...", "output": "...", "label": 4}'
SIDES = {"a": Winner.OLD, "b": Winner.NEW, "tie": Winner.TIE}
"""A pairwise set's labels, as the winners `judge pairwise` records (a is OLD, b is NEW)."""
SEPARATOR = "/"
"""Between a set's name and a case's id in the run's ids."""


def bundled_sets_dir() -> Path:
    """The folder of the bundled judge sets: `judgecli/demo_datasets/judge-sets/` in an
    installed wheel (pyproject maps the repository's datasets/ there), `datasets/judge-sets/`
    in a checkout (as `rubric_library.bundled_library` finds the rubrics).
    """
    packaged = resources.files("judgecli").joinpath("demo_datasets")
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged.resolve() / "judge-sets"
    return Path(__file__).resolve().parents[2] / "datasets" / "judge-sets"


def bundled_sets() -> list[str]:
    """The bundled sets' names, sorted."""
    return sorted(path.stem for path in bundled_sets_dir().glob("*.jsonl"))


@dataclass(frozen=True)
class JudgeSet:
    """One labelled set, read and checked: its cases (pairs for a pairwise rubric) and a
    label per row, both with the run's ids (`SET/ID`).
    """

    name: str
    path: Path
    bundled: bool
    sha256: str
    items: list[Pair] | list[Case]
    labels: list[Label]

    @property
    def n_cases(self) -> int:
        """Cases (ids) in the set."""
        return len(self.items)


def find_set(spec: str) -> tuple[str, Path, bool]:
    """`--set NAME|FILE` as (name, file, bundled): an existing file (or one named .jsonl) is
    the user's, named by its stem; anything else is a bundled set's name.
    """
    path = Path(spec)
    if path.exists() or path.suffix == ".jsonl":
        if not path.is_file():
            raise ConfigError(
                f"--set {spec}: no such file",
                hint="give a JSONL file of labelled rows (docs/qualify.md) or a bundled "
                f"set's name: {', '.join(bundled_sets())}",
            )
        return path.stem, path, False
    found = bundled_sets_dir() / f"{spec}.jsonl"
    if not found.is_file():
        raise ConfigError(
            f"--set {spec}: no such file and no bundled judge set of that name",
            hint=f"the bundled sets are {', '.join(bundled_sets())} (docs/qualify.md)",
        )
    return spec, found, True


def read_sets(specs: list[str], rubric: Rubric) -> list[JudgeSet]:
    """Every set `--set` names (every bundled set when none is named and the rubric is
    pairwise), each read in full and checked against the rubric.
    """
    if not specs:
        if rubric.kind is not RubricKind.PAIRWISE:
            raise ConfigError(
                f"the bundled judge sets are pairwise, and rubric {rubric.name!r} is "
                f"{rubric.kind.value}",
                hint="give your own labelled set with --set FILE (rows of id, input, output, "
                "label; docs/qualify.md), or qualify a pairwise rubric",
            )
        specs = bundled_sets()
    sets = []
    seen: dict[str, str] = {}
    for spec in specs:
        name, path, bundled = find_set(spec)
        if name in seen:
            raise ConfigError(
                f"--set {spec}: a set named {name!r} is already given ({seen[name]})",
                hint="give each set once; rename a file whose name repeats another set's",
            )
        seen[name] = spec
        sets.append(read_set(name, path, rubric, bundled=bundled))
    return sets


def read_set(name: str, path: Path, rubric: Rubric, *, bundled: bool = False) -> JudgeSet:
    """One set's rows as its cases and labels; DatasetError (file:line) for a bad row."""
    space = LabelSpace.of(rubric)
    pairwise = rubric.kind is RubricKind.PAIRWISE
    example = PAIRWISE_EXAMPLE if pairwise else POINTWISE_EXAMPLE
    source = JsonlSource(path)
    items: dict[str, Pair | Case] = {}
    first_line: dict[str, tuple[int, Any]] = {}
    labels: list[Label] = []
    for number, _, text in iter_lines(path):
        row = parse_object(path, number, text, example=example)
        raw_label = row.pop("label", None)
        if raw_label is None:
            raise DatasetError(path, number, 'missing "label"', hint=f"e.g. {example}")
        raw_id = row.get("id")
        if raw_id is None:
            raise DatasetError(path, number, 'missing "id"', hint=f"e.g. {example}")
        if isinstance(raw_id, int) and not isinstance(raw_id, bool):
            row["id"] = str(raw_id)
        rater = row.pop("annotator", None) or row.pop("rater", None)
        if pairwise:
            item: Pair | Case = read_pair(source, number, row, rubric, example)
            value: str | float | None = read_side(raw_label)
            wanted = 'one of "a", "b", "tie"'
        else:
            item = read_case(source, number, row, rubric, example)
            value = normalise(raw_label, space, {})
            wanted = describe(space)
        if value is None:
            raise DatasetError(
                path, number, f"label {raw_label!r} is not {wanted}", hint=f"e.g. {example}"
            )
        key = item.id
        texts = texts_of(item)
        if key in first_line and first_line[key][1] != texts:
            raise DatasetError(
                path,
                number,
                f"id {key!r} has other texts than on line {first_line[key][0]}",
                hint="rows of one id are raters of one case: repeat its texts exactly, or "
                "give the other case its own id",
            )
        first_line.setdefault(key, (number, texts))
        run_id = f"{name}{SEPARATOR}{key}"
        items.setdefault(key, renamed(item, run_id))
        labels.append(
            Label(
                id=run_id,
                value=value,
                annotator=None if rater is None else str(rater),
                line=number,
            )
        )
    if not labels:
        raise DatasetError(path, None, "no labelled rows", hint=f"one row per line, e.g. {example}")
    cases = list(items.values())
    return JudgeSet(
        name=name,
        path=path,
        bundled=bundled,
        sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        items=[c for c in cases if isinstance(c, Pair)]
        if pairwise
        else [c for c in cases if isinstance(c, Case)],
        labels=labels,
    )


def read_side(raw: Any) -> str | None:
    """A pairwise label (`a`, `b`, `tie`, any case) as a Winner value, else None."""
    if not isinstance(raw, str):
        return None
    side = SIDES.get(raw.strip().casefold())
    return side.value if side else None


def read_pair(
    source: JsonlSource, number: int, row: dict[str, Any], rubric: Rubric, example: str
) -> Pair:
    """A pairwise row's two answers as OLD (output_a) and NEW (output_b) of one case."""
    sides = {}
    for field in ("output_a", "output_b"):
        text = row.pop(field, None)
        if not isinstance(text, str):
            problem = f'missing "{field}"' if text is None else f'"{field}" is not text'
            raise DatasetError(
                source.path,
                number,
                problem,
                hint=f"a pairwise set's rows have output_a and output_b, e.g. {example}",
            )
        sides[field] = text
    if "output" in row:
        raise DatasetError(
            source.path,
            number,
            'a pairwise row has "output_a" and "output_b", not "output"',
            hint=f"e.g. {example}",
        )
    old = case_from(
        source, number, row | {"output": sides["output_a"]}, field_map={}, requires=rubric.requires
    )
    new = case_from(
        source, number, row | {"output": sides["output_b"]}, field_map={}, requires=rubric.requires
    )
    return Pair(old=old, new=new)


def read_case(
    source: JsonlSource, number: int, row: dict[str, Any], rubric: Rubric, example: str
) -> Case:
    """A pointwise row's case."""
    if "output_a" in row or "output_b" in row:
        raise DatasetError(
            source.path,
            number,
            f'rubric {rubric.name!r} is {rubric.kind.value}: a row has one "output", not '
            "output_a and output_b",
            hint=f"e.g. {example}, or qualify a pairwise rubric with this set",
        )
    return case_from(source, number, row, field_map={}, requires=rubric.requires)


def texts_of(item: Pair | Case) -> Any:
    """What must be the same in every row of one id."""
    if isinstance(item, Pair):
        return (item.old.model_dump(exclude={"line", "metadata"}), item.new.output)
    return item.model_dump(exclude={"line", "metadata"})


def renamed(item: Pair | Case, run_id: str) -> Pair | Case:
    """The item with its run id (`SET/ID`)."""
    if isinstance(item, Pair):
        return Pair(
            old=item.old.model_copy(update={"id": run_id}),
            new=item.new.model_copy(update={"id": run_id}),
        )
    return item.model_copy(update={"id": run_id})
