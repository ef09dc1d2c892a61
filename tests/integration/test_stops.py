"""Stopping cleanly (issue 13 §2): SIGTERM — what CI cancellation, `timeout` and `docker
stop` send — behaves like Ctrl-C, and --max-cost at normal concurrency judges up to the cap
instead of stopping before the first case."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.conftest import score_args, write_numbered_cases

JUDGE = Path(sys.executable).parent / "judge"
WAIT_S = 120.0


def case(i: int) -> dict[str, str]:
    return {
        "id": f"t-{i:03d}",
        "input": f"Question {i}: why is the sky blue?",
        "output": "Rayleigh scattering. " * (1 + i % 4),
    }


def result_lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.endswith("}")]


def test_sigterm_stops_cleanly_with_exit_3_and_resume_finishes(run_cli, tmp_path):
    write_numbered_cases(tmp_path / "cases.jsonl", 60, case)
    with SimulatorServer(SimulatorConfig(seed=3, latency_ms=150)) as server:
        env = os.environ | {"OPENAI_API_KEY": "sk-test-dummy"}
        process = subprocess.Popen(
            [str(JUDGE), *score_args(server, "cases.jsonl", "run", "--concurrency", "4")],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        results = tmp_path / "run" / "results.jsonl"
        deadline = time.monotonic() + WAIT_S
        while len(result_lines(results)) < 3 and process.poll() is None:
            assert time.monotonic() < deadline, "no case finished in time"
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=WAIT_S)
        text = stderr.decode()
        assert process.returncode == 3, text  # not 143: the stop is handled
        assert "stopped by SIGTERM" in text
        assert "judge resume run" in text
        done = result_lines(results)
        assert 3 <= len(done) < 60
        assert results.read_text().endswith("\n")  # whole lines only
        resumed = run_cli(None, "resume", "run")
        assert resumed.exit_code == 0, resumed.stderr
        ids = [r["id"] for r in result_lines(results)]
        assert sorted(ids) == [f"t-{i:03d}" for i in range(60)]


def test_max_cost_at_concurrency_8_judges_up_to_the_cap_and_never_past_it(
    run_cli, judge_server, tmp_path
):
    # Issue 13: `--max-cost 0.05 --concurrency 8` stopped before judging anything ("$0.0000
    # spent, the next call could cost up to $0.0069"). Each call here reserves its worst
    # case (prompt + 256 reply tokens at $20/$80 per 1M tokens, ~$0.03) and costs far less.
    write_numbered_cases(tmp_path / "cases.jsonl", 40, case)
    cap = 0.15
    args = (
        "score",
        "cases.jsonl",
        "--rubric",
        "helpfulness",
        "--price",
        "20,80",
        "--max-tokens",
        "256",
        "--concurrency",
        "8",
        "--out",
        "run",
    )
    capped = run_cli(judge_server, *args, "--max-cost", str(cap))
    assert capped.exit_code == 3, capped.stderr
    assert "of --max-cost $0.15: the next call could cost up to" in capped.stderr
    done = result_lines(tmp_path / "run" / "results.jsonl")
    spent = sum(j["cost_usd"] for r in done for j in r["judgements"])
    assert spent <= cap
    assert len(done) > 8  # far more than the calls whose worst cases fit at once
    assert all(r["status"] == "ok" for r in done)
    # Every call paid for was kept: the resume asks only the cases not yet judged.
    asked = len(judge_server.requests)
    resumed = run_cli(None, "resume", "run", "--max-cost", "10")
    assert resumed.exit_code == 0, resumed.stderr
    assert len(result_lines(tmp_path / "run" / "results.jsonl")) == 40
    assert len(judge_server.requests) - asked == 40 - len(done)
