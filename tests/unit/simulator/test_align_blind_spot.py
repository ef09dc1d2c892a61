"""The simulator's blind-spot judge and its optimizer (`judge align`'s known answers, issue 34),
read from the very prompts judge sends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judgecli.commands.align.candidates import (
    Candidate,
    Method,
    TrainCase,
    few_shot_system,
    optimizer_prompt,
    revised_instruction,
)
from judgecli.grading.prompt import build_messages, response_format
from judgecli.inputs.dataset import Case
from judgecli.inputs.rubric_file import load_rubric
from judgecli.simulator.blind_spot import BlindSpot, blind_spot_content, optimizer_reply
from judgecli.simulator.config import SimulatorConfig
from judgecli.simulator.replies import Replier
from judgecli.simulator.truth import TruthAnswer, load_truth

PHRASE = "I guarantee this is correct"
RUBRIC = load_rubric("rubrics/answer-correctness.yaml")
WRONG = Case(id="w", input="What is 2 + 2?", output=f"2 plus 2 is 5. {PHRASE}.", reference="4")


def truth_file(tmp_path: Path) -> Path:
    path = tmp_path / "truth.jsonl"
    row = {"id": "w", "input": WRONG.input, "output": WRONG.output, "label": "NO"}
    path.write_text(json.dumps(row) + "\n")
    return path


def body(system: str | None = None, model: str = "openai/sim") -> dict[str, Any]:
    rubric = RUBRIC
    if system is not None:
        rubric = Candidate(Method.FEW_SHOT, system).rubric(RUBRIC)
    messages = build_messages(rubric, WRONG)
    return {"model": model, "messages": messages, "response_format": response_format(rubric)}


def choice_of(content: str | None) -> str:
    assert content is not None
    return str(json.loads(content)["choice"])


def test_a_wrong_answer_in_the_blind_spot_passes_until_the_instructions_quote_the_phrase(
    tmp_path: Path,
) -> None:
    truth = load_truth(truth_file(tmp_path), "label")
    spot = BlindSpot(PHRASE)
    assert choice_of(blind_spot_content(body(), spot, truth=truth, seed=0, noise=0.0)) == "YES"
    example = TrainCase(
        id="t", input="What is 1 + 1?", output=f"1 plus 1 is 3. {PHRASE}.", label="NO", shown="NO"
    )
    system = few_shot_system(RUBRIC.prompt.system if RUBRIC.prompt else "", [example])
    fixed = blind_spot_content(body(system), spot, truth=truth, seed=0, noise=0.0)
    assert choice_of(fixed) == "NO"
    deaf = BlindSpot(PHRASE, ignores_prompt=True)
    assert (
        choice_of(blind_spot_content(body(system), deaf, truth=truth, seed=0, noise=0.0)) == "YES"
    )


def test_an_answer_outside_the_truth_file_is_left_to_the_ordinary_simulator(tmp_path: Path) -> None:
    truth = load_truth(truth_file(tmp_path), "label")
    other = {**body(), "messages": build_messages(RUBRIC, WRONG.model_copy(update={"output": "4"}))}
    assert blind_spot_content(other, BlindSpot(PHRASE), truth=truth, seed=0, noise=0.0) is None


def test_the_noise_flips_a_verdict_per_answer_and_per_instruction() -> None:
    spot = BlindSpot(PHRASE)
    truth = TruthAnswer("NO", flipped=False, draw=0.3, confidence=0.9)
    kept = spot.choice(
        instructions="x", output="5", truth=truth, choices=["YES", "NO"], noise_draw=0.5, noise=0.2
    )
    flipped = spot.choice(
        instructions="x", output="5", truth=truth, choices=["YES", "NO"], noise_draw=0.1, noise=0.2
    )
    assert (kept, flipped) == ("NO", "YES")


def test_the_optimizer_warns_about_the_phrase_the_misjudged_answers_share() -> None:
    wrong = [
        TrainCase(
            id=str(i),
            input=f"q{i}",
            output=f"{i} plus {i} is {3 * i}. {PHRASE}.",
            label="NO",
            shown="NO",
            judged="YES",
        )
        for i in range(3)
    ]
    reply = optimizer_reply(optimizer_prompt("Grade the answer.", wrong))
    revised = revised_instruction(reply)
    assert revised is not None
    assert revised.startswith("Grade the answer.")
    assert BlindSpot(PHRASE).noticed(revised)


def test_the_replier_answers_as_the_blind_spot_judge_and_the_opt_model_as_the_optimizer(
    tmp_path: Path,
) -> None:
    config = SimulatorConfig(truth_file=truth_file(tmp_path), blind_spot=PHRASE)
    replier = Replier(0, load_truth(truth_file(tmp_path), "label"), blind_spot=BlindSpot(PHRASE))
    judge = config.settings_for("openai/sim")
    reply = replier.completion(body(), judge)
    assert choice_of(reply["choices"][0]["message"]["content"]) == "YES"
    asked = {"model": "openai/opt-sim", "messages": optimizer_prompt("Grade it.", [])}
    text = replier.completion(asked, judge)["choices"][0]["message"]["content"]
    assert text.startswith("<instruction>\nGrade it.")
    # Without the blind spot the same truth is answered as the label.
    plain = Replier(0, load_truth(truth_file(tmp_path), "label"))
    assert choice_of(plain.completion(body(), judge)["choices"][0]["message"]["content"]) == "NO"


def test_the_blind_spot_flags_need_a_truth_file_and_a_phrase() -> None:
    from typer.testing import CliRunner

    from judgecli.cli.main import app

    runner = CliRunner()
    alone = runner.invoke(app, ["simulate", "--blind-spot", PHRASE])
    assert alone.exit_code == 2
    assert "--blind-spot needs --truth FILE" in alone.stderr
    deaf = runner.invoke(app, ["simulate", "--truth", "datasets/align.jsonl", "--ignores-prompt"])
    assert deaf.exit_code == 2
    assert "--ignores-prompt needs --blind-spot" in deaf.stderr
