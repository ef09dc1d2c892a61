"""CSV (and TSV) datasets: a header row, rows numbered as a spreadsheet shows them, every
cell text, list fields read from their cell, and every problem named by file:row with the
fix (issue 31)."""

from __future__ import annotations

import json
import random

import pytest

from judgecli.errors import DatasetError
from judgecli.inputs.dataset import iter_cases, parse_field_map, scan_dataset
from judgecli.inputs.pairs import iter_pairs, scan_pairs
from judgecli.inputs.sources import open_rows
from judgecli.inputs.tables import CsvSource

REQ = ["input", "output"]


def cases_of(path, requires=REQ, **kw):
    scan = scan_dataset(path, requires=requires, **kw)
    return scan, list(iter_cases(scan, requires=requires, field_map=kw.get("field_map")))


def error_of(path, requires=REQ, **kw) -> str:
    with pytest.raises(DatasetError) as caught:
        cases_of(path, requires, **kw)
    return f"{caught.value.message}\nhint: {caught.value.hint}"


def test_a_csv_file_reads_as_cases_with_other_columns_kept_as_metadata(write):
    path = write("d.csv", "id,input,output,model\na,What is 2+2?,4,m1\nb,Hi,Hello,m2\n")
    scan, cases = cases_of(path)
    assert [(c.id, c.input, c.output, c.metadata) for c in cases] == [
        ("a", "What is 2+2?", "4", {"model": "m1"}),
        ("b", "Hi", "Hello", {"model": "m2"}),
    ]
    assert scan.total == 2
    assert scan.name == str(path)


def test_rows_are_numbered_as_a_spreadsheet_shows_them(write):
    # The header is row 1; a cell's line break starts no row; an empty row is a row.
    text = 'id,input,output\r\na,"two\r\nlines",x\r\n\r\nb,q,y\r\n'
    _, cases = cases_of(write("d.csv", text))
    assert [(c.id, c.line) for c in cases] == [("a", 2), ("b", 4)]
    assert cases[0].input == "two\r\nlines"


def test_a_bom_and_spaces_around_header_names_are_tolerated(write):
    path = write("d.csv", "\ufeff id , input,output \na,q,x\n")
    _, cases = cases_of(path)
    assert (cases[0].id, cases[0].input, cases[0].output) == ("a", "q", "x")


def test_an_empty_cell_is_an_empty_string_judged_as_given(write):
    scan, cases = cases_of(write("d.csv", "id,input,output\na,q,\nb,q,x\n"))
    assert cases[0].output == ""
    assert scan.warnings == [f'{scan.name}: 1 case has an empty "output" (judged as given)']


def test_an_answer_that_looks_like_json_stays_text(write):
    path = write("d.csv", 'id,input,output\na,q,"{""answer"": [1, 2]}"\n')
    _, cases = cases_of(path)
    assert cases[0].output == '{"answer": [1, 2]}'


@pytest.mark.parametrize(
    ("cell", "context"),
    [
        pytest.param(
            '"[""passage one"", ""passage two""]"', ["passage one", "passage two"], id="json-array"
        ),
        pytest.param("one passage", ["one passage"], id="text"),
        pytest.param(
            '"[1] a numbered passage, not JSON"',
            ["[1] a numbered passage, not JSON"],
            id="bracket-text",
        ),
    ],
)
def test_a_context_cell_is_a_json_array_of_passages_or_one_passage(write, cell, context):
    path = write("d.csv", f"id,input,output,context\na,q,x,{cell}\n")
    _, cases = cases_of(path, requires=[*REQ, "context"])
    assert cases[0].context == context


def test_a_context_array_of_other_things_is_an_error(write):
    path = write("d.csv", 'id,input,output,context\na,q,x,"[1, 2]"\n')
    assert f"{path}:2: " in error_of(path)
    assert "a list of strings" in error_of(path)


def test_a_messages_cell_holds_the_conversation_as_json(write):
    # A table of conversations and single-turn cases: each row leaves the other kind's
    # cells empty.
    turns = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    cell = json.dumps(turns).replace('"', '""')
    path = write("d.csv", f'id,question,answer,chat\na,,,"{cell}"\nb,Hi,Hey,\n')
    fm = parse_field_map(["messages=chat", "input=question", "output=answer"])
    _, cases = cases_of(path, requires=["conversation", "output"], field_map=fm)
    assert [t.content for t in cases[0].messages or []] == ["Hi", "Hello"]
    assert (cases[0].field_text("input"), cases[0].field_text("output")) == ("Hi", "Hello")
    assert (cases[1].messages, cases[1].input, cases[1].output) == (None, "Hi", "Hey")


def test_a_messages_cell_that_is_not_json_names_the_row_and_the_shape(write):
    path = write("d.csv", "id,messages\na,hello there\n")
    said = error_of(path, requires=["conversation"])
    assert said.startswith(f'{path}:2: "messages" is not JSON')
    assert '[{"role": "user"' in said


