"""Issue 36: without --workers, a run with enough calls the reply cache cannot answer is judged
by one process per core, with the verdicts and numbers one process gives; a cached re-run
and a small run keep one process. The real CLI and LiteLLM against the simulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgecli.running.auto_workers import AUTO_MIN_CALLS
from judgecli.settings.scale_flags import usable_cores
from tests.integration.test_workers import (
    asked,
    ids_once,
    score,
    summary_numbers,
    verdicts,
    write_cases,
)

FORKED = "judging in "
N = AUTO_MIN_CALLS  # one call a case: just enough uncached calls to fork

pytestmark = pytest.mark.skipif(
    usable_cores() < 2, reason="one core: a run without --workers never forks"
)


def loud(run_cli, server, data: Path, out: str, *extra: str):
    """`score` with its notes on stderr (no --quiet): the fork is said there."""
    args = ("score", str(data), "--rubric", "helpfulness", "--out", out, "--json")
    return run_cli(server, *args, "--concurrency", "64", *extra)


def test_a_big_uncached_run_forks_by_default_and_equals_one_process(
    run_cli, judge_server, tmp_path
):
    data = write_cases(tmp_path, N)
    one = score(run_cli, judge_server, data, "one", "--no-cache", "--workers", "1")
    assert one.exit_code == 0, one.stderr
    judge_server.reset()

    auto = loud(run_cli, judge_server, data, "auto")
    assert auto.exit_code == 0, auto.stderr
    assert f"{FORKED}{usable_cores()} processes" in auto.stderr
    assert "--workers 1 keeps one" in auto.stderr
    # Each case was sent once, by one of the processes.
    assert set(asked(judge_server.requests).values()) == {1}
    assert len(judge_server.requests) == N
    assert ids_once(tmp_path / "auto") == ids_once(tmp_path / "one")
    assert verdicts(tmp_path / "auto") == verdicts(tmp_path / "one")
    assert summary_numbers(tmp_path / "auto") == summary_numbers(tmp_path / "one")

    # The same run again: every reply is cached, so one process replays them.
    judge_server.reset()
    again = loud(run_cli, judge_server, data, "again")
    assert again.exit_code == 0, again.stderr
    assert FORKED not in again.stderr
    assert judge_server.requests == []
    assert again.summary["usage"]["cached"] == N


def test_a_run_below_the_threshold_keeps_one_process(run_cli, judge_server, tmp_path):
    data = write_cases(tmp_path, 40)
    run = loud(run_cli, judge_server, data, "small", "--no-cache")
    assert run.exit_code == 0, run.stderr
    assert FORKED not in run.stderr
    assert len(judge_server.requests) == 40


def test_a_missing_key_is_exit_2_before_any_fork_is_announced(run_cli, tmp_path, monkeypatch):
    # A run that would fork checks what LiteLLM can check offline first: the user reads
    # the one error line, not a fork's announcement before it.
    data = write_cases(tmp_path, N)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = ("score", str(data), "--rubric", "helpfulness", "--out", "nokey")
    run = run_cli(None, *args, "--model", "openai/gpt-4o-mini")
    assert run.exit_code == 2, run.stderr
    assert FORKED not in run.stderr
    assert "needs OPENAI_API_KEY" in run.stderr
    assert not (tmp_path / "nokey").exists()
