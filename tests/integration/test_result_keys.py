"""results.jsonl leaves out the keys that mean nothing for a case, rather than writing them
empty, and reads such a line back as it was.

Issue 29 (review 2026-11-27, finding 25): every score result carried `"judge_winners": {}`
and `"lengths": {}`, two pairwise keys.
"""

from __future__ import annotations

import json
from pathlib import Path

from judgecli.result import CaseResult
from judgecli.store import read_results
from tests.integration.conftest import REPO


def lines(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def test_a_score_result_has_no_pairwise_keys(run_cli, judge_server, cases_file):
    run = run_cli(judge_server, "score", str(cases_file), "--rubric", "helpfulness", "--out", "s")
    assert run.exit_code == 0, run.stderr
    found = lines(Path("s"))
    assert found
    for line in found:
        assert "judge_winners" not in line
        assert "lengths" not in line
        assert "score" in line
    # Read back, the keys are there again, empty: no reader can tell the difference.
    for result in read_results(Path("s/results.jsonl")):
        assert (result.judge_winners, result.lengths) == ({}, {})


def test_a_pairwise_result_keeps_them(run_cli, judge_server):
    datasets = REPO / "datasets"
    run = run_cli(
        judge_server,
        "pairwise",
        str(datasets / "old.jsonl"),
        str(datasets / "new.jsonl"),
        "--limit",
        "3",
        "--out",
        "p",
    )
    assert run.exit_code == 0, run.stderr
    for line in lines(Path("p")):
        assert set(line["judge_winners"]) == {"openai/sim"}
        assert set(line["lengths"]) == {"old", "new"}
        assert CaseResult.model_validate(line).model_dump(mode="json", exclude_none=True) == line
