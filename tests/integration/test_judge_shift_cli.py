"""Judge shift vs system shift (issue 35) through the real CLI, LiteLLM and the simulator.

Both the judge and the system change between run A and run B: A is the `sharp` judge (it
answers every true label) on the old answers, B the `noisy` judge (the other choice with
probability 0.3, a seeded draw per answer) on the new ones. 40 answers are byte-identical in
both datasets (the anchors); the 20 others were wrong and are fixed. So by construction the
anchors' change is the noisy judge's alone, recomputed here from the simulator's truth draw
(`judgecli.simulator.truth`), and the fixed answers' change is the system's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats

from judgecli.simulator.config import JudgeProfile
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from judgecli.simulator.truth import load_truth, shown
from tests.integration.conftest import write_jsonl

N_ANCHORS, N_FIXED = 40, 20
NOISE, SEED = 0.3, 0
FLOOR = 0.7
BINARY = """\
name: correct
version: 1
kind: binary
choices: [YES, NO]
prompt:
  user: "Question: {input}\\nAnswer: {output}"
"""


def row(i: int, right: bool) -> dict[str, str]:
    return {
        "id": f"c{i}",
        "input": f"What is {i} + {i}?",
        "output": f"It is {2 * i if right else 2 * i + 1}.",
        "label": "YES" if right else "NO",
    }


OLD = [row(i, i % 5 != 0) for i in range(1, N_ANCHORS + 1)] + [
    row(i, False) for i in range(N_ANCHORS + 1, N_ANCHORS + N_FIXED + 1)
]
NEW = OLD[:N_ANCHORS] + [row(i, True) for i in range(N_ANCHORS + 1, N_ANCHORS + N_FIXED + 1)]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("judge_shift")
    rubric = folder / "correct.yaml"
    rubric.write_text(BINARY, encoding="utf-8")
    return {
        "old": write_jsonl(folder / "old.jsonl", OLD),
        "new": write_jsonl(folder / "new.jsonl", NEW),
        "truth": write_jsonl(folder / "truth.jsonl", OLD + NEW[N_ANCHORS:]),
        "rubric": rubric,
    }


@pytest.fixture(scope="module")
def server(files: dict[str, Path]):
    config = SimulatorConfig(
        seed=SEED,
        truth_file=files["truth"],
        profiles={"sharp": JudgeProfile(noise=0.0), "noisy": JudgeProfile(noise=NOISE)},
    )
    with SimulatorServer(config) as running:
        yield running


def noisy_passes(files: dict[str, Path], case: dict[str, str]) -> bool:
    """Whether the simulator's seeded draw makes `noisy` answer YES for this case."""
    answer = load_truth(files["truth"], "label").answer(
        shown("input", case["input"]),
        shown("output", case["output"]),
        noise=NOISE,
        seed=SEED,
        model="noisy",
    )
    assert answer is not None
    return (case["label"] == "YES") != answer.flipped


def test_drift_tells_the_noisy_judges_shift_on_identical_answers_from_the_fixed_systems(
    run_cli, server, files
):
    common = ["--rubric", str(files["rubric"]), "--quiet"]
    a = run_cli(server, "score", str(files["old"]), *common, "--out", "a", model="openai/sharp")
    assert a.exit_code == 0, a.stderr
    b = run_cli(
        server,
        "score",
        str(files["new"]),
        *common,
        "--out",
        "b",
        "--min-pass-rate",
        str(FLOOR),
        model="openai/noisy",
    )
    gate = json.loads(Path("b/summary.json").read_text())["gate"]
    assert b.exit_code == (0 if gate["passed"] else 1), b.stderr

    run = run_cli(None, "drift", "a", "b", "--out", "d", "--json")
    assert run.exit_code == 0, run.stderr
    s = run.summary

    # The known answers: the anchors' changes are the noisy judge's draws alone.
    anchor_changes = [
        float(noisy_passes(files, c)) - float(c["label"] == "YES") for c in NEW[:N_ANCHORS]
    ]
    system_changes = [float(noisy_passes(files, c)) for c in NEW[N_ANCHORS:]]
    assert (s["n_identical"], s["n_system"], s["shift_scale"]) == (N_ANCHORS, N_FIXED, "pass_rate")
    assert s["judge_shift"] == pytest.approx(sum(anchor_changes) / N_ANCHORS)
    reference = stats.ttest_1samp(anchor_changes, 0.0).confidence_interval(0.95)
    assert s["judge_shift_ci"] == pytest.approx([reference.low, reference.high])
    assert s["system_shift"] == pytest.approx(sum(system_changes) / N_FIXED)
    assert s["judge_shift"] < 0 < s["system_shift"]  # harsher judge, better system

    # B's gate: the noisy judge's harshness could explain a failure within its reach.
    explained = s["judge_shift_gate"]
    margin = gate["value"] - FLOOR
    assert explained["margin"] == pytest.approx(margin)
    low, high = s["judge_shift_ci"]
    expected = high > margin if margin >= 0 else low <= margin
    assert explained["explains"] is expected
    assert any("could explain b's gate" in w for w in s["warnings"]) is expected
    assert expected  # with this seed the failure lies within the judge's reach
