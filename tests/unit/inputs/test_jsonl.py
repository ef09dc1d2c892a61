"""A JSONL line's problem in plain words, with the fix (issue 29, review 2026-11-27 finding
21: a JSON array file, a line cut short, a trailing comma, NUL bytes had no hint)."""

from __future__ import annotations

import pytest

from judgecli.errors import DatasetError
from judgecli.inputs.jsonl import parse_object

EXAMPLE = '{"id": "q1"}'


@pytest.mark.parametrize(
    ("number", "text", "problem", "hint"),
    [
        pytest.param(
            1,
            "[\n",
            "this is a JSON array; JSONL needs one object per line",
            "convert it: jq -c '.[]' d.json > d.jsonl",
            id="a-json-array-file",
        ),
        pytest.param(
            1,
            "{\n",
            "this is pretty-printed JSON; JSONL needs each object whole on one line",
            "convert it: jq -c . d.json > d.jsonl",
            id="a-pretty-printed-object",
        ),
        pytest.param(
            2,
            '{"id": "a"},\n',
            "invalid JSON: a ',' after the object (column 12)",
            "remove the ','",
            id="a-trailing-comma",
        ),
        pytest.param(
            2,
            '{"id": "a"} {"id": "b"}\n',
            "invalid JSON: more after the object (column 13)",
            "each line holds one JSON object and nothing after it",
            id="two-objects",
        ),
        pytest.param(
            2,
            '{"id": "a", "output": "Red, or\n',
            "invalid JSON: the line ends inside a string (column 31)",
            "the line is cut short, or a text holds a raw line break",
            id="cut-inside-a-string",
        ),
        pytest.param(
            2,
            '{"id": "a", "output": \n',
            "invalid JSON: the line ends before its object does (column 23)",
            "the line is cut short",
            id="cut-after-a-key",
        ),
        pytest.param(
            2,
            '{"id": "a\x00"}\n',
            "invalid JSON: a NUL byte (column 10): not text",
            "remove the NUL bytes",
            id="a-nul-byte",
        ),
        pytest.param(
            2,
            '{"id": "a\tb"}\n',
            "invalid JSON: a control character inside a string (column 10)",
            "write a tab as \\t",
            id="a-raw-tab",
        ),
        pytest.param(
            2,
            "{'id': 'a'}\n",
            "invalid JSON: Expecting property name enclosed in double quotes (column 2)",
            "JSON puts keys in double quotes",
            id="single-quotes",
        ),
        pytest.param(
            2, "[1, 2]\n", "expected a JSON object, got list", f"e.g. {EXAMPLE}", id="a-list"
        ),
        pytest.param(
            2, '{"id": nope}\n', "invalid JSON: Expecting value (column 8)", EXAMPLE, id="other"
        ),
    ],
)
def test_a_bad_line_is_said_in_plain_words_with_the_fix(number, text, problem, hint):
    from pathlib import Path

    with pytest.raises(DatasetError) as raised:
        parse_object(Path("d.json"), number, text, example=EXAMPLE)
    assert raised.value.message == f"d.json:{number}: {problem}"
    assert hint in (raised.value.hint or "")
