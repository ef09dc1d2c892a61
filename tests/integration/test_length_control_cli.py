"""The length-controlled win rate through the real CLI (issue 18): a simulated judge that
prefers the longer answer when unsure, NEW's answers mostly longer than OLD's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecli.report.length_control import LABEL
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.conftest import write_jsonl

CASES = 80
QUESTION = "How does photosynthesis turn sunlight, water and carbon dioxide into sugar?"
EXTRA = "It also matters for farming, forests and the climate of the whole planet."
WARNING = "answer length sways the judge"


def answer(i: int, side: str, extra: int) -> str:
    """An answer of 20+ words that uses the question's words, so the simulator's text features
    rate every answer alike and only its seeded per-answer noise (and the length bias) decide;
    `extra` sentences add length.
    """
    return (
        f"Case {i} ({side}): photosynthesis converts sunlight, water and carbon dioxide into "
        "sugar inside the chloroplasts of green plants, releasing oxygen as a byproduct. "
        + " ".join([EXTRA] * extra)
    ).strip()


@pytest.fixture
def longer_new(tmp_path: Path) -> tuple[Path, Path]:
    """OLD and NEW: NEW's answer is longer in 3 of 4 cases (by 1–4 sentences), shorter in 1."""
    old, new = [], []
    for i in range(CASES):
        extra = 1 + (i // 4) % 4
        old_extra, new_extra = (extra, 0) if i % 4 == 0 else (0, extra)
        case = {"id": f"c{i:03d}", "input": QUESTION}
        old.append({**case, "output": answer(i, "a", old_extra)})
        new.append({**case, "output": answer(i, "b", new_extra)})
    return write_jsonl(tmp_path / "old.jsonl", old), write_jsonl(tmp_path / "new.jsonl", new)


def run_pairwise(run_cli, longer_new, *, length_bias: float, out: str):
    old, new = longer_new
    with SimulatorServer(SimulatorConfig(length_bias=length_bias)) as server:
        run = run_cli(server, "pairwise", str(old), str(new), "--out", out, "--json", "--quiet")
        requests = server.requests
    assert run.exit_code == 0, run.stderr
    assert len(requests) == 2 * CASES  # both orders of every pair
    return run.summary


def test_a_judge_that_rewards_length_is_caught_and_warned_about(run_cli, longer_new):
    s = run_pairwise(run_cli, longer_new, length_bias=1.0, out="biased")
    fit = s["length_control"]
    assert set(fit) == {
        "coefficient",
        "coefficient_ci",
        "sigma",
        "n",
        "method",
        "reason",
        "outcome",
    }
    assert fit["outcome"] == "verdict"
    assert fit["n"] == CASES
    assert fit["reason"] is None
    assert fit["coefficient_ci"][0] > 0  # the judge prefers the longer answer
    low, high = s["win_rate_length_controlled_ci"]
    assert low <= s["win_rate_length_controlled"] <= high
    assert s["win_rate"] - s["win_rate_length_controlled"] > 0.05
    [warning] = [w for w in s["warnings"] if WARNING in w]
    assert f"{s['win_rate_length_controlled']:.1%}" in warning
    written = json.loads(Path("biased/summary.json").read_text())
    assert written["win_rate_length_controlled"] == s["win_rate_length_controlled"]
    assert WARNING in written["warnings"][-1]
    report = Path("biased/report.md").read_text()
    assert f"| {LABEL} | {s['win_rate_length_controlled']:.1%} |" in report
    assert "| length coefficient (log-odds) |" in report
    assert LABEL in Path("biased/report.html").read_text()


def test_without_a_length_bias_the_keys_are_there_and_nothing_is_warned(run_cli, longer_new):
    s = run_pairwise(run_cli, longer_new, length_bias=0.0, out="fair")
    low, high = s["length_control"]["coefficient_ci"]
    assert low <= 0 <= high
    assert s["win_rate_length_controlled"] is not None
    assert not [w for w in s["warnings"] if WARNING in w]
