"""Run settings whose answer must not depend on the moment (issue 29 §5): `--max-cost` with a
model that has no price is refused the same way whatever the reply cache holds, and a run
that failed on `--max-tokens` continues with the hint it printed, which raises it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.conftest import DATA

CASES = DATA / "bad" / "good-old.jsonl"
NO_PRICE = "error: --max-cost needs a price, and LiteLLM has none for openai/sim"


def score(run_cli, server, out: str, *extra: str):
    return run_cli(
        server, "score", str(CASES), "--rubric", "helpfulness", "--out", out, "--quiet", *extra
    )


# Issue 29 (review 2026-11-27, finding 9): with a warm cache the check never ran (exit 0),
# with a cold one it refused (exit 2): a run that passed on a laptop failed in CI.
@pytest.mark.parametrize(
    "warm",
    [pytest.param(False, id="cold-cache"), pytest.param(True, id="warm-cache")],
)
@pytest.mark.parametrize(
    "cached", [pytest.param((), id="cache"), pytest.param(("--no-cache",), id="no-cache")]
)
def test_max_cost_without_a_price_is_refused_before_anything_runs(
    run_cli, judge_server, warm, cached
):
    if warm:
        assert score(run_cli, judge_server, "first").exit_code == 0
    asked = len(judge_server.requests)

    run = score(run_cli, judge_server, "capped", "--max-cost", "1", *cached)

    assert run.exit_code == 2, run.stderr
    assert run.stderr.splitlines() == [
        NO_PRICE,
        "hint: give one with --price IN,OUT (USD per million tokens)",
    ]
    assert not Path("capped").exists()
    assert len(judge_server.requests) == asked


def test_max_cost_with_a_price_runs_from_a_warm_cache(run_cli, judge_server):
    assert score(run_cli, judge_server, "first").exit_code == 0
    run = score(run_cli, judge_server, "capped", "--max-cost", "1", "--price", "1,2")
    assert run.exit_code == 0, run.stderr
    assert len(judge_server.requests) == 3  # the first run's: the second is all cached


def test_judge_resume_with_a_cap_checks_the_price_too(run_cli, judge_server):
    assert score(run_cli, judge_server, "run", "--limit", "1").exit_code == 0
    resumed = run_cli(None, "resume", "run", "--max-cost", "1")
    assert resumed.exit_code == 2
    assert NO_PRICE in resumed.stderr


# Issue 29 (review 2026-11-27, finding 22): the hint after a --max-tokens failure was
# `judge resume RUN --retry-failed`, which could not change --max-tokens: it failed again.
def test_a_run_cut_off_at_max_tokens_continues_with_the_hint_it_printed(run_cli, judge_server):
    failed = score(run_cli, judge_server, "run", "--max-tokens", "8", "--max-retries", "0")
    assert failed.exit_code == 3, failed.stderr
    hint = failed.stderr.splitlines()[-1]
    assert hint == (
        "hint: replies were cut off at --max-tokens 8; continue with: "
        "judge resume run --retry-failed --max-tokens 1024"
    )
    command = hint.split("continue with: judge ", 1)[1].split()
    asked = len(judge_server.requests)

    resumed = run_cli(None, *command)

    assert resumed.exit_code == 0, resumed.stderr
    again = judge_server.requests[asked:]
    assert len(again) == 3
    assert {request.body["max_tokens"] for request in again} == {1024}
    rows = [json.loads(x) for x in Path("run/results.jsonl").read_text().splitlines()]
    assert sorted((r["id"], r["status"]) for r in rows) == [("a", "ok"), ("b", "ok"), ("c", "ok")]


def test_resume_keeps_the_recorded_settings_it_is_not_given(run_cli, judge_server):
    # --max-failures 100%: every case is judged (and fails) in each session, none stops early.
    args = ("--max-tokens", "8", "--max-retries", "0", "--max-failures", "100%")
    assert score(run_cli, judge_server, "run", *args).exit_code == 0
    asked = len(judge_server.requests)
    # Without --max-tokens the run's own 8 is kept, and the cases fail as before.
    again = run_cli(None, "resume", "run", "--retry-failed", "--max-retries", "1")
    assert again.exit_code == 0, again.stderr
    retried = judge_server.requests[asked:]
    assert {request.body["max_tokens"] for request in retried} == {8}
    assert len(retried) == 6  # 3 cases, each asked twice (--max-retries 1)
