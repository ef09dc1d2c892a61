"""--batch and judge collect, through the real CLI and real LiteLLM against the simulator's
Files and Batch APIs: the batch run ends where the online run ends, failed, expired and
malformed lines are asked again online, a killed collect resumes, nothing is paid twice."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.test_shards import pairwise_args, read_json, results_by_id, untimed

IN_OUT_PRICE = ("--price", "1,2")


@pytest.fixture
def start_server() -> Iterator[Callable[..., SimulatorServer]]:
    """start_server(**SimulatorConfig fields) → a simulator of the test's own."""
    with ExitStack() as stack:
        yield lambda **config: stack.enter_context(SimulatorServer(SimulatorConfig(**config)))


@pytest.fixture
def batch_server(start_server) -> SimulatorServer:
    return start_server()


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))


def online(server: SimulatorServer) -> list[Any]:
    return [r for r in server.requests if r.batch_id is None]


def batched(server: SimulatorServer) -> list[Any]:
    return [r for r in server.requests if r.batch_id is not None]


def submit_and_collect(run_cli, server: SimulatorServer, out: Path, *extra: str):
    submitted = run_cli(server, *pairwise_args(out, *extra), "--batch")
    assert submitted.exit_code == 0, submitted.stderr
    assert f"collect with: judge collect {out}" in submitted.stderr
    assert not online(server)  # nothing is asked online at submit
    return run_cli(None, "collect", str(out), "--wait", "--poll", "0", "--json")


def test_a_batch_run_ends_where_the_online_run_ends(
    batch_server: SimulatorServer, run_cli, tmp_path: Path
) -> None:
    gate = ("--min-win-rate", "0.6", *IN_OUT_PRICE)
    single = run_cli(batch_server, *pairwise_args(tmp_path / "online", *gate), "--no-cache")
    assert single.exit_code == 0
    batch_server.reset()

    submitted = run_cli(batch_server, *pairwise_args(tmp_path / "b", *gate), "--batch")
    assert submitted.exit_code == 0, submitted.stderr
    assert "submitted 60 requests in 1 batch(es)" in submitted.stderr
    # The batch is still running: collect says how far it is, and exits 3 (not finished).
    early = run_cli(None, "collect", str(tmp_path / "b"))
    assert early.exit_code == 3
    assert "in_progress, 30 of 60 done" in early.stderr
    assert "--wait" in early.stderr
    assert not (tmp_path / "b" / "summary.json").exists()

    done = run_cli(None, "collect", str(tmp_path / "b"), "--json")
    assert done.exit_code == 0, done.stderr
    assert len(batched(batch_server)) == 60
    assert not online(batch_server)
    expected = untimed(read_json(tmp_path / "online" / "summary.json"))
    got = untimed(done.summary)
    # Every verdict, number and gate is the online run's; only the price is the batch's.
    online_cost = expected["usage"].pop("cost_usd")
    assert got["usage"].pop("cost_usd") == pytest.approx(online_cost / 2)
    assert (got["usage"].pop("batched"), expected["usage"].pop("batched")) == (60, 0)
    assert got == expected
    report = (tmp_path / "b" / "report.md").read_text(encoding="utf-8")
    assert "60 (0 retries, 0 cached, 60 by batch)" in report
    winners = {k: v["winner"] for k, v in results_by_id(tmp_path / "b").items()}
    assert winners == {k: v["winner"] for k, v in results_by_id(tmp_path / "online").items()}

    # Collected again: nothing is fetched, judged or paid again.
    again = run_cli(None, "collect", str(tmp_path / "b"), "--json")
    assert again.exit_code == 0
    assert len(batch_server.requests) == 60
    assert again.summary["win_rate"] == done.summary["win_rate"]


def test_failed_lines_are_asked_again_online(start_server, run_cli, tmp_path: Path) -> None:
    batch_server = start_server(batch_fail_rate=0.2, batch_steps=0)
    done = submit_and_collect(run_cli, batch_server, tmp_path / "b")
    assert done.exit_code == 0, done.stderr
    failed = [r for r in batched(batch_server) if r.fault is not None]
    assert len(failed) == 12  # 20% of 60
    # Exactly the failed lines went online, each once.
    assert sorted(r.body["messages"][-1]["content"] for r in online(batch_server)) == sorted(
        r.body["messages"][-1]["content"] for r in failed
    )
    assert done.summary["n_ok"] == 30
    assert done.summary["usage"]["batched"] == 48
    assert done.summary["usage"]["calls"] == 60


