"""inputs.qualification: the record `judge qualify` writes, read back and held against a
run's judge and rubric (issue 34)."""

from __future__ import annotations

import json

import pytest

from judgecli.errors import ConfigError, InputError
from judgecli.inputs.qualification import QualificationRecord, check_qualified, read_record

RECORD = {
    "kind": "judge-qualification",
    "version": 1,
    "judge_version": "0.1.0",
    "models": ["openai/a", "openai/b"],
    "rubric": "pairwise",
    "rubric_version": 1,
    "rubric_hash": "sha256:abc",
    "min_agreement": 0.7,
    "passed": True,
    "sets": [
        {
            "name": "s",
            "n": 100,
            "agreement": 0.82,
            "agreement_ci": [0.73, 0.88],
            "kappa": 0.6,
            "position_consistency": 0.9,
            "sha256": "0" * 64,
        }
    ],
    "created": "2026-11-27T00:00:00+00:00",
    "run": "runs/q",
}


def check(record: dict, *, models=("openai/b", "openai/a"), rubric_hash="sha256:abc"):
    check_qualified(
        QualificationRecord.model_validate(record),
        "r.json",
        models=list(models),
        rubric_name="pairwise",
        rubric_hash=rubric_hash,
    )


def test_the_qualified_panel_passes_in_any_order():
    check(RECORD)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        pytest.param({"models": ["openai/a"]}, "is not the one qualified", id="another-judge"),
        pytest.param(
            {"rubric_hash": "sha256:def"},
            "rubric 'pairwise' (sha256:abc) is not",
            id="edited-rubric",
        ),
        pytest.param({"min_agreement": 0.75}, "below the record's floor 0.75", id="below-floor"),
        pytest.param(
            {"sets": [RECORD["sets"][0] | {"agreement_ci": [None, None]}]},
            "below the record's floor",
            id="no-interval",
        ),
    ],
)
def test_a_run_the_record_does_not_qualify_is_refused(change, said):
    with pytest.raises(ConfigError, match=said.replace("(", r"\(").replace(")", r"\)")):
        check(RECORD | change)


def test_without_a_floor_only_the_judge_and_rubric_are_held():
    check(RECORD | {"min_agreement": None, "passed": None})


def test_the_run_directory_stands_for_its_record(write, tmp_path):
    (tmp_path / "qualification.json").write_text(json.dumps(RECORD))
    assert read_record(tmp_path).rubric_hash == "sha256:abc"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        pytest.param("{nope", "not JSON", id="not-json"),
        pytest.param(
            json.dumps(RECORD | {"kind": "x"}), "not a qualification record: kind", id="kind"
        ),
        pytest.param(
            json.dumps(RECORD | {"extra": 1}), "not a qualification record: extra", id="unknown-key"
        ),
    ],
)
def test_a_malformed_record_names_the_file(write, text, said):
    path = write("r.json", text)
    with pytest.raises(InputError, match=f"{path}: {said}"):
        read_record(path)


def test_a_missing_record_names_the_file(tmp_path):
    with pytest.raises(InputError, match="cannot read the qualification record"):
        read_record(tmp_path / "nope.json")
