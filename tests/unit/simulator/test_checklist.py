"""The simulator as a checklist's judge (judgecli/simulator/checklist.py, issue 32): schema-valid
verdicts for an item asked alone or a case's items at once, the same either way, and given
verdicts replayed from a truth file."""

from __future__ import annotations

import json

import pytest

from judgecli.errors import DatasetError
from judgecli.grading.checklist import item_messages, items_format, items_messages
from judgecli.grading.prompt import case_values, response_format
from judgecli.inputs.dataset import Case
from judgecli.inputs.rubric_file import load_rubric
from judgecli.inputs.rubric_items import RubricItem
from judgecli.inputs.rubric_library import library
from judgecli.judge.formats import FormatMode, wire_format
from judgecli.simulator.truth import load_truth
from judgecli.simulator.verdicts import verdict_content
from judgecli.verdict import parse_items_verdict, parse_verdict
from tests.conftest import DATA

RUBRIC = next(load_rubric(p) for p in library() if p.stem == "checklist")
ITEMS = [
    RubricItem(criterion="Says honey is unsafe before 12 months", points=9),
    RubricItem(criterion="Names infant botulism as the reason", points=5),
    RubricItem(criterion="Recommends maple syrup instead", points=2),
    RubricItem(criterion="Says honey is fine for babies", points=-9),
]
CASE = Case(
    id="c",
    input="Can I give honey to my 6-month-old?",
    output="No: honey is unsafe before 12 months because it can cause infant botulism.",
    rubric_items=ITEMS,
)


def one_by_one(case: Case, truth=None, noise=0.0, mode=FormatMode.JSON_SCHEMA, model="sim"):
    values = case_values(RUBRIC, case)
    said = []
    for item in case.rubric_items or []:
        body = {"model": model, "messages": item_messages(RUBRIC, values, item)}
        if (rf := wire_format(mode, response_format(RUBRIC))) is not None:
            body["response_format"] = rf
        said.append(
            parse_verdict(verdict_content(body, seed=0, truth=truth, noise=noise), RUBRIC).met
        )
    return said


def all_at_once(case: Case, truth=None, noise=0.0, mode=FormatMode.JSON_SCHEMA, model="sim"):
    items = case.rubric_items or []
    body = {"model": model, "messages": items_messages(RUBRIC, case_values(RUBRIC, case), items)}
    if (rf := wire_format(mode, items_format(len(items)))) is not None:
        body["response_format"] = rf
    text = verdict_content(body, seed=0, truth=truth, noise=noise)
    return [i.met for i in parse_items_verdict(text, len(items)).items or []]


@pytest.mark.parametrize(
    "mode", [FormatMode.JSON_SCHEMA, FormatMode.JSON_OBJECT_SCHEMA, FormatMode.PROMPT]
)
def test_an_item_asked_alone_or_with_the_others_gets_the_same_verdict(mode):
    assert one_by_one(CASE, mode=mode) == all_at_once(CASE, mode=mode)


def test_an_answer_that_says_what_a_criterion_names_meets_it_and_one_that_does_not_does_not():
    # Told nothing, the simulator reads the criterion's words in the answer.
    assert one_by_one(CASE)[:2] == [True, True]
    assert one_by_one(CASE)[2] is False


def test_given_verdicts_are_replayed_in_both_ways_of_asking_and_noise_flips_them_alike():
    truth = load_truth(DATA / "checklist" / "worked.jsonl", "met")
    worked = [json.loads(line) for line in (DATA / "checklist" / "worked.jsonl").open()]
    for raw in worked:
        case = Case(
            id=raw["id"],
            input=raw["input"],
            output=raw["output"],
            rubric_items=[RubricItem(**i) for i in raw["rubric_items"]],
        )
        assert one_by_one(case, truth) == all_at_once(case, truth) == raw["met"], raw["id"]
        assert one_by_one(case, truth, 0.5) == all_at_once(case, truth, 0.5), raw["id"]


def test_noise_flips_a_share_of_the_given_verdicts_and_each_judge_its_own(tmp_path):
    items = [{"criterion": f"criterion number {n}", "points": 1} for n in range(400)]
    path = tmp_path / "truth.jsonl"
    row = {"input": "q", "output": "a", "rubric_items": items, "met": [True] * 400}
    path.write_text(json.dumps(row) + "\n")
    truth = load_truth(path, "met")
    case = Case(id="c", input="q", output="a", rubric_items=[RubricItem(**i) for i in items])
    said = all_at_once(case, truth, noise=0.2)
    assert 0.12 < said.count(False) / 400 < 0.28
    assert said != all_at_once(case, truth, noise=0.2, model="other")


@pytest.mark.parametrize(
    ("row", "says"),
    [
        # Issue 32: a list label on a line without rubric_items is a bad label, not a
        # checklist's (the simulator's own test of a bad label, tests/unit/simulator).
        pytest.param({"met": [True]}, "must be a number or a string", id="no-items"),
        pytest.param(
            {"met": [True], "rubric_items": [{"criterion": "a"}, {"criterion": "b"}]},
            "one for each item",
            id="short",
        ),
        pytest.param({"met": True, "rubric_items": [{"criterion": "a"}]}, "a list", id="single"),
        pytest.param({"rubric_items": [{"criterion": "a"}]}, "got None", id="missing"),
        pytest.param(
            {"met": ["yes"], "rubric_items": [{"criterion": "a"}]}, "true or false", id="text"
        ),
    ],
)
def test_a_truth_line_whose_verdicts_do_not_pair_with_its_items_names_the_line(tmp_path, row, says):
    path = tmp_path / "truth.jsonl"
    path.write_text(json.dumps({"input": "q", "output": "a", **row}) + "\n")
    with pytest.raises(DatasetError) as caught:
        load_truth(path, "met")
    assert caught.value.message.startswith(f"{path}:1: ")
    assert says in caught.value.message