def test_an_expired_batch_is_finished_online(start_server, run_cli, tmp_path: Path) -> None:
    batch_server = start_server(batch_expire=True, batch_steps=1)
    done = submit_and_collect(run_cli, batch_server, tmp_path / "b")
    assert done.exit_code == 0, done.stderr
    assert "expired, downloaded" in done.stderr
    answered = [r for r in batched(batch_server) if r.fault is None]
    assert len(answered) == 30
    assert len(online(batch_server)) == 30
    assert done.summary["n_ok"] == 30


def test_malformed_batch_replies_are_repaired_online(start_server, run_cli, tmp_path: Path) -> None:
    batch_server = start_server(malformed_rate=0.25, batch_steps=0)
    done = submit_and_collect(run_cli, batch_server, tmp_path / "b")
    assert done.exit_code == 0, done.stderr
    repairs = online(batch_server)
    assert repairs, "the simulator's malformed share should have needed repairs"
    # A repair is the original request plus the bad reply and the reason: never a re-ask
    # of the batch's request itself.
    assert all(r.body["messages"][-2]["role"] == "assistant" for r in repairs)
    assert done.summary["n_ok"] + done.summary["n_failed"] == 30


def test_a_killed_collect_resumes_without_paying_twice(
    start_server, run_cli, tmp_path: Path
) -> None:
    batch_server = start_server(batch_steps=0)
    out = tmp_path / "b"
    done = submit_and_collect(run_cli, batch_server, out)
    assert done.exit_code == 0
    # As if collect was killed while judging: half the results, no summary.
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (out / "results.jsonl").write_text("".join(lines[:13]), encoding="utf-8")
    (out / "summary.json").unlink()
    calls = len(batch_server.requests)
    resumed = run_cli(None, "collect", str(out), "--json")
    assert resumed.exit_code == 0, resumed.stderr
    assert len(batch_server.requests) == calls
    assert untimed(resumed.summary) == untimed(done.summary)


def test_a_cached_run_submits_nothing(start_server, run_cli, tmp_path: Path) -> None:
    batch_server = start_server(batch_steps=0)
    assert submit_and_collect(run_cli, batch_server, tmp_path / "first").exit_code == 0
    calls = len(batch_server.requests)
    again = run_cli(batch_server, *pairwise_args(tmp_path / "again"), "--batch")
    assert again.exit_code == 0
    assert "submitted 0 requests in 0 batch(es); 30 cases answered from the cache" in again.stderr
    done = run_cli(None, "collect", str(tmp_path / "again"), "--json")
    assert done.exit_code == 0
    assert done.summary["n_ok"] == 30
    assert len(batch_server.requests) == calls


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--max-cost", "0.0001", *IN_OUT_PRICE), "could cost up to"),
        (("--sequential", "--min-win-rate", "0.5"), "--sequential with --batch"),
        (("--screen", "openai/cheap"), "--batch cannot run a cascade"),
        (("--workers", "2"), "--batch with --workers"),
    ],
)
def test_batch_refusals_write_nothing(
    batch_server: SimulatorServer, run_cli, tmp_path: Path, extra: tuple[str, ...], message: str
) -> None:
    result = run_cli(batch_server, *pairwise_args(tmp_path / "b", *extra), "--batch")
    assert result.exit_code == 2
    assert message in result.stderr
    assert not (tmp_path / "b").exists()
    assert not batch_server.requests


def test_batch_refuses_providers_without_a_batch_api(run_cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy")
    result = run_cli(
        None, *pairwise_args(tmp_path / "b"), "--model", "anthropic/claude-sonnet-4-5", "--batch"
    )
    assert result.exit_code == 2
    assert "is a anthropic model; batch mode supports openai/ models" in result.stderr
    assert not (tmp_path / "b").exists()


def test_collect_refuses_a_run_that_is_no_batch_run(
    batch_server: SimulatorServer, run_cli, tmp_path: Path
) -> None:
    assert run_cli(batch_server, *pairwise_args(tmp_path / "plain"), "--quiet").exit_code == 0
    result = run_cli(None, "collect", str(tmp_path / "plain"))
    assert result.exit_code == 2
    assert "not a --batch run" in result.stderr
    result = run_cli(None, "collect", str(tmp_path / "nothing"))
    assert result.exit_code == 2
    assert "not a judge run" in result.stderr


def test_resume_of_a_batch_run_points_to_collect(
    batch_server: SimulatorServer, run_cli, tmp_path: Path
) -> None:
    assert run_cli(batch_server, *pairwise_args(tmp_path / "b"), "--batch").exit_code == 0
    result = run_cli(None, "resume", str(tmp_path / "b"))
    assert result.exit_code == 2
    assert "judge collect" in result.stderr
    assert json.loads((tmp_path / "b" / "batch.json").read_text())["requests"] == 60
