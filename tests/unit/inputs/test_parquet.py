"""Parquet datasets: columns map to the case fields as JSON keys do (strings, lists,
structs), a null is a missing value, the file is read a batch at a time, and a side of a
pair is read back from the source's copy (issue 31)."""

from __future__ import annotations

import csv
import datetime as dt
import json
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from judgecli.errors import DatasetError
from judgecli.inputs.dataset import iter_cases, scan_dataset
from judgecli.inputs.pairs import iter_pairs, scan_pairs
from judgecli.inputs.sources import open_rows
from judgecli.inputs.tables import PARQUET_BATCH, ParquetSource

REQ = ["input", "output"]


def parquet(path, rows, schema=None):
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def cases_of(path, requires=REQ, **kw):
    scan = scan_dataset(path, requires=requires, **kw)
    return scan, list(iter_cases(scan, requires=requires))


def error_of(path, requires=REQ) -> str:
    with pytest.raises(DatasetError) as caught:
        cases_of(path, requires)
    return f"{caught.value.message}\nhint: {caught.value.hint}"


def test_strings_lists_and_structs_map_to_the_case_fields(tmp_path):
    turns = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    path = parquet(
        tmp_path / "d.parquet",
        [
            {"id": "a", "input": "q", "output": "x", "context": ["p1", "p2"], "messages": None},
            {"id": "b", "input": None, "output": None, "context": None, "messages": turns},
        ],
    )
    _, cases = cases_of(path, requires=["output"])
    assert (cases[0].context, cases[0].messages) == (["p1", "p2"], None)
    assert [t.content for t in cases[1].messages or []] == ["Hi", "Hello"]
    assert cases[1].field_text("output") == "Hello"


def test_other_columns_are_metadata_whatever_their_type(tmp_path):
    when = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    path = parquet(
        tmp_path / "d.parquet",
        [{"id": 7, "input": "q", "output": "x", "model": "m1", "latency": 1.5, "at": when}],
    )
    _, cases = cases_of(path)
    assert cases[0].id == "7"
    assert cases[0].metadata == {"model": "m1", "latency": 1.5, "at": when}


def test_a_null_optional_field_is_missing_and_a_null_required_one_names_the_row(tmp_path):
    path = parquet(
        tmp_path / "d.parquet",
        [
            {"id": "a", "input": "q", "output": "x", "reference": None},
            {"id": "b", "input": "q", "output": None, "reference": "r"},
        ],
    )
    said = error_of(path)
    assert said.startswith(f'{path}:2: "output" is null')
    assert 'write "" for an empty output' in said
    _, cases = cases_of(path, requires=["input"])
    assert (cases[0].reference, cases[1].output) == (None, None)


@pytest.mark.parametrize(
    ("column", "value", "says", "hint"),
    [
        pytest.param(
            "reference", 4, '"reference" must be a string, got int', "string column", id="number"
        ),
        pytest.param(
            "reference",
            b"x",
            '"reference" must be a string, got bytes',
            "string column",
            id="binary",
        ),
        pytest.param("id", 1.5, '"id" must be a string or integer, got 1.5', '"id"', id="float-id"),
        pytest.param(
            "context",
            [1, 2],
            '"context" must be a string or a list of strings',
            "passage",
            id="ints",
        ),
    ],
)
def test_a_value_of_the_wrong_type_names_the_row(tmp_path, column, value, says, hint):
    # A Parquet column has one type: the rows before the bad one leave it null.
    rows = [{"id": f"c{i}", "input": "q", "output": "x", column: None} for i in range(3)]
    rows[2][column] = value
    path = parquet(tmp_path / "d.parquet", rows)
    said = error_of(path)
    assert said.startswith(f"{path}:3: {says}"), said
    assert hint in said.split("\nhint: ")[1]


def test_rows_are_read_in_batches_in_order_and_numbered_from_1(tmp_path):
    n = PARQUET_BATCH * 3 + 5
    rows = [{"id": f"c{i}", "input": f"q{i}", "output": f"x{i}"} for i in range(n)]
    rows[-1]["id"] = "c0"
    path = parquet(tmp_path / "d.parquet", rows)
    said = error_of(path)
    assert said.startswith(f"{path}:{n}: duplicate id 'c0' (first on row 1)")
    _, cases = cases_of(parquet(tmp_path / "ok.parquet", rows[:-1]))
    assert [(c.id, c.line) for c in cases] == [(f"c{i}", i + 1) for i in range(n - 1)]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        pytest.param(b'{"id": "a"}\n', "not a Parquet file", id="jsonl-named-parquet"),
        pytest.param(b"", "not a Parquet file", id="empty-file"),
    ],
)
def test_a_file_that_is_not_parquet_says_so(tmp_path, content, says):
    path = tmp_path / "d.parquet"
    path.write_bytes(content)
    said = error_of(path)
    assert said.startswith(f"{path}: {says}")
    assert "to_parquet" in said


