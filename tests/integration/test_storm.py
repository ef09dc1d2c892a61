"""A storm of random 429s (issue 19, goal 6): 200 cases through the real CLI and LiteLLM
against a simulator that refuses 20% of requests at random with `Retry-After: 1`. Every
case ends judged, with the verdict a run without 429s gets (same simulator seed), every
refused call waits its own Retry-After, and the other calls go on meanwhile instead of
waiting it too. Nothing here bounds the wall time: the speed is measured by `make bench`
(tests/bench/bench_storm.py) and proven on a fake clock in tests/unit/judge/test_pacing.py."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

from judgecli.simulator.server import RecordedRequest, SimulatorConfig, SimulatorServer
from tests.integration.conftest import case_id_in, write_numbered_cases

CASES = 200
SEED = 19
RETRY_AFTER_S = 1.0
CASE_ID = re.compile(r"storm-\d{3}")


def storm_case(i: int) -> dict[str, str]:
    return {
        "id": f"storm-{i:03d}",
        "input": f"Question storm-{i:03d}: why is the sky blue?",
        "output": "Light scatters off the air, blue the most. " * (1 + i % 4),
    }


def judge(run_cli, cases: Path, out: Path, share: float):
    config = SimulatorConfig(
        seed=SEED,
        latency_ms=20,
        rate_limit_rate=share,
        rate_limit_retry_after_s=RETRY_AFTER_S,
    )
    with SimulatorServer(config) as server:
        run = run_cli(
            server,
            "score",
            str(cases),
            "--rubric",
            "helpfulness",
            "--out",
            str(out),
            "--concurrency",
            "32",
            "--no-cache",
            "--json",
            "--quiet",
        )
        requests = server.requests
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return run, {r["id"]: r for r in results}, requests


def by_case(requests: list[RecordedRequest]) -> dict[str, list[RecordedRequest]]:
    groups: dict[str, list[RecordedRequest]] = defaultdict(list)
    for request in requests:
        groups[case_id_in(request, CASE_ID)].append(request)
    return groups


def test_random_429s_leave_every_verdict_as_without_them_and_stall_no_other_call(run_cli, tmp_path):
    ids = write_numbered_cases(tmp_path / "cases.jsonl", CASES, storm_case)
    calm_run, calm, _ = judge(run_cli, tmp_path / "cases.jsonl", tmp_path / "calm", 0.0)
    run, stormy, requests = judge(run_cli, tmp_path / "cases.jsonl", tmp_path / "storm", 0.2)

    assert calm_run.exit_code == 0, calm_run.stderr
    assert run.exit_code == 0, run.stderr
    assert (run.summary["n_ok"], run.summary["n_failed"]) == (CASES, 0)
    assert sorted(stormy) == ids

    # None scored wrong: each verdict is the one the calm run got.
    for case_id in ids:
        (judgement,) = stormy[case_id]["judgements"]
        (calm_judgement,) = calm[case_id]["judgements"]
        assert stormy[case_id]["status"] == "ok", case_id
        assert stormy[case_id]["score"] == calm[case_id]["score"], case_id
        assert judgement["raw"] == calm_judgement["raw"], case_id

    # About 1.25 requests a case (each draws a 429 with p = 0.2): 250 ± 8; never a storm.
    limited = [r for r in requests if r.status == 429]
    assert len(requests) == CASES + len(limited)
    assert len(requests) <= 300, len(requests)

    # Each refused call waited its Retry-After before asking again (429s are sent on
    # arrival, without latency)...
    for case_id, group in by_case(requests).items():
        for request, following in zip(group, group[1:], strict=False):
            assert request.status == 429, case_id
            assert following.time - request.time >= RETRY_AFTER_S, case_id
    # ...and other calls were sent meanwhile, in the second half of the wait too: an
    # isolated 429 does not hold the model (the old gate held every call for each 429's
    # Retry-After, and this run took minutes). Most, not all: a loaded machine may pause.
    arrivals = sorted(r.time for r in requests)
    waits = [r.time for r in limited if r.time + RETRY_AFTER_S < arrivals[-1]]
    went_on = [
        t for t in waits if any(t + RETRY_AFTER_S / 2 < a < t + RETRY_AFTER_S for a in arrivals)
    ]
    assert len(went_on) >= 0.8 * len(waits), (len(went_on), len(waits))