def test_the_field_map_reads_other_columns(write):
    path = write("d.csv", "qid,question,answer\na,q,x\n")
    fm = parse_field_map(["id=qid", "input=question", "output=answer"])
    _, cases = cases_of(path, field_map=fm)
    assert (cases[0].id, cases[0].input, cases[0].output, cases[0].metadata) == ("a", "q", "x", {})


def test_a_missing_column_names_the_row_and_the_field_map(write):
    path = write("d.csv", "id,input,answer\na,q,x\n")
    said = error_of(path)
    assert said.startswith(f'{path}:2: missing required field "output"')
    assert "--field output=COLUMN" in said


def test_a_row_without_an_id_takes_its_row_number(write):
    scan, cases = cases_of(write("d.csv", "input,output\nq,x\n"))
    assert cases[0].id == "row-2"
    assert "using row-<number> as id" in scan.warnings[0]


def test_a_cell_larger_than_the_csv_modules_default_limit_is_read(write):
    long = "y" * 300_000
    _, cases = cases_of(write("d.csv", f"id,input,output\na,q,{long}\n"))
    assert cases[0].output == long


def test_a_tsv_file_is_read_with_tabs(write):
    _, cases = cases_of(write("d.tsv", "id\tinput\toutput\na\tq, with a comma\tx\n"))
    assert cases[0].input == "q, with a comma"


@pytest.mark.parametrize(
    ("text", "where", "says", "hint"),
    [
        pytest.param(
            'id,input,output\na,q,x\nb,"never closed,x\nc,q,x\n',
            3,
            "a quoted cell is never closed",
            '""',
            id="unclosed-quote-names-the-row-it-opens",
        ),
        pytest.param(
            'id,input,output\na,"q"x,y\n',
            2,
            "text after the closing quote",
            '""',
            id="text-after-quote",
        ),
        pytest.param(
            "id,input,output\na,q,first line\nsecond line\n",
            3,
            "1 cells, but the header has 3 columns",
            "must be in double quotes",
            id="unquoted-line-break",
        ),
        pytest.param(
            "id,input,output\na,q,x,surplus\n",
            2,
            "4 cells, but the header has 3 columns",
            "a comma must be in double quotes",
            id="unquoted-comma",
        ),
        pytest.param(
            "id,input,output,output\na,q,x,y\n",
            1,
            'the column "output" is there twice (columns 3 and 4)',
            "rename one",
            id="duplicate-column",
        ),
        pytest.param(
            "id,input,,output\na,q,stray,x\n",
            2,
            "a value in column 3, which has no name in the header",
            "name the column",
            id="value-in-unnamed-column",
        ),
        pytest.param(
            "id,input,output\na,q,x\na,q,y\n",
            3,
            "duplicate id 'a' (first on row 2)",
            "unique",
            id="duplicate-id",
        ),
    ],
)
def test_a_broken_csv_names_the_row_and_the_fix(write, text, where, says, hint):
    path = write("d.csv", text)
    said = error_of(path)
    assert said.startswith(f"{path}:{where}: {says}"), said
    assert hint in said.split("\nhint: ")[1]


def test_a_csv_that_is_not_utf8_names_the_row(write):
    path = write("d.csv", "id,input,output\na,q,x\nb,caf\xe9,x\n".encode("latin-1"))
    said = error_of(path)
    assert said.startswith(f"{path}:3: not UTF-8")
    assert "CSV UTF-8" in said


def test_empty_rows_and_trailing_empty_cells_are_no_cases(write):
    _, cases = cases_of(write("d.csv", "id,input,output\n,,\na,q,x,,\n"))
    assert [(c.id, c.line) for c in cases] == [("a", 3)]


@pytest.mark.parametrize("text", ["", "id,input,output\n", "id,input,output\n,,\n"])
def test_a_csv_without_a_case_says_so_with_the_header_to_write(write, text):
    path = write("d.csv", text)
    said = error_of(path)
    assert said.startswith(f"{path}: no cases")
    assert "id,input,output" in said


def test_a_row_is_read_back_at_its_offset_in_any_order(write):
    rows = [(f"c{i}", f'line one\n"quoted" {i}', f"answer {i}") for i in range(20)]
    text = "id,input,output\n" + "".join(
        f'{i},"{q.replace(chr(34), chr(34) * 2)}",{a}\n' for i, q, a in rows
    )
    source = open_rows(write("d.csv", text))
    assert isinstance(source, CsvSource)
    found = list(source.rows())
    random.Random(3).shuffle(found)
    for row in found:
        assert source.row_at(row.number, row.at) == row.fields


def test_csv_pairs_join_on_id_whatever_the_order(write):
    old = write("old.csv", "id,input,output\na,q1,x\nb,q2,y\nc,q3,z\n")
    new = write("new.csv", "id,input,output\nc,q3,Z\na,q1,X\nb,q2,Y\n")
    scan = scan_pairs(old, new, requires=REQ)
    pairs = list(iter_pairs(scan, requires=REQ))
    assert [(p.id, p.old.output, p.new.output, p.new.line) for p in pairs] == [
        ("a", "x", "X", 3),
        ("b", "y", "Y", 4),
        ("c", "z", "Z", 2),
    ]
