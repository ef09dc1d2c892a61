"""Never lose a verdict, never pay twice: the reply cache, --resume, the budget cap, the
failure policy and secrets, through the real CLI and LiteLLM against the simulator."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.integration.conftest import DATA, REPO

EXAMPLE = REPO / "datasets" / "example.jsonl"
GOOD = '{"reasoning": "fine", "score": 3, "feedback": "none"}'


def score(run_cli, server, *extra, out="run", dataset=EXAMPLE):
    return run_cli(
        server,
        "score",
        str(dataset),
        "--rubric",
        "helpfulness",
        "--out",
        out,
        "--json",
        "--quiet",
        *extra,
    )


def ids_in(run_dir: str) -> list[str]:
    return [json.loads(x)["id"] for x in Path(run_dir, "results.jsonl").read_text().splitlines()]


def test_a_rerun_is_served_from_the_cache_without_a_call(run_cli, judge_server):
    first = score(run_cli, judge_server, out="a")
    assert first.exit_code == 0
    assert len(judge_server.requests) == 24
    again = score(run_cli, judge_server, out="b")
    assert again.exit_code == 0, again.stderr
    assert len(judge_server.requests) == 24  # nothing new was sent
    assert again.summary["usage"]["cached"] == 24
    assert again.summary["usage"]["calls"] == 0
    assert again.summary["mean"] == first.summary["mean"]
    line = json.loads(Path("b/results.jsonl").read_text().splitlines()[0])
    assert line["judgements"][0]["cached"] is True


def test_no_cache_sends_every_call(run_cli, judge_server):
    score(run_cli, judge_server, "--limit", "3", out="a")
    score(run_cli, judge_server, "--limit", "3", "--no-cache", out="b")
    assert len(judge_server.requests) == 6


def test_only_valid_replies_are_cached(run_cli, judge_server):
    judge_server.enqueue("not a verdict")
    judge_server.enqueue(GOOD)
    score(run_cli, judge_server, "--limit", "1", out="a")
    assert len(judge_server.requests) == 2
    again = score(run_cli, judge_server, "--limit", "1", out="b")
    assert len(judge_server.requests) == 2
    assert again.summary["mean"] == 3.0


def test_the_cache_key_covers_the_endpoint_and_the_prompt(run_cli, judge_server):
    score(run_cli, judge_server, "--limit", "2", out="a")
    score(run_cli, judge_server, "--limit", "2", "--temperature", "0.5", out="b")
    score(run_cli, judge_server, "--limit", "2", "--no-json-schema", out="c")
    assert len(judge_server.requests) == 6


def test_the_budget_stops_the_run_and_resume_with_a_higher_cap_finishes(run_cli, judge_server):
    capped = score(
        run_cli,
        judge_server,
        "--price",
        "1,2",
        "--max-cost",
        "0.004",
        "--concurrency",
        "1",
        out="run",
    )
    assert capped.exit_code == 3
    assert "of --max-cost $0.004: the next call could cost up to" in capped.stderr
    assert "judge resume run" in capped.stderr
    done = ids_in("run")
    assert 0 < len(done) < 24
    assert not Path("run/summary.json").exists()
    resumed = run_cli(None, "resume", "run", "--max-cost", "1")
    assert resumed.exit_code == 0, resumed.stderr
    ids = ids_in("run")
    assert sorted(ids) == sorted(set(ids))
    assert len(ids) == 24
    assert json.loads(Path("run/summary.json").read_text())["n_cases"] == 24
    # Every case was asked exactly once across the two sessions.
    assert len(judge_server.requests) == 24


def test_an_unknown_price_with_a_budget_is_an_input_error(run_cli, judge_server):
    run = score(run_cli, judge_server, "--max-cost", "1")
    assert run.exit_code == 2
    assert "--max-cost needs a price" in run.stderr
    assert not Path("run").exists()


def test_resume_repairs_a_torn_last_line_and_judges_the_rest(run_cli, judge_server):
    score(run_cli, judge_server, "--limit", "5", out="run")
    lines = Path("run/results.jsonl").read_text().splitlines()
    Path("run/results.jsonl").write_text("\n".join(lines[:3]) + "\n" + lines[3][:40])
    calls = len(judge_server.requests)
    resumed = score(run_cli, judge_server, "--limit", "5", "--resume", "run", out="run")
    assert resumed.exit_code == 0, resumed.stderr
    assert sorted(ids_in("run")) == sorted(json.loads(x)["id"] for x in lines)
    assert resumed.summary["n_cases"] == 5
    # The two lost cases were answered from the cache: nothing was paid twice.
    assert len(judge_server.requests) == calls


def test_retry_failed_judges_failed_cases_again(run_cli, judge_server):
    judge_server.enqueue("I would say it is fine, maybe a 3.")  # no JSON: the case fails
    lenient = ("--max-failures", "1", "--max-retries", "0")
    first = score(run_cli, judge_server, "--limit", "3", "--concurrency", "1", *lenient, out="run")
    assert first.summary["n_failed"] == 1
    kept = score(run_cli, judge_server, "--limit", "3", "--resume", "run", *lenient, out="run")
    assert kept.summary["n_failed"] == 1  # resume alone keeps the failure
    retried = score(
        run_cli,
        judge_server,
        "--limit",
        "3",
        "--resume",
        "run",
        "--retry-failed",
        *lenient,
        out="run",
    )
    assert retried.exit_code == 0, retried.stderr
    assert (retried.summary["n_cases"], retried.summary["n_failed"]) == (3, 0)
    assert len(ids_in("run")) == 3


def test_resume_refuses_another_rubric(run_cli, judge_server, write):
    score(run_cli, judge_server, "--limit", "2", out="run")
    other = (REPO / "rubrics" / "helpfulness.yaml").read_text().replace("version: 1", "version: 2")
    write("other.yaml", other)
    run = run_cli(judge_server, "score", str(EXAMPLE), "--rubric", "other.yaml", "--resume", "run")
    assert run.exit_code == 2
    assert "was made with rubric" in run.stderr


def test_resume_refuses_data_changed_since_the_run_started(run_cli, judge_server, write):
    # Issue 35: run.json records the data's sha256; a resume on other bytes would mix two
    # versions of the cases in one run.
    data = write("cases.jsonl", EXAMPLE.read_text())
    first = score(run_cli, judge_server, "--limit", "2", out="run", dataset=data)
    assert first.exit_code == 0, first.stderr
    data.write_text(EXAMPLE.read_text().replace("the", "a", 1))
    judge_server.reset()
    run = score(run_cli, judge_server, "--resume", "run", dataset=data)
    assert run.exit_code == 2, run.stderr
    assert "changed since run started" in run.stderr
    assert judge_server.requests == []
    data.write_text(EXAMPLE.read_text())  # the same bytes again: the resume goes on
    assert score(run_cli, judge_server, "--resume", "run", dataset=data).exit_code == 0


PROSE = "The answer seems helpful overall; I would give it a three."


def score_with_failures(run_cli, server, failures: int, *extra: str):
    """A run of the 24 cases, one call at a time and none retried, whose first `failures`
    replies are prose (so that many cases fail)."""
    for _ in range(failures):
        server.enqueue(PROSE)
    return score(run_cli, server, "--concurrency", "1", "--max-retries", "0", *extra, out="run")


def test_a_run_losing_more_than_5_percent_of_its_cases_is_incomplete_not_a_verdict(
    run_cli, judge_server
):
    # Issue 13: "0 of N cases graded" exited 0. By default a run may lose 5% of its cases
    # (1 of the 24 here); the second failure stops it, and it is summarised as incomplete.
    run = score_with_failures(run_cli, judge_server, 2)
    assert run.exit_code == 3, run.stderr
    summary = json.loads(Path("run/summary.json").read_text())
    assert summary["n_failed"] == 2
    assert summary["incomplete"].startswith("the judge could not grade 2 of")
    assert "stopped early" in summary["incomplete"]
    assert "gate" not in summary
    assert len(ids_in("run")) < 24  # stopped once the limit could no longer be kept
    assert "INCOMPLETE" in Path("run/report.md").read_text()


def test_max_failures_raises_the_share_a_run_may_lose(run_cli, judge_server):
    run = score_with_failures(run_cli, judge_server, 2, "--max-failures", "10%")
    assert run.exit_code == 0, run.stderr
    assert (run.summary["n_cases"], run.summary["n_failed"]) == (24, 2)
    assert "incomplete" not in run.summary


def test_max_failures_as_a_count(run_cli, judge_server):
    run = score_with_failures(run_cli, judge_server, 3, "--max-failures", "2")
    assert run.exit_code == 3
    assert json.loads(Path("run/summary.json").read_text())["n_failed"] == 3


def test_an_api_key_never_reaches_a_file(run_cli, judge_server, monkeypatch):
    key = "sk-test-dummy-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    judge_server.fail_next(
        401, body=json.dumps({"error": {"message": f"Incorrect API key {key}", "type": "auth"}})
    )
    run = score(run_cli, judge_server, "--limit", "3", out="run")
    assert run.exit_code == 3  # a 401 on the first call: the judge cannot be used
    assert judge_server.requests[0].headers["authorization"].endswith(key)  # it was sent...
    leaked = [p for p in Path().rglob("*") if p.is_file() and key.encode() in p.read_bytes()]
    assert leaked == []  # ...but is in no run file and not in the cache
    assert key not in run.stderr
    assert key not in run.stdout
    assert "Incorrect API key ***" in run.stderr


def test_cache_stats_and_clear(run_cli, judge_server):
    score(run_cli, judge_server, "--limit", "3", out="run")
    stats = run_cli(None, "cache", "stats")
    assert stats.exit_code == 0
    assert "3 replies" in stats.stdout
    assert Path(os.environ["JUDGE_CACHE_DIR"]).exists()
    cleared = run_cli(None, "cache", "clear")
    assert "removed 3 cached replies" in cleared.stdout
    score(run_cli, judge_server, "--limit", "3", out="again")
    assert len(judge_server.requests) == 6


def test_judge_resume_needs_a_run_directory(run_cli):
    run = run_cli(None, "resume", str(DATA))
    assert run.exit_code == 2
    assert "not a judge run" in run.stderr
