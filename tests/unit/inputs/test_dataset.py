from __future__ import annotations

import json

import pytest

from judgecli.errors import ConfigError, DatasetError
from judgecli.inputs.dataset import iter_cases, parse_field_map, scan_dataset
from judgecli.inputs.sampling import SampleSize, parse_sample

REQ = ["input", "output"]


def lines(*objs) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


def cases_of(path, **kw):
    scan = scan_dataset(path, requires=REQ, **kw)
    return scan, list(iter_cases(scan, requires=REQ, field_map=kw.get("field_map")))


def test_cases_stream_with_unknown_keys_kept_as_metadata(write):
    path = write("d.jsonl", lines({"id": "a", "input": "q", "output": "x", "model": "m1"}))
    _, cases = cases_of(path)
    assert cases[0].id == "a"
    assert cases[0].metadata == {"model": "m1"}
    assert cases[0].line == 1


def test_blank_lines_bom_and_crlf_are_tolerated(write):
    raw = b"\xef\xbb\xbf" + b'{"id": 1, "input": "q", "output": "x"}\r\n\r\n'
    raw += b'{"id": 2, "input": "q", "output": "y"}\r\n'
    _, cases = cases_of(write("d.jsonl", raw))
    assert [c.id for c in cases] == ["1", "2"]
    assert [c.line for c in cases] == [1, 3]


def test_field_map_reads_another_column(write):
    path = write("d.jsonl", lines({"id": "a", "question": "q", "answer": "x"}))
    fm = parse_field_map(["input=question", "output=answer"])
    _, cases = cases_of(path, field_map=fm)
    assert (cases[0].input, cases[0].output) == ("q", "x")


def test_missing_id_is_derived_from_the_line_with_a_warning(write):
    path = write("d.jsonl", lines({"input": "q", "output": "x"}))
    scan, cases = cases_of(path)
    assert cases[0].id == "line-1"
    assert "without an id" in scan.warnings[0]


def test_context_string_becomes_a_list_and_renders_numbered(write):
    path = write("d.jsonl", lines({"id": "a", "input": "q", "output": "x", "context": "doc"}))
    _, cases = cases_of(path)
    assert cases[0].context == ["doc"]
    assert cases[0].field_text("context") == "[1] doc"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(b'{"id": "a", "input": "q"\n', "d.jsonl:1: invalid JSON", id="bad-json"),
        pytest.param(
            b'{"id": "a", "input": "q", "output": "x"}\n[1, 2]\n',
            "d.jsonl:2: expected a JSON object",
            id="not-object",
        ),
        # Issue 29: a JSON file's first line says so, rather than "expected a JSON object".
        pytest.param(
            b"[1, 2]\n", "d.jsonl:1: this is a JSON array; JSONL needs one", id="array-file"
        ),
        pytest.param(
            b'{"id": "a", "input": "q", "output": "x"}\n{"id": "b", "input": "q"}\n',
            'd.jsonl:2: missing required field "output"',
            id="missing-field",
        ),
        pytest.param(
            b'{"id": "a", "input": "q", "output": 5}\n',
            'd.jsonl:1: "output" must be a string',
            id="wrong-type",
        ),
        pytest.param(
            b'{"id": "a", "input": "q", "output": "x"}\n{"id": "a", "input": "q", "output": "y"}\n',
            "d.jsonl:2: duplicate id 'a' (first on line 1)",
            id="duplicate-id",
        ),
        pytest.param(b"", "d.jsonl: no cases (the file is empty)", id="empty-file"),
        pytest.param(b"\n\n", "d.jsonl: no cases", id="only-blank-lines"),
        pytest.param(
            b'{"id": "a", "input": "caf\xe9", "output": "x"}\n',
            "d.jsonl:1: not UTF-8",
            id="latin-1",
        ),
        pytest.param(
            b'{"id": true, "input": "q", "output": "x"}\n',
            '"id" must be a string or integer',
            id="bool-id",
        ),
        pytest.param(
            b'{"id": "a", "input": "q", "output": "x", "context": [1]}\n',
            '"context" must be a string or a list of strings',
            id="bad-context",
        ),
    ],
)
def test_bad_dataset_line_is_reported_with_file_and_line(write, content, expected):
    path = write("d.jsonl", content)
    with pytest.raises(DatasetError) as caught:
        scan_dataset(path, requires=REQ)
    assert caught.value.message.endswith(expected) or expected in caught.value.message
    assert str(path.name) in caught.value.message


def test_missing_field_hint_names_the_field_flag(write):
    path = write("d.jsonl", lines({"id": "a", "input": "q", "answer": "x"}))
    with pytest.raises(DatasetError) as caught:
        scan_dataset(path, requires=REQ)
    assert "--field output=COLUMN" in caught.value.hint


def test_missing_file_is_a_dataset_error(tmp_path):
    with pytest.raises(DatasetError, match="no such file"):
        scan_dataset(tmp_path / "nope.jsonl", requires=REQ)


def test_limit_keeps_the_first_cases(write):
    path = write("d.jsonl", lines(*({"id": i, "input": "q", "output": "x"} for i in range(10))))
    scan, cases = cases_of(path, limit=3)
    assert [c.id for c in cases] == ["0", "1", "2"]
    assert scan.total == 10


