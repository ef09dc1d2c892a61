"""The label files `judge view` writes (RUN/labels/<rater>.jsonl), read by calibrate and
--labels (issue 33): a file, the folder or the run directory; relabels, undos, a torn
last line, and the inclusion probability a plan gave.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecli.errors import DatasetError, InputError
from judgecli.inputs.label_files import read_plan
from judgecli.inputs.labels import LabelSpace, read_labels
from judgecli.rubric import RubricKind

PAIRWISE = LabelSpace(kind=RubricKind.PAIRWISE)
SCALE = LabelSpace(kind=RubricKind.POINTWISE, scale=(1, 5))
AT = "2026-11-27T12:00:00Z"


def label_file(run: Path, rater: str, *rows: dict, tail: str = "") -> Path:
    folder = run / "labels"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{rater}.jsonl"
    text = "".join(json.dumps({"rater": rater, "at": AT} | r) + "\n" for r in rows)
    path.write_text(text + tail, encoding="utf-8")
    return path


def values(labels) -> dict[tuple[str | None, str], object]:
    return {(label.annotator, label.id): label.value for label in labels}


@pytest.mark.parametrize("where", ["run", "folder", "file"])
def test_a_run_its_labels_folder_or_one_file_are_read_alike(tmp_path, where):
    path = label_file(tmp_path, "ana", {"id": "a", "label": "new"}, {"id": "b", "label": "tie"})
    given = {"run": tmp_path, "folder": tmp_path / "labels", "file": path}[where]
    assert values(read_labels(given, PAIRWISE)) == {("ana", "a"): "new", ("ana", "b"): "tie"}


def test_every_rater_of_the_folder_is_read_with_their_name(tmp_path):
    label_file(tmp_path, "ana", {"id": "a", "label": 4})
    label_file(tmp_path, "bo", {"id": "a", "label": 2})
    assert values(read_labels(tmp_path, SCALE)) == {("ana", "a"): 4.0, ("bo", "a"): 2.0}


def test_a_later_line_replaces_the_earlier_one_and_null_withdraws_it(tmp_path):
    label_file(
        tmp_path,
        "ana",
        {"id": "a", "label": "old"},
        {"id": "b", "label": "new"},
        {"id": "a", "label": "new"},  # relabel
        {"id": "b", "label": None},  # undo
    )
    assert values(read_labels(tmp_path, PAIRWISE)) == {("ana", "a"): "new"}


def test_a_withdrawn_label_can_be_given_again(tmp_path):
    rows = [{"id": "a", "label": 3}, {"id": "a", "label": None}, {"id": "a", "label": 5}]
    label_file(tmp_path, "ana", *rows)
    assert values(read_labels(tmp_path, SCALE)) == {("ana", "a"): 5.0}


def test_a_torn_last_line_is_the_tail_of_a_crash_and_is_ignored(tmp_path):
    label_file(tmp_path, "ana", {"id": "a", "label": 3}, tail='{"id": "b", "lab')
    assert values(read_labels(tmp_path, SCALE)) == {("ana", "a"): 3.0}


def test_a_bad_line_before_the_last_names_file_and_line(tmp_path):
    path = label_file(tmp_path, "ana", {"id": "a", "label": 3})
    path.write_text(path.read_text() + "not json\n" + json.dumps({"id": "c", "label": 1}) + "\n")
    with pytest.raises(DatasetError) as caught:
        read_labels(tmp_path, SCALE)
    assert caught.value.message.startswith(f"{path}:2: not a JSON object")


def test_a_label_off_the_rubric_names_file_and_line(tmp_path):
    path = label_file(tmp_path, "ana", {"id": "a", "label": 3}, {"id": "b", "label": 9})
    with pytest.raises(DatasetError) as caught:
        read_labels(tmp_path, SCALE)
    assert caught.value.message.startswith(f"{path}:2: label 9 is not a number from 1 to 5")


def test_the_inclusion_probability_strategy_and_budget_are_carried(tmp_path):
    row = {"id": "a", "label": "new", "inclusion_probability": 0.25, "strategy": "uncertainty"}
    label_file(tmp_path, "ana", row | {"budget": 40}, {"id": "b", "label": "old"})
    first, second = read_labels(tmp_path, PAIRWISE)
    assert (first.inclusion_probability, first.strategy, first.budget) == (
        0.25,
        "uncertainty",
        40,
    )
    assert second.inclusion_probability is None


@pytest.mark.parametrize(
    ("key", "other"),
    [("seed", {"seed": 3}), ("budget", {"budget": 80}), ("strategy", {"strategy": "uniform"})],
)
def test_planned_labels_of_two_draws_are_refused_naming_the_line(tmp_path, key, other):
    # Issue 33: two raters who drew their plans with different seeds (or budgets, or
    # strategies) labelled cases of two draws; weighed as one, the estimate is neither's.
    plan = {"inclusion_probability": 0.5, "strategy": "uncertainty", "budget": 40, "seed": 0}
    label_file(tmp_path, "ana", {"id": "a", "label": "new"} | plan)
    label_file(tmp_path, "bob", {"id": "b", "label": "old"} | plan | other)
    with pytest.raises(InputError, match=f"bob.jsonl:1: .*different {key}s") as raised:
        read_labels(tmp_path, PAIRWISE)
    assert raised.value.hint is not None


def test_labels_of_one_draw_and_unplanned_labels_are_read_together(tmp_path):
    plan = {"inclusion_probability": 0.5, "strategy": "uncertainty", "budget": 40, "seed": 0}
    label_file(tmp_path, "ana", {"id": "a", "label": "new"} | plan)
    label_file(tmp_path, "bob", {"id": "b", "label": "old"} | plan, {"id": "c", "label": "tie"})
    assert len(read_labels(tmp_path, PAIRWISE)) == 3


@pytest.mark.parametrize("bad", [0, 1.5, -0.1, "half", True])
def test_an_inclusion_probability_outside_zero_one_is_refused(tmp_path, bad):
    path = label_file(tmp_path, "ana", {"id": "a", "label": 3, "inclusion_probability": bad})
    with pytest.raises(DatasetError) as caught:
        read_labels(tmp_path, SCALE)
    assert caught.value.message.startswith(f"{path}:1:")
    assert "inclusion_probability" in caught.value.message


def test_a_rater_is_the_file_name_when_a_line_does_not_say(tmp_path):
    folder = tmp_path / "labels"
    folder.mkdir()
    (folder / "cy.jsonl").write_text(json.dumps({"id": "a", "label": 2}) + "\n")
    (label,) = read_labels(tmp_path, SCALE)
    assert label.annotator == "cy"


def test_only_withdrawn_labels_are_no_labels(tmp_path):
    label_file(tmp_path, "ana", {"id": "a", "label": 3}, {"id": "a", "label": None})
    with pytest.raises(InputError, match="no labels"):
        read_labels(tmp_path, SCALE)


def test_a_run_without_label_files_says_how_to_make_them(tmp_path):
    (tmp_path / "results.jsonl").write_text("")
    with pytest.raises(InputError) as caught:
        read_labels(tmp_path, SCALE)
    assert "no label files" in caught.value.message
    assert "judge view" in (caught.value.hint or "")


def test_a_plain_labels_file_keeps_its_rule_that_a_label_is_given_once(write):
    # Outside RUN/labels/ (no `rater`), a repeated id is still an error, not a relabel.
    rows = [{"id": "a", "label": 3}, {"id": "a", "label": 4}]
    path = write("labels.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DatasetError, match="labelled twice"):
        read_labels(path, SCALE)


def test_rater_is_read_as_annotator_in_any_labels_file(write):
    path = write("mine.jsonl", json.dumps({"id": "a", "label": 3, "rater": "ana"}) + "\n")
    (label,) = read_labels(path, SCALE)
    assert label.annotator == "ana"


def test_a_sheet_of_a_plan_keeps_each_row_s_probability(write):
    text = (
        "id,category,input,output,label,annotator,inclusion_probability,strategy,budget\n"
        "a,,q,x,3,ana,0.25,uncertainty,40\n"
        "b,,q,y,2,ana,,,\n"
    )
    first, second = read_labels(write("sheet.csv", text), SCALE)
    assert (first.inclusion_probability, first.strategy, first.budget) == (0.25, "uncertainty", 40)
    assert second.inclusion_probability is None


def test_a_jsonl_sheet_of_a_plan_keeps_each_row_s_probability(write):
    row = {"id": "a", "label": 3, "inclusion_probability": "0.5", "budget": "8"}
    (label,) = read_labels(write("sheet.jsonl", json.dumps(row) + "\n"), SCALE)
    assert (label.inclusion_probability, label.budget) == (0.5, 8)


def test_a_sheet_cell_that_is_no_probability_names_its_row(write):
    text = "id,label,inclusion_probability\na,3,0.2\nb,2,lots\n"
    with pytest.raises(DatasetError) as caught:
        read_labels(write("sheet.csv", text), SCALE)
    assert caught.value.message.startswith(f"{write('x', '').parent / 'sheet.csv'}:3:")


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"id": "a"}'], ':1: missing "inclusion_probability"'),
        (['{"id": "a", "inclusion_probability": 0.5}', "[1]"], ":2: not a JSON object"),
        (
            ['{"id": "a", "inclusion_probability": 0.5}'] * 2,
            ":2: id 'a' is planned twice",
        ),
    ],
)
def test_a_bad_plan_line_names_file_and_line(write, lines, message):
    path = write("plan.jsonl", "\n".join(lines) + "\n")
    with pytest.raises(DatasetError) as caught:
        read_plan(path)
    assert caught.value.message == f"{path}{message}"


def test_a_plan_is_read_in_its_order(write):
    rows = [{"id": "b", "inclusion_probability": 0.5, "why": "orders disagree", "budget": 2}]
    rows.append({"id": "a", "inclusion_probability": 1.0, "strategy": "uniform"})
    plan = read_plan(write("plan.jsonl", "".join(json.dumps(r) + "\n" for r in rows)))
    assert [(p.id, p.inclusion_probability, p.why, p.budget) for p in plan] == [
        ("b", 0.5, "orders disagree", 2),
        ("a", 1.0, "", None),
    ]
