"""The simulator plays agents' judges (issue 32): it reads the run a trajectory, per-step or
pairwise prompt shows, answers schema-valid verdicts from what the run did, and, told the
truth (`--truth` lines with `messages`, `label`, `step_labels`), answers the known labels so
the statistics can be tested against known answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecli.errors import DatasetError
from judgecli.grading.prompt import (
    build_messages,
    build_pair_messages,
    format_instructions,
    response_format,
)
from judgecli.grading.steps import graded_parts
from judgecli.inputs.dataset import parse_case
from judgecli.inputs.rubric_file import load_rubric
from judgecli.simulator.runs import read_run, run_quality, step_quality
from judgecli.simulator.transcript import read_transcript
from judgecli.simulator.truth import load_truth
from judgecli.simulator.verdicts import verdict_content

REPO = Path(__file__).resolve().parents[3]
LIBRARY = REPO / "rubrics"


def call(name: str, args: dict, call_id: str) -> dict:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def run(
    *steps: tuple[str, dict, str], answer: str = "Order 9 is refunded: $42 back in 5 days."
) -> list[dict]:
    messages = [{"role": "user", "content": "Refund order 9 and say when the money arrives."}]
    for i, (name, args, said) in enumerate(steps):
        messages.append(
            {"role": "assistant", "content": None, "tool_calls": [call(name, args, f"c{i}")]}
        )
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "name": name, "content": said})
    if answer:
        messages.append({"role": "assistant", "content": answer})
    return messages


CLEAN = run(("get_order", {"id": 9}, "delivered"), ("refund", {"id": 9}, "approved, 5 days"))
WASTEFUL = run(
    ("get_order", {"id": 9}, "delivered"),
    ("get_order", {"id": 9}, "delivered"),
    ("refund", {"id": 9}, "Error: reason missing"),
    ("refund", {"id": 9}, "approved, 5 days"),
)


def case_of(messages, case_id="r"):
    line = json.dumps({"id": case_id, "messages": messages})
    return parse_case(Path("runs.jsonl"), 1, line, field_map={}, requires=["trajectory"])


def body(messages, rubric) -> dict:
    return {"model": "sim", "messages": messages, "response_format": response_format(rubric)}


def verdict(messages, rubric, **truth) -> dict:
    return json.loads(verdict_content(body(messages, rubric), seed=0, **truth))


def test_the_run_a_trajectory_prompt_shows_is_read_back():
    rubric = load_rubric(LIBRARY / "trajectory.yaml")
    transcript = read_transcript(build_messages(rubric, case_of(WASTEFUL)))
    seen = transcript.run
    assert seen is not None
    assert seen.task == "Refund order 9 and say when the money arrives."
    assert seen.answer == "Order 9 is refunded: $42 back in 5 days."
    assert seen.calls == ('get_order({"id":9})',) * 2 + ('refund({"id":9})',) * 2
    assert seen.results[2] == "Error: reason missing"
    assert seen.graded is None


def test_a_run_with_errors_and_repeated_calls_scores_below_a_clean_one():
    clean = read_run(case_of(CLEAN).field_text("trajectory"))
    wasteful = read_run(case_of(WASTEFUL).field_text("trajectory"))
    # 1 error of 4 results and 1 repeat of 4 calls (the retry after the error is none).
    assert run_quality(wasteful, 1.0) == pytest.approx((1 - 1 / 4) * (1 - 1 / 4))
    assert run_quality(clean, 1.0) == 1.0
    rubric = load_rubric(LIBRARY / "trajectory.yaml")
    clean_score = verdict(build_messages(rubric, case_of(CLEAN)), rubric)["score"]
    wasteful_score = verdict(build_messages(rubric, case_of(WASTEFUL)), rubric)["score"]
    assert clean_score > wasteful_score


def test_each_step_is_read_from_its_step_fence_and_scored_by_its_own_result():
    rubric = load_rubric(LIBRARY / "tool-use.yaml")
    graded = graded_parts(rubric, case_of(WASTEFUL))
    runs = [read_transcript(build_messages(rubric, view)).run for view in graded.views]
    assert [r.graded for r in runs] == [
        'get_order({"id":9})',
        'get_order({"id":9})',
        'refund({"id":9})',
        'refund({"id":9})',
    ]
    assert [step_quality(r) for r in runs] == [0.85, 0.25, 0.15, 0.85]
    scores = [verdict(build_messages(rubric, view), rubric)["score"] for view in graded.views]
    assert scores[0] > scores[1]
    assert scores[3] > scores[2]
    reasoning = verdict(build_messages(rubric, graded.views[2]), rubric)["reasoning"]
    assert "step 3 (refund): an error" in reasoning


def test_two_runs_compared_are_judged_by_what_each_did():
    rubric = load_rubric(LIBRARY / "trajectory-pairwise.yaml")
    old, new = case_of(WASTEFUL), case_of(CLEAN)
    transcript = read_transcript(build_pair_messages(rubric, old, new, old_first=True))
    assert transcript.run_a is not None
    assert transcript.run_b is not None
    winners = [
        verdict(build_pair_messages(rubric, old, new, old_first=first), rubric)["winner"]
        for first in (True, False)
    ]
    # The clean run wins in both orders: B when NEW is second, A when it is first.
    assert winners == ["B", "A"]


# Issue 32: agent-a's ag-04 answers without a call; it was read as a chat and its pair
# judged by answer text, so a judge told both runs' labels answered another winner.
def test_a_run_that_made_no_call_is_read_as_a_run_beside_one_that_did():
    rubric = load_rubric(LIBRARY / "trajectory-pairwise.yaml")
    guessed = [
        {"role": "user", "content": "Refund order 9 and say when the money arrives."},
        {"role": "assistant", "content": "Done, the money arrives soon."},
    ]
    transcript = read_transcript(
        build_pair_messages(rubric, case_of(guessed), case_of(CLEAN), old_first=True)
    )
    assert transcript.run_a is not None
    assert transcript.run_a.calls == ()
    assert transcript.run_b is not None


def truth_lines(tmp_path, *lines) -> Path:
    path = tmp_path / "truth.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_told_the_truth_it_answers_each_runs_label_and_each_steps(tmp_path):
    path = truth_lines(
        tmp_path,
        {"id": "w", "messages": WASTEFUL, "label": 2, "step_labels": [4, 1, 3, 4]},
        {"id": "c", "messages": CLEAN, "label": 5},
    )
    table = load_truth(path, "label")
    whole = load_rubric(LIBRARY / "trajectory.yaml")
    for messages, label in ((WASTEFUL, 2), (CLEAN, 5)):
        said = verdict(build_messages(whole, case_of(messages)), whole, truth=table)
        assert said["score"] == label
    steps = load_rubric(LIBRARY / "tool-use.yaml")
    views = graded_parts(steps, case_of(WASTEFUL)).views
    said = [verdict(build_messages(steps, v), steps, truth=table)["score"] for v in views]
    assert said == [4, 1, 3, 4]
    # A step is known by the task and the calls up to it: the clean run's first step is the
    # wasteful run's first (the same context), its second is not labelled.
    first, second = graded_parts(steps, case_of(CLEAN)).views
    assert verdict(build_messages(steps, first), steps, truth=table)["score"] == 4
    unknown = verdict(build_messages(steps, second), steps, truth=table)["reasoning"]
    assert "a given label" not in unknown


def test_two_labelled_runs_get_the_winner_their_labels_say_in_both_orders(tmp_path):
    table = load_truth(
        truth_lines(
            tmp_path,
            # Against the features: the wasteful run is labelled the better one.
            {"id": "w", "messages": WASTEFUL, "label": 5},
            {"id": "c", "messages": CLEAN, "label": 2},
        ),
        "label",
    )
    rubric = load_rubric(LIBRARY / "trajectory-pairwise.yaml")
    old, new = case_of(WASTEFUL), case_of(CLEAN)
    winners = [
        verdict(build_pair_messages(rubric, old, new, old_first=first), rubric, truth=table)[
            "winner"
        ]
        for first in (True, False)
    ]
    assert winners == ["A", "B"]
    flipped = [
        verdict(
            build_pair_messages(rubric, old, new, old_first=first), rubric, truth=table, noise=1.0
        )["winner"]
        for first in (True, False)
    ]
    # With noise 1 the label is never answered, and both orders flip the same way.
    assert flipped[0] != "A"
    assert {flipped[0], flipped[1]} in ({"B", "A"}, {"tie"})


def test_a_truth_line_whose_step_labels_do_not_match_its_calls_names_the_line(tmp_path):
    path = truth_lines(tmp_path, {"id": "c", "messages": CLEAN, "label": 5, "step_labels": [1]})
    with pytest.raises(DatasetError) as caught:
        load_truth(path, "label")
    assert caught.value.message.startswith(f'{path}:1: "step_labels" must be a list of 2 labels')


def test_the_trajectory_prompts_carry_the_schema_the_simulator_fills():
    for name in ("trajectory", "tool-use", "step-efficiency"):
        rubric = load_rubric(LIBRARY / f"{name}.yaml")
        assert "Reply with a single JSON object" in format_instructions(rubric)
        said = verdict(build_messages(rubric, case_of(CLEAN)), rubric)
        assert set(said) == {"reasoning", "score"}
        assert rubric.scale is not None
        assert rubric.scale.min <= said["score"] <= rubric.scale.max