def test_sample_is_seeded_uniform_and_in_file_order(write):
    path = write("d.jsonl", lines(*({"id": i, "input": "q", "output": "x"} for i in range(100))))
    _, first = cases_of(path, sample=10, seed=7)
    _, again = cases_of(path, sample=10, seed=7)
    _, other = cases_of(path, sample=10, seed=8)
    ids = [int(c.id) for c in first]
    assert ids == [int(c.id) for c in again]
    assert ids != [int(c.id) for c in other]
    assert ids == sorted(ids)
    assert len(set(ids)) == 10


def test_sample_larger_than_the_file_takes_every_case(write):
    path = write("d.jsonl", lines(*({"id": i, "input": "q", "output": "x"} for i in range(5))))
    _, cases = cases_of(path, sample=50)
    assert len(cases) == 5


def test_every_case_is_eligible_for_the_sample(write):
    # Reservoir sampling must reach the last lines too, not only the first `sample`.
    path = write("d.jsonl", lines(*({"id": i, "input": "q", "output": "x"} for i in range(20))))
    seen = set()
    for seed in range(60):
        _, cases = cases_of(path, sample=2, seed=seed)
        seen |= {int(c.id) for c in cases}
    assert seen == set(range(20))


@pytest.mark.parametrize("bad", ["output", "output=", "=answer", "colour=answer"])
def test_bad_field_mapping_is_rejected(bad):
    with pytest.raises(DatasetError):
        parse_field_map([bad])


# Regression (issue 13 §4, review 2026-11-23 finding 10): `"output": ""` was refused as
# `missing required field "output"` and the whole dataset exited 2.
def test_an_empty_output_is_a_case_to_judge_and_is_counted(write):
    path = write(
        "d.jsonl",
        lines(
            {"id": "a", "input": "q", "output": ""},
            {"id": "b", "input": "q", "output": "x"},
            {"id": "c", "input": "", "output": "   "},
        ),
    )
    scan, cases = cases_of(path)
    assert [c.output for c in cases] == ["", "x", "   "]
    assert scan.warnings == [
        f'{path}: 1 case has an empty "input" (judged as given)',
        f'{path}: 2 cases have an empty "output" (judged as given)',
    ]


def test_empty_fields_are_named_as_the_file_names_them(write):
    path = write("d.jsonl", lines({"id": "a", "input": "q", "answer": ""}))
    scan, _ = cases_of(path, field_map={"output": "answer"})
    assert scan.warnings == [f'{path}: 1 case has an empty "answer" (judged as given)']


def test_only_the_selected_cases_are_counted_as_empty(write):
    rows = [{"id": i, "input": "q", "output": "" if i >= 5 else "x"} for i in range(10)]
    scan, _ = cases_of(write("d.jsonl", lines(*rows)), limit=5)
    assert scan.warnings == []


@pytest.mark.parametrize(
    ("row", "message", "hint"),
    [
        pytest.param(
            {"id": "a", "input": "q"},
            'd.jsonl:1: missing required field "output"',
            "--field output=COLUMN",
            id="absent",
        ),
        pytest.param(
            {"id": "a", "input": "q", "output": None},
            'd.jsonl:1: "output" is null',
            'write "" for an empty output',
            id="null",
        ),
    ],
)
def test_an_absent_or_null_field_is_still_an_error_with_its_fix(write, row, message, hint):
    with pytest.raises(DatasetError) as caught:
        scan_dataset(write("d.jsonl", lines(row)), requires=REQ)
    assert caught.value.message.endswith("/" + message)
    assert hint in caught.value.hint


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("200", SampleSize(count=200), id="count"),
        pytest.param("10%", SampleSize(percent=10.0), id="share"),
        pytest.param("2.5%", SampleSize(percent=2.5), id="fractional-share"),
        pytest.param("100%", SampleSize(percent=100.0), id="everything"),
    ],
)
def test_sample_is_a_count_or_a_share(text, expected):
    assert parse_sample(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "200%", "--sample 200%: a share must be above 0% and at most 100%", id="share-above-100"
        ),
        pytest.param("0%", "a share must be above 0%", id="zero-share"),
        pytest.param("0", "--sample 0: judge at least 1 case", id="zero"),
        pytest.param("2.5", "--sample '2.5' is not N or P%", id="fractional-count"),
        pytest.param("ten", "--sample 'ten' is not N or P%", id="word"),
        pytest.param("-1", "is not N or P%", id="negative"),
    ],
)
def test_a_bad_sample_is_a_config_error_naming_the_flag(text, message):
    # Regression (review 2026-11-23, finding 21): "should be a valid integer" for 200%.
    with pytest.raises(ConfigError) as caught:
        parse_sample(text)
    assert message in caught.value.message


def test_a_share_samples_that_share_of_the_cases_seeded_and_in_file_order(write):
    path = write("d.jsonl", lines(*({"id": i, "input": "q", "output": "x"} for i in range(40))))
    _, first = cases_of(path, sample=SampleSize(percent=10), seed=3)
    _, again = cases_of(path, sample=SampleSize(percent=10), seed=3)
    ids = [int(c.id) for c in first]
    assert len(ids) == 4
    assert ids == [int(c.id) for c in again]
    assert ids == sorted(ids)


def test_a_tiny_share_still_judges_one_case(write):
    path = write("d.jsonl", lines(*({"id": i, "input": "q", "output": "x"} for i in range(5))))
    _, cases = cases_of(path, sample=SampleSize(percent=1))
    assert len(cases) == 1
