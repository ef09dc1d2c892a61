from __future__ import annotations

import json

import pytest

from judgecli.errors import ConfigError, DatasetError
from judgecli.inputs.labels import LabelSpace, parse_label_map, read_labels
from judgecli.rubric import RubricKind

SCALE = LabelSpace(kind=RubricKind.POINTWISE, scale=(1, 4))
YES_NO = LabelSpace(kind=RubricKind.BINARY, choices=["YES", "NO"], passing="YES")
PAIRWISE = LabelSpace(kind=RubricKind.PAIRWISE)


def labels_file(write, *rows):
    return write("labels.jsonl", "".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize(
    ("space", "raw", "expected"),
    [
        pytest.param(SCALE, 3, 3.0, id="score"),
        pytest.param(SCALE, 2.5, 2.5, id="fractional-score-mean-of-raters"),
        pytest.param(YES_NO, "yes", "YES", id="choice-any-case"),
        pytest.param(YES_NO, "pass", "YES", id="pass-is-the-passing-choice"),
        pytest.param(YES_NO, "FAIL", "NO", id="fail-is-the-other"),
        pytest.param(YES_NO, True, "YES", id="true-is-pass"),
        pytest.param(PAIRWISE, "New", "new", id="winner"),
    ],
)
def test_labels_are_normalised_to_the_rubric(write, space, raw, expected):
    (label,) = read_labels(labels_file(write, {"id": "a", "label": raw}), space)
    assert label.value == expected


@pytest.mark.parametrize(
    ("space", "row", "message"),
    [
        pytest.param(
            SCALE, {"id": "a", "label": 5}, "label 5 is not a number from 1 to 4", id="off-scale"
        ),
        pytest.param(SCALE, {"id": "a", "label": "good"}, "is not a number", id="not-a-number"),
        pytest.param(
            YES_NO,
            {"id": "a", "label": "MAYBE"},
            "is not one of ['YES', 'NO']",
            id="unknown-choice",
        ),
        pytest.param(PAIRWISE, {"id": "a", "label": "A"}, "--label-map", id="pairwise-needs-map"),
        pytest.param(SCALE, {"id": "a"}, 'missing "label"', id="no-label"),
        pytest.param(SCALE, {"label": 1}, 'missing or invalid "id"', id="no-id"),
    ],
)
def test_bad_labels_name_file_and_line(write, space, row, message):
    # Line 1 is a valid label of the space, so the error must be the bad row's, on line 2.
    valid = {RubricKind.POINTWISE: 1, RubricKind.BINARY: "YES", RubricKind.PAIRWISE: "new"}
    path = labels_file(write, {"id": "ok", "label": valid[space.kind]}, row)
    with pytest.raises(DatasetError) as caught:
        read_labels(path, space)
    assert caught.value.message.startswith(f"{path}:2: ")
    assert message in caught.value.message


def test_label_map_translates_other_spellings(write):
    path = labels_file(write, {"id": "a", "label": "A"}, {"id": "b", "label": 2})
    labels = read_labels(path, PAIRWISE, label_map=parse_label_map("A=old,B=new,1=old,2=new"))
    assert [x.value for x in labels] == ["old", "new"]


def test_the_same_annotator_twice_on_a_case_is_an_error(write):
    path = labels_file(
        write,
        {"id": "a", "label": 1, "annotator": "r1"},
        {"id": "a", "label": 2, "annotator": "r1"},
    )
    with pytest.raises(DatasetError, match="labelled twice by r1"):
        read_labels(path, SCALE)


def test_several_annotators_per_case_are_kept(write):
    path = labels_file(
        write,
        {"id": "a", "label": 1, "annotator": "r1"},
        {"id": "a", "label": 2, "annotator": "r2"},
    )
    assert [(x.annotator, x.value) for x in read_labels(path, SCALE)] == [("r1", 1.0), ("r2", 2.0)]


def test_an_empty_labels_file_is_an_error(write):
    with pytest.raises(DatasetError, match="no labels"):
        read_labels(write("labels.jsonl", "\n"), SCALE)


@pytest.mark.parametrize("bad", ["A", "A=", "=old", "A=old,B"])
def test_bad_label_map_is_a_config_error(bad):
    with pytest.raises(ConfigError):
        parse_label_map(bad)