def test_a_parquet_file_cut_short_is_an_error_not_a_crash(tmp_path):
    rows = [{"id": f"c{i}", "input": "q", "output": "x" * 100} for i in range(2000)]
    whole = parquet(tmp_path / "whole.parquet", rows).read_bytes()
    path = tmp_path / "cut.parquet"
    path.write_bytes(whole[: len(whole) // 2] + whole[-2000:])
    said = error_of(path)
    assert said.startswith(f"{path}"), said
    assert "Parquet" in said or "damaged" in said


def test_a_missing_parquet_file_is_no_such_file(tmp_path):
    assert error_of(tmp_path / "gone.parquet").startswith(
        f"{tmp_path / 'gone.parquet'}: no such file"
    )


def test_a_parquet_file_without_rows_has_no_cases(tmp_path):
    schema = pa.schema([("id", pa.string()), ("input", pa.string()), ("output", pa.string())])
    path = parquet(tmp_path / "d.parquet", [], schema=schema)
    assert error_of(path).startswith(f"{path}: no cases")


def test_a_seekable_source_reads_its_rows_back_from_its_copy(tmp_path):
    rows = [{"id": f"c{i}", "input": f"q{i}", "output": f"x{i}"} for i in range(600)]
    path = parquet(tmp_path / "d.parquet", rows)
    source = open_rows(path, seekable=True)
    assert isinstance(source, ParquetSource)
    found = list(source.rows())
    # The copy answers from now on: the file itself is no longer read.
    path.unlink()
    random.Random(5).shuffle(found)
    assert all(source.row_at(row.number, row.at) == row.fields for row in found)
    assert [row.fields["id"] for row in source.rows()] == [r["id"] for r in rows]


def test_a_source_not_opened_seekable_keeps_no_copy(tmp_path):
    path = parquet(tmp_path / "d.parquet", [{"id": "a", "input": "q", "output": "x"}])
    source = open_rows(path)
    row = next(iter(source.rows()))
    assert row.at == -1
    with pytest.raises(ValueError, match="not kept"):
        source.row_at(row.number, row.at)


def test_a_parquet_old_joins_a_shuffled_csv_new(tmp_path):
    old = [{"id": f"c{i}", "input": f"q{i}", "output": f"old {i}"} for i in range(300)]
    new = [dict(r, output=f"new {r['id'][1:]}") for r in old]
    random.Random(1).shuffle(new)
    with (tmp_path / "new.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["id", "input", "output"])
        writer.writeheader()
        writer.writerows(new)
    scan = scan_pairs(parquet(tmp_path / "old.parquet", old), tmp_path / "new.csv", requires=REQ)
    pairs = list(iter_pairs(scan, requires=REQ))
    assert [(p.id, p.old.output, p.new.output) for p in pairs] == [
        (r["id"], r["output"], f"new {r['id'][1:]}") for r in old
    ]


def test_the_same_cases_read_alike_from_jsonl_csv_and_parquet(tmp_path):
    rows = [
        {
            "id": "q-1",
            "input": "Wie viel ist 2+2? 🤔",
            "output": 'Vier.\nSee "math".',
            "context": ["a passage", "another"],
            "category": "math",
            "model": "m1",
        },
        {
            "id": "q-2",
            "input": "?",
            "output": "",
            "context": ["only one"],
            "category": "x",
            "model": "m2",
        },
    ]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with (tmp_path / "d.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({**r, "context": json.dumps(r["context"])} for r in rows)
    parquet(tmp_path / "d.parquet", rows)

    def cases(name):
        return [c.model_dump(exclude={"line"}) for c in cases_of(tmp_path / name)[1]]

    assert cases("d.jsonl") == cases("d.csv") == cases("d.parquet")


def test_a_partitioned_parquet_folder_is_refused_with_the_fix(tmp_path):
    folder = tmp_path / "d.parquet"
    folder.mkdir()
    parquet(folder / "part-0.parquet", [{"id": "a", "input": "q", "output": "x"}])
    said = error_of(folder)
    assert said.startswith(f"{folder}: is a folder (a partitioned Parquet dataset?)")
    assert "one Parquet file" in said
