"""Cases given in memory (issue 31): checked as a dataset's rows are, with the same
messages, named by what they are rather than by file and line."""

from __future__ import annotations

import json

import pytest

from judgecli.api.cases import as_case, as_pair, row_lines
from judgecli.errors import DatasetError
from judgecli.inputs.dataset import Case

REQUIRES = ["input", "output"]


def test_a_dict_is_read_through_the_field_map():
    case = as_case(
        {"id": "q1", "input": "2+2?", "answer": "4", "lang": "en"},
        field_map={"output": "answer"},
        requires=REQUIRES,
    )
    assert (case.id, case.input, case.output, case.metadata) == ("q1", "2+2?", "4", {"lang": "en"})


def test_a_case_is_read_by_its_own_field_names():
    given = Case(id="q1", input="2+2?", output="4", context=["p"], metadata={"lang": "en"})
    case = as_case(given, field_map={"output": "answer"}, requires=REQUIRES)
    assert case.model_dump(exclude={"line"}) == given.model_dump(exclude={"line"})


def test_a_case_without_an_id_gets_one():
    assert as_case({"input": "a", "output": "b"}, field_map={}, requires=REQUIRES).id == "case-1"


def test_a_missing_field_names_the_case_not_a_file():
    with pytest.raises(DatasetError) as raised:
        as_case({"input": "a"}, field_map={}, requires=REQUIRES)
    assert raised.value.message.startswith('case: missing required field "output"')


def test_a_case_of_the_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match="a case is a dict"):
        as_case(["input", "output"], field_map={}, requires=REQUIRES)  # type: ignore[arg-type]


def test_a_pair_is_two_answers_to_one_input():
    pair = as_pair(
        {"id": "p", "input": "q", "output": "a"},
        {"id": "p", "input": "q", "output": "b"},
        field_map={},
        requires=REQUIRES,
    )
    assert (pair.id, pair.old.output, pair.new.output) == ("p", "a", "b")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        pytest.param(
            {"id": "a", "input": "x"}, {"id": "b", "input": "x"}, r"ids 'a' and 'b'", id="ids"
        ),
        pytest.param({"input": "x"}, {"input": "y"}, "answer different inputs", id="inputs"),
    ],
)
def test_a_pair_of_two_cases_is_refused(old, new, message):
    with pytest.raises(DatasetError, match=message):
        as_pair(old | {"output": "o"}, new | {"output": "n"}, field_map={}, requires=REQUIRES)


def test_rows_become_json_lines_a_case_under_the_mapped_keys():
    rows = [{"id": "a", "input": "é", "answer": "x"}, Case(id="b", input="q", output="y")]
    lines = [json.loads(line) for line in row_lines(rows, {"output": "answer"})]
    assert lines == [
        {"id": "a", "input": "é", "answer": "x"},
        {"id": "b", "input": "q", "answer": "y"},
    ]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        pytest.param("text", "dataset:2: a case is a dict of its fields", id="not-a-dict"),
        pytest.param(
            {"id": "b", "input": {1, 2}}, "dataset:2: cannot be written as JSON", id="set"
        ),
        pytest.param({"id": "b", "score": float("nan")}, "dataset:2: cannot be written", id="nan"),
    ],
)
def test_a_row_that_is_no_case_is_named_by_its_number(row, message):
    with pytest.raises(DatasetError) as raised:
        list(row_lines([{"id": "a"}, row], {}))
    assert raised.value.message.startswith(message)
