"""A case's own checklist (`rubric_items`, issue 32): read from JSONL, CSV and Parquet, and
what cannot be scored refused with file:line and the fix."""

from __future__ import annotations

import json

import pytest

from judgecli.errors import DatasetError
from judgecli.inputs.dataset import iter_cases, scan_dataset
from judgecli.inputs.rubric_items import RubricItem, parse_rubric_items, render_items

REQ = ["conversation", "output", "rubric_items"]
ITEMS = [
    {"criterion": "Says no honey before 12 months", "points": 9, "tags": ["axis:accuracy"]},
    {"criterion": "Says honey is fine for babies", "points": -9},
]


def cases_of(path, requires=REQ, **kw):
    scan = scan_dataset(path, requires=requires, **kw)
    return list(iter_cases(scan, requires=requires, field_map=kw.get("field_map")))


def error_of(path, requires=REQ) -> str:
    with pytest.raises(DatasetError) as caught:
        cases_of(path, requires)
    return f"{caught.value.message}\nhint: {caught.value.hint}"


def line(**fields) -> str:
    return json.dumps({"id": "c", "input": "q", "output": "a", **fields})


def test_items_read_with_their_points_and_tags_and_no_tags_is_none(write):
    path = write("d.jsonl", line(rubric_items=ITEMS) + "\n")
    [case] = cases_of(path)
    assert case.rubric_items == [
        RubricItem(criterion=ITEMS[0]["criterion"], points=9, tags=["axis:accuracy"]),
        RubricItem(criterion=ITEMS[1]["criterion"], points=-9, tags=[]),
    ]
    # Whole points stay whole (`[9]`, not `[9.0]`, in the prompt); fractions are kept.
    assert render_items(case.rubric_items) == (
        "1. [9] Says no honey before 12 months\n2. [-9] Says honey is fine for babies"
    )
    assert parse_rubric_items([{"criterion": "x", "points": 2.5}])[0].points == 2.5
    assert parse_rubric_items([{"criterion": "x", "points": 5.0}])[0].render() == "[5] x"


def test_a_tag_repeated_on_an_item_counts_once():
    [item] = parse_rubric_items([{"criterion": "x", "points": 1, "tags": ["a", "a", " b"]}])
    assert item.tags == ["a", "b"]


@pytest.mark.parametrize(
    ("items", "says", "hint"),
    [
        pytest.param([], '"rubric_items" is empty', "leave the field out", id="empty"),
        pytest.param({"criterion": "x"}, "must be a list of items, got dict", "e.g.", id="object"),
        pytest.param(["x"], '"rubric_items" item 1 must be an object', "e.g.", id="string"),
        pytest.param([{"points": 5}], 'item 1 has no "criterion"', "e.g.", id="no-criterion"),
        pytest.param([{"criterion": " ", "points": 5}], 'no "criterion"', "e.g.", id="blank"),
        pytest.param([{"criterion": "x"}], 'item 1 has no "points"', "-5", id="no-points"),
        pytest.param(
            [{"criterion": "x", "points": "5"}],
            '"points" must be a number, got "5"',
            "without quotes",
            id="points-text",
        ),
        pytest.param(
            [{"criterion": "x", "points": True}], "must be a number, got true", "", id="bool"
        ),
        pytest.param(
            [{"criterion": "x", "points": 0}], '"points" is 0', "or drop the item", id="zero"
        ),
        pytest.param(
            [{"criterion": "x", "points": 5, "tags": "axis:a"}],
            '"tags" must be a list of strings',
            '"tags": ["axis:accuracy"',
            id="tags-text",
        ),
        pytest.param(
            [{"criterion": "x", "points": 5, "tag": ["a"]}],
            "item 1 has unknown key(s) 'tag'",
            "criterion, points, tags",
            id="typo",
        ),
        pytest.param(
            [{"criterion": "x", "points": 1}, {"criterion": "y", "points": -3}, {"criterion": "z"}],
            "item 3 has no",
            "",
            id="third",
        ),
        pytest.param(
            [{"criterion": "x", "points": -5}],
            "no item with positive points",
            "at least one item positive points",
            id="all-negative",
        ),
    ],
)
def test_a_checklist_that_cannot_be_scored_names_the_line_and_the_fix(write, items, says, hint):
    path = write("d.jsonl", line(rubric_items=[{"criterion": "ok", "points": 1}]) + "\n")
    path.write_text(path.read_text() + line(rubric_items=items).replace('"c"', '"d"') + "\n")
    message = error_of(path)
    assert message.startswith(f"{path}:2: ")
    assert says in message
    assert hint in message.split("hint: ", 1)[1]


def test_a_case_without_items_is_missing_the_field_the_checklist_rubric_requires(write):
    path = write("d.jsonl", line() + "\n")
    message = error_of(path)
    assert message.startswith(f'{path}:1: missing required field "rubric_items"')
    # A rubric that does not require them reads the case as it is.
    assert cases_of(path, ["input", "output"])[0].rubric_items is None


def test_items_are_read_from_a_json_cell_of_a_csv_file(write):
    cell = json.dumps(ITEMS).replace('"', '""')
    path = write("d.csv", f'id,input,output,rubric_items\nc,q,a,"{cell}"\nd,q,a,not json\n')
    message = error_of(path)
    assert message.startswith(f'{path}:3: "rubric_items" is not JSON')
    path.write_text(f'id,input,output,rubric_items\nc,q,a,"{cell}"\n')
    [case] = cases_of(path)
    assert [i.points for i in case.rubric_items] == [9, -9]


def test_items_are_read_from_a_parquet_column_of_structs_as_json_objects(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "d.parquet"
    table = pa.table({"id": ["c"], "input": ["q"], "output": ["a"], "rubric_items": [ITEMS]})
    pq.write_table(table, path)
    [case] = cases_of(path)
    assert [i.criterion for i in case.rubric_items] == [i["criterion"] for i in ITEMS]
    assert case.rubric_items[1].tags == []


def test_a_field_map_names_the_column_in_the_message(write):
    path = write("d.jsonl", json.dumps({"id": "c", "input": "q", "output": "a", "rubric": []}))
    with pytest.raises(DatasetError) as caught:
        cases_of(path, field_map={"rubric_items": "rubric"})
    assert '"rubric" is empty' in caught.value.message
