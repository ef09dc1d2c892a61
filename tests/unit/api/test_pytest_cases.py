"""What the pytest plugin keeps of a judged call (issue 31): a record that survives the trip
from an xdist worker as plain types, the JUnit properties it shows, and when it fails its
test under --judge-per-test."""

from __future__ import annotations

import argparse
import json

import pytest

from judgecli.api.pytest_cases import CallKind, JudgedCase
from judgecli.api.pytest_plugin import GATE_ON, share
from judgecli.result import Winner
from judgecli.summary.gate_records import GateOn

GRADED = JudgedCase(
    test="tests/test_a.py::test_capital[paris]",
    module="tests/test_a.py",
    kind=CallKind.GRADE,
    rubric="helpfulness",
    judge="openai/sim",
    case="capital",
    score=2.0,
    scale=(1.0, 4.0),
    passed=False,
    reason="Names the city\nbut nothing else.",
)
COMPARED = JudgedCase(
    test="tests/test_p.py::test_pair",
    module="tests/test_p.py",
    kind=CallKind.COMPARE,
    rubric="pairwise",
    judge="openai/a, openai/b",
    case="git-1",
    winner=Winner.OLD,
    reason="- openai/a (old-new): A is right",
)


@pytest.mark.parametrize("case", [GRADED, COMPARED], ids=["graded", "compared"])
def test_a_record_survives_the_trip_from_a_worker_as_json(case):
    sent = json.loads(json.dumps(case.as_dict()))  # execnet carries plain types only
    assert JudgedCase.from_dict(sent) == case


def test_a_graded_case_shows_as_junit_properties_case_first():
    assert GRADED.properties() == [
        ("judge_case", "capital"),
        ("judge_rubric", "helpfulness"),
        ("judge_model", "openai/sim"),
        ("judge_score", "2"),
        ("judge_passed", "false"),
        ("judge_reason", "Names the city\nbut nothing else."),
    ]


def test_a_comparison_shows_its_winner_and_a_failed_call_its_error():
    assert ("judge_winner", "old") in COMPARED.properties()
    ungraded = JudgedCase(**{**GRADED.__dict__, "score": None, "passed": None, "error": "E: x"})
    assert ("judge_error", "E: x") in ungraded.properties()
    assert not ungraded.graded


@pytest.mark.parametrize(
    ("case", "failed"),
    [
        (GRADED, True),
        (JudgedCase(**{**GRADED.__dict__, "passed": True}), False),
        (JudgedCase(**{**GRADED.__dict__, "passed": None}), False),  # no pass_at: no verdict on it
        (COMPARED, True),
        (JudgedCase(**{**COMPARED.__dict__, "winner": Winner.TIE}), False),
        (JudgedCase(**{**COMPARED.__dict__, "winner": None}), False),  # dropped: no evidence
    ],
)
def test_a_verdict_fails_its_test_when_the_case_did_not_pass_or_new_lost(case, failed):
    assert case.failed is failed


def test_the_complaint_names_the_case_the_verdict_and_the_reason():
    assert GRADED.complaint() == (
        "case 'capital' (helpfulness): score 2, not a pass: Names the city\n    but nothing else."
    )
    assert COMPARED.complaint().startswith("case 'git-1' (pairwise): NEW lost to OLD: ")


def test_the_gate_compares_only_what_judges_gate_can():
    assert set(GATE_ON) <= {on.value for on in GateOn}


@pytest.mark.parametrize("text", ["1.5", "-0.1", "80", "high"])
def test_a_rate_threshold_outside_0_to_1_is_a_usage_error(text):
    with pytest.raises(argparse.ArgumentTypeError):
        share(text)


def test_a_rate_threshold_is_a_share():
    assert (share("0"), share("0.8"), share("1")) == (0.0, 0.8, 1.0)
