"""Cases given in memory: one case as a dict (a dataset row's keys, through the same `field`
map) or a `Case`, checked as a dataset row is (`inputs.case_fields`: the same messages);
and many, a dataset given as rows, turned into the JSON lines a run keeps of them
(`store.inputs`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from judgecli.errors import DatasetError
from judgecli.inputs.dataset import Case, case_from
from judgecli.inputs.images import anchored_images
from judgecli.inputs.pairs import Pair, input_digest
from judgecli.inputs.rows import Format, Row, RowSource

CaseLike = Mapping[str, Any] | Case
"""One case as the API takes it: a dict of a dataset row's keys, or a Case."""


class GivenCase(RowSource):
    """A case handed to the API, as the row source the checks of a dataset row need:
    messages name it by `name` (`case`, `old`, `new`) rather than by file and line.
    """

    format = Format.JSONL
    unit = "case"

    def __init__(self, name: str) -> None:
        super().__init__(Path(name), name)

    def rows(self) -> Iterator[Row]:  # noqa: D102 - never read as rows
        return iter(())

    def row_at(self, number: int, at: int) -> dict[str, Any]:  # noqa: D102
        raise LookupError("a case given in memory has no rows to find again")

    def error(self, number: int | None, problem: str, *, hint: str | None = None) -> DatasetError:
        """A DatasetError naming the case (`case: missing required field "output"`)."""
        return DatasetError(self.name, None, problem, hint=hint)


def fields_of(case: Case) -> dict[str, Any]:
    """A Case as a dataset row's fields (its own names; its metadata beside them)."""
    fields: dict[str, Any] = {"id": case.id}
    for name in ("input", "output", "reference", "context", "category"):
        if (value := getattr(case, name)) is not None:
            fields[name] = value
    if case.messages is not None:
        fields["messages"] = [turn.model_dump(mode="json") for turn in case.messages]
    return fields | case.metadata


def as_case(
    case: CaseLike, *, field_map: Mapping[str, str], requires: list[str], name: str = "case"
) -> Case:
    """One case, checked as a dataset row is: a dict through `field_map`, a Case as it is
    (its fields are already named). DatasetError naming `name` and the fix otherwise.
    """
    if isinstance(case, Case):
        return case_from(GivenCase(name), 1, fields_of(case), field_map={}, requires=requires)
    if not isinstance(case, Mapping):
        raise TypeError(f"a case is a dict of its fields or a judgecli.Case, not {type(case)}")
    return case_from(GivenCase(name), 1, case, field_map=field_map, requires=requires)


def as_pair(
    old: CaseLike, new: CaseLike, *, field_map: Mapping[str, str], requires: list[str]
) -> Pair:
    """Two answers to one case, checked as a joined pair is: the same id (when either
    gives one) and the same input or conversation.
    """
    old_case = as_case(old, field_map=field_map, requires=requires, name="old")
    new_case = as_case(new, field_map=field_map, requires=requires, name="new")
    if old_case.id != new_case.id:
        raise DatasetError(
            "compare",
            None,
            f"old and new are different cases (ids {old_case.id!r} and {new_case.id!r})",
            hint="compare two answers to the same case: give both the same id, or neither",
        )
    if input_digest(old_case) != input_digest(new_case):
        raise DatasetError(
            "compare",
            None,
            f"old and new of case {old_case.id!r} answer different inputs",
            hint="compare two answers to the same input (or the same conversation)",
        )
    return Pair(old=old_case, new=new_case)


def row_lines(rows: Iterable[CaseLike], field_map: Mapping[str, str]) -> Iterator[str]:
    """A dataset given as rows, as JSON lines: a dict as it is, a Case with its fields under
    the names `field_map` reads them from. DatasetError naming the row (counted from 1)
    for one that is neither, or holds a value JSON cannot.
    """
    for number, row in enumerate(rows, start=1):
        if isinstance(row, Case):
            row = {field_map.get(key, key): value for key, value in fields_of(row).items()}
        elif not isinstance(row, Mapping):
            raise DatasetError(
                "dataset",
                number,
                f"a case is a dict of its fields or a judgecli.Case, not {type(row).__name__}",
                hint='e.g. {"id": "q1", "input": "What is 2+2?", "output": "4"}',
            )
        # A relative image path is the working folder's, wherever the rows are kept.
        row = anchored_images(row, Path.cwd(), field_map)
        try:
            yield json.dumps(dict(row), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise DatasetError(
                "dataset",
                number,
                f"cannot be written as JSON ({err})",
                hint="give the fields as str, numbers, lists and dicts",
            ) from None
