"""A key already at its limit, without --rpm (issue 13 §2), through real LiteLLM against the
simulator's rate window scaled ten times down (30 requests per 6 s: 300 rpm's 5/s): the
run ends with no failed case, and after the first seconds 429s are rare. Throughput
against the real 60 s window is measured by `make bench` (tests/bench/bench_endpoints.py); the
policy's throughput is proven on a fake clock in tests/unit/judge/test_pacing.py."""

from __future__ import annotations

import pytest

from judgecli.judge.provider import import_litellm, warm_up
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.conftest import write_numbered_cases

CASES = 60
LIMIT, WINDOW_S = 30, 6.0


def case(i: int) -> dict[str, str]:
    return {
        "id": f"r-{i:03d}",
        "input": f"Question {i}: what is rain?",
        "output": "Water falling from clouds. " * (1 + i % 3),
    }


def run_against_a_full_window(run_cli, tmp_path, *, headers: bool, extra=()):
    write_numbered_cases(tmp_path / "cases.jsonl", CASES, case)
    config = SimulatorConfig(
        rpm=LIMIT, rate_limit_window_s=WINDOW_S, rate_limit_prefill=True, rate_limit_headers=headers
    )
    # LiteLLM's first import takes seconds on a loaded machine, longer than the window:
    # import it first, so the run meets the window full.
    import_litellm()
    warm_up()
    with SimulatorServer(config) as server:
        server.reset()  # the window is full from now: another job just used the key
        run = run_cli(
            server,
            "score",
            "cases.jsonl",
            "--rubric",
            "helpfulness",
            "--out",
            "run",
            "--concurrency",
            "16",
            "--json",
            "--quiet",
            *extra,
        )
        bins = server.status_bins(bin_s=1.0)
    return run, bins


@pytest.mark.parametrize("headers", [True, False], ids=["x-ratelimit-headers", "retry-after-only"])
def test_a_key_at_its_limit_ends_with_no_failed_case_and_few_429s(run_cli, tmp_path, headers):
    # Issue 13: 300 cases at a key whose window was full: 920 of 1,081 calls were 429 and
    # 139 cases failed "gave up after 5 attempts", exit 0.
    run, bins = run_against_a_full_window(run_cli, tmp_path, headers=headers)
    assert run.exit_code == 0, run.stderr
    assert (run.summary["n_ok"], run.summary["n_failed"]) == (CASES, 0)
    ok = sum(b.ok for b in bins)
    limited = sum(b.limited for b in bins)
    late = sum(b.limited for b in bins if b.start >= 3.0)
    assert ok == CASES
    if headers:
        assert limited <= 2, bins  # the headers tell the pace from the first reply
    else:
        # A 429 now and then while probing for the limit (the model of this server in
        # tests/unit/judge/test_pacing.py sees 2 after the first seconds).
        assert late <= 8, bins


def test_with_rpm_at_the_limit_at_most_two_429s(run_cli, tmp_path):
    # Issue 13: with --rpm equal to the limit, 10-17 answers were 429 in the first 0.15 s
    # (8-9 requests left at once at the start). Now calls are spaced from the first.
    run, bins = run_against_a_full_window(
        run_cli, tmp_path, headers=False, extra=("--rpm", str(LIMIT * 60 / WINDOW_S))
    )
    assert run.exit_code == 0, run.stderr
    assert sum(b.limited for b in bins) <= 2, bins
