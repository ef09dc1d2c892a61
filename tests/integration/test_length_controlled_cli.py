"""The length-controlled win rates through the real CLI (issue 29): `judge pairwise
--score-mode logprob` fits the judge's probabilities, and `judge arena` reports each
system's rate against the baseline with the instruction-difficulty term.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from judgecli.stats.length_control import length_controlled_win_rate
from tests.integration.conftest import write_jsonl
from tests.integration.test_length_control_cli import CASES, answer

pytestmark = pytest.mark.timeout(300)


def write_system(tmp_path: Path, name: str, extra_of) -> Path:
    """A system's answers: `extra_of(i)` sentences of padding on case i."""
    rows = [
        {
            "id": f"c{i:03d}",
            "input": "How does photosynthesis work?",
            "output": answer(i, name, extra_of(i)),
        }
        for i in range(CASES)
    ]
    return write_jsonl(tmp_path / f"{name}.jsonl", rows)


def test_pairwise_in_logprob_mode_fits_the_judges_probabilities(run_cli, tmp_path):
    old = write_system(tmp_path, "old", lambda i: (i // 4) % 3)
    new = write_system(tmp_path, "new", lambda i: 1 + i % 4)
    with SimulatorServer(SimulatorConfig(length_bias=1.0)) as server:
        run = run_cli(
            server,
            "pairwise",
            str(old),
            str(new),
            "--score-mode",
            "logprob",
            "--out",
            "lp",
            "--json",
            "--quiet",
        )
    assert run.exit_code == 0, run.stderr
    s = run.summary
    assert s["length_control"]["outcome"] == "probability"
    lines = [json.loads(x) for x in Path("lp/results.jsonl").read_text().splitlines()]
    y = [r["probabilities"]["new"] + 0.5 * r["probabilities"].get("tie", 0.0) for r in lines]
    d = [r["lengths"]["new"] - r["lengths"]["old"] for r in lines]
    fit = length_controlled_win_rate(y, d, seed=0)
    assert s["win_rate_length_controlled"] == pytest.approx(fit.win_rate, abs=1e-12)
    report = Path("lp/report.md").read_text()
    assert "instruction-difficulty term" in report
    assert "the judge's probabilities" in report


def test_an_arena_reports_each_systems_rate_against_the_baseline_at_equal_length(run_cli, tmp_path):
    files = [
        write_system(tmp_path, "base", lambda i: 1 + i % 2),
        write_system(tmp_path, "terse", lambda i: (i // 3) % 2),
        write_system(tmp_path, "wordy", lambda i: 2 + i % 3),
        write_system(tmp_path, "mixed", lambda i: i % 4),
    ]
    with SimulatorServer(SimulatorConfig(length_bias=1.0)) as server:
        run = run_cli(
            server,
            "arena",
            *map(str, files),
            "--baseline",
            "base",
            "--out",
            "ar",
            "--json",
            "--quiet",
        )
    assert run.exit_code == 0, run.stderr
    lc = run.summary["length_controlled"]
    assert lc["baseline"] == "base"
    assert lc["outcome"] == "verdict"
    assert {x["name"] for x in lc["standings"]} == {"terse", "wordy", "mixed"}
    assert lc["instruction_difficulty"]["n_cases"] == CASES
    for x in lc["standings"]:
        assert x["n"] == CASES
        low, high = x["win_rate_ci"]
        assert low <= x["win_rate"] <= high
        assert x["coefficient"] > 0  # the simulated judge rewards length
    # Length decides this judge: at equal length the wordy system's lead over the baseline
    # shrinks and the terse system's deficit too.
    by_name = {x["name"]: x for x in lc["standings"]}
    assert by_name["wordy"]["win_rate"] < by_name["wordy"]["win_rate_raw"]
    assert by_name["terse"]["win_rate"] > by_name["terse"]["win_rate_raw"]
    written = json.loads(Path("ar/summary.json").read_text())
    assert written["length_controlled"] == lc
    report = Path("ar/report.md").read_text()
    assert "## Length-controlled win rate against base" in report
    assert f"{by_name['wordy']['win_rate']:.1%}" in report
    assert "length-controlled win rate against base" in Path("ar/report.html").read_text().lower()
