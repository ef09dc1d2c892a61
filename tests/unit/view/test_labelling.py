"""Labelling in the viewer (view/labelling.py): the blind A/B order per rater and case, a
blind label stored in the run's terms and shown back as given, labels checked against the
rubric's terms, the next case without a plan, and agreement between raters pinned against
a textbook κ. Issue 33.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judgecli.inputs.labels import LabelSpace
from judgecli.result import CaseResult, CaseStatus
from judgecli.rubric import RubricKind
from judgecli.view.labelling import (
    Scheme,
    agreement,
    new_line,
    new_slot,
    next_case,
    shown_value,
    stored_value,
)
from judgecli.view.runs import RunEntry

PAIRWISE = Scheme(LabelSpace(RubricKind.PAIRWISE), ["A", "B", "tie"], "A, B or tie")
SCALE = Scheme(LabelSpace(RubricKind.POINTWISE, scale=(1.0, 4.0)), ["1", "2", "3", "4"], "1-4")
CHOICES = Scheme(LabelSpace(RubricKind.BINARY, choices=["Yes", "No"]), ["Yes", "No"], "Yes/No")


def result(case_id: str, **fields) -> CaseResult:
    return CaseResult(id=case_id, status=CaseStatus.OK, rubric_hash="h", **fields)


def test_the_blind_order_is_the_same_for_a_rater_and_case_every_time() -> None:
    assert new_slot("salt", 0, "alice", "q1") == new_slot("salt", 0, "alice", "q1")


def test_the_blind_order_is_drawn_per_rater_and_case_about_half_each_way() -> None:
    ids = [f"q{i}" for i in range(400)]
    alice = [new_slot("salt", 0, "alice", i) for i in ids]
    bob = [new_slot("salt", 0, "bob", i) for i in ids]
    assert 160 < alice.count("A") < 240
    differ = sum(a != b for a, b in zip(alice, bob, strict=True))
    assert 160 < differ < 240  # independent orders, not one order for everyone
    other_salt = [new_slot("pepper", 0, "alice", i) for i in ids]
    assert other_salt != alice
    other_seed = [new_slot("salt", 1, "alice", i) for i in ids]
    assert other_seed != alice


@pytest.mark.parametrize(
    ("given", "slot", "stored", "shown"),
    [
        pytest.param("A", "A", "new", "A", id="A-holds-new"),
        pytest.param("A", "B", "old", "A", id="A-holds-old"),
        pytest.param("b", "A", "old", "B", id="lower-case-b"),
        pytest.param("B", "B", "new", "B", id="B-holds-new"),
        pytest.param("tie", "A", "tie", "tie", id="tie"),
        pytest.param("new", "B", "new", "B", id="a-script-in-run-terms"),
        pytest.param(None, "A", None, None, id="withdrawn"),
    ],
)
def test_a_blind_label_is_stored_as_the_winner_and_shown_back_as_given(
    given, slot: str, stored, shown
) -> None:
    value = stored_value(PAIRWISE, given, slot)
    assert value == stored
    assert shown_value(PAIRWISE, value, slot) == shown


@pytest.mark.parametrize(
    ("scheme", "given", "stored"),
    [
        pytest.param(SCALE, 3, 3.0, id="on-the-scale"),
        pytest.param(SCALE, "4", 4.0, id="a-buttons-text-is-its-score"),
        pytest.param(SCALE, "four", None, id="words-are-no-score"),
        pytest.param(SCALE, 5, None, id="off-the-scale"),
        pytest.param(SCALE, True, None, id="bool-is-no-score"),
        pytest.param(CHOICES, "yes", "Yes", id="choice-any-case"),
        pytest.param(CHOICES, "maybe", None, id="not-a-choice"),
        pytest.param(PAIRWISE, "C", None, id="no-such-slot"),
    ],
)
def test_a_label_is_checked_against_the_rubrics_terms(scheme: Scheme, given, stored) -> None:
    if stored is None:
        with pytest.raises(ValueError, match="is not one of"):
            stored_value(scheme, given, "A")
    else:
        assert stored_value(scheme, given, "A") == stored


def test_without_a_plan_the_next_case_is_the_first_unlabelled_in_id_order(tmp_path: Path) -> None:
    entry = RunEntry("r", tmp_path, {}, None)
    results = [result("q1"), result("q2"), result("q3")]
    found = next_case(entry, results, {"q1"}, None)
    assert (found.id, found.inclusion_probability, found.done, found.planned) == ("q2", None, 1, 3)
    assert next_case(entry, results, {"q1", "q2", "q3"}, None).id is None


def test_a_label_off_the_plan_records_no_inclusion_probability() -> None:
    line = new_line("q1", 3.0, "alice", note=None, plan=None)
    assert "inclusion_probability" not in line
    assert "strategy" not in line


def test_agreement_between_two_raters_is_cohens_kappa_of_the_textbook_example() -> None:
    # Cohen's κ's usual worked example (Wikipedia, "Cohen's kappa"): 50 items, both Yes 20,
    # A Yes B No 5, A No B Yes 10, both No 15: p_o = 0.7, p_e = 0.5, κ = 0.4.
    pairs = [("Yes", "Yes")] * 20 + [("Yes", "No")] * 5 + [("No", "Yes")] * 10 + [("No", "No")] * 15
    labels = {
        "a": {f"q{i}": {"label": x} for i, (x, _) in enumerate(pairs)},
        "b": {f"q{i}": {"label": y} for i, (_, y) in enumerate(pairs)},
    }
    found = agreement(CHOICES, labels, [])
    (between,) = [p for p in found["pairs"] if p["b"] == "b"]
    assert between["n"] == 50
    assert between["agreement"] == pytest.approx(0.7)
    assert between["kappa"] == pytest.approx(0.4)
    assert found["raters"] == {"a": 50, "b": 50}


def test_each_rater_is_compared_with_the_judge_on_the_cases_both_labelled() -> None:
    results = [result("q1", score=3.0), result("q2", score=1.0), result("q3", score=4.0)]
    labels = {"alice": {"q1": {"label": 3.0}, "q2": {"label": 2.0}}}
    (with_judge,) = agreement(SCALE, labels, results)["pairs"]
    assert (with_judge["a"], with_judge["b"], with_judge["n"]) == ("alice", "judge", 2)
    assert with_judge["agreement"] == pytest.approx(0.5)
    assert with_judge["weighted"] is True
