"""A fault storm: 2,000 cases against a simulator that answers 20% of requests with 429
(Retry-After), 5% with 500, drops 3% of connections, truncates 5% of bodies and malforms 5%
of verdicts, through the real CLI and LiteLLM with default retry settings.

What must hold (the issue's words): every fault kind is retried, every case ends with a
verdict or a recorded failure, no case is scored from a faulted reply, no id is lost or
duplicated, the failure rate after retries is what the retry policy implies, and the
server's log shows no call repeated after it succeeded.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from judgecli.settings.config import DEFAULT_MAX_RETRIES
from judgecli.simulator.server import Fault, RecordedRequest, SimulatorConfig, SimulatorServer
from judgecli.simulator.verdicts import MALFORMED_CONTENT, verdict_content
from tests.integration.conftest import case_id_in, write_numbered_cases

N_CASES = 2000
STORM = SimulatorConfig(
    seed=7,
    rate_limit_rate=0.20,
    # Small, so 400-odd pauses of the whole model gate keep the test fast; the client still
    # has to honour it (the rate-limit tests check the full value is waited for).
    rate_limit_retry_after_s=0.02,
    error_rate=0.05,
    drop_rate=0.03,
    truncate_rate=0.05,
    malformed_rate=0.05,
)
TRANSPORT_FAULTS = {Fault.RATE_LIMIT, Fault.ERROR, Fault.DROP, Fault.TRUNCATE}
CASE_ID = re.compile(r"storm-\d{4}")
TOPICS = ("photosynthesis", "gravity", "volcanoes", "tides", "vaccines", "magnets", "rainbows")
# The chance that a run this far out in the failure tail happens by luck, per the binomial.
TAIL = 1e-3


def failure_probability(config: SimulatorConfig, max_retries: int) -> float:
    """The share of cases the retry policy leaves failed, if each request draws its fault
    independently at the configured rates (the simulator hashes the body and its attempt
    number, so it does, and a repair turn is a new body with fresh draws).

    Two nested loops of ``max_retries + 1`` tries each:
    * `LiteLLMClient.complete` retries transport faults (429, 500, drop, truncated body) with
      the same request; it gives up when all its attempts draw one: g = t^(r+1), t = 0.33.
    * `grading.ask_judge` re-asks after an invalid verdict with a repair turn. Each ask
      returns a reply with 1 - g; given a reply (a draw outside the transport slices) it is
      malformed with m / (1 - t). So an ask ends in a malformed reply with b = (1-g)·m/(1-t)
      and in a valid verdict with v = (1-g)·(1 - m/(1-t)).
    A case succeeds when some ask k < r+1 is valid after k malformed ones:
    P(ok) = v · Σ_{k=0..r} b^k. With r = 4: g = 0.39%, b = 7.4%, P(failed) ≈ 0.42%
    (almost all of it transport exhaustion, g / (1 - b); five malformed replies in a row
    is b^5 ≈ 2e-6).
    """
    rates = config.fault_rates
    transport = sum(rates[fault] for fault in TRANSPORT_FAULTS)
    malformed_given_reply = rates[Fault.MALFORMED] / (1 - transport)
    tries = max_retries + 1
    gave_up = transport**tries
    bad = (1 - gave_up) * malformed_given_reply
    valid = (1 - gave_up) * (1 - malformed_given_reply)
    return 1 - valid * sum(bad**k for k in range(tries))


def binomial_upper_bound(n: int, p: float, tail: float) -> int:
    """The smallest k with P(X > k) < tail for X ~ Binomial(n, p)."""
    below = 0.0
    for k in range(n + 1):
        below += math.comb(n, k) * p**k * (1 - p) ** (n - k)
        if 1 - below < tail:
            return k
    return n


def storm_case(i: int) -> dict[str, str]:
    case_id, topic = f"storm-{i:04d}", TOPICS[i % len(TOPICS)]
    return {
        "id": case_id,
        "input": f"Question {case_id}: how do {topic} work?",
        "output": f"{topic.capitalize()} work through several processes. " * (1 + i % 4),
    }


def by_case(requests: list[RecordedRequest]) -> dict[str, list[RecordedRequest]]:
    """The server's requests grouped by the case they judge, in arrival order. A case's
    requests are sequential (one judge, one prompt), so arrival order is causal order."""
    groups: dict[str, list[RecordedRequest]] = defaultdict(list)
    for request in requests:
        groups[case_id_in(request, CASE_ID)].append(request)
    return groups


def is_success(request: RecordedRequest) -> bool:
    return request.status == 200 and request.fault is None


def is_repair_of(request: RecordedRequest, previous: RecordedRequest) -> bool:
    before, after = previous.body["messages"], request.body["messages"]
    return (
        after[: len(before)] == before
        and len(after) == len(before) + 2
        and after[len(before)] == {"role": "assistant", "content": MALFORMED_CONTENT}
    )


def body_key(body: dict[str, Any]) -> str:
    return json.dumps(body, sort_keys=True)


def test_a_fault_storm_ends_every_case_with_a_verdict_or_a_recorded_failure(run_cli, tmp_path):
    ids = write_numbered_cases(tmp_path / "cases.jsonl", N_CASES, storm_case)
    started = time.monotonic()
    with SimulatorServer(STORM) as server:
        run = run_cli(
            server,
            "score",
            str(tmp_path / "cases.jsonl"),
            "--rubric",
            "helpfulness",
            "--out",
            "run",
            "--concurrency",
            "32",
            "--json",
            "--quiet",
        )
        requests = server.requests
    elapsed = time.monotonic() - started
    print(f"storm: {len(requests)} requests in {elapsed:.1f} s")

    assert run.exit_code == 0, run.stderr
    results = [json.loads(line) for line in Path("run/results.jsonl").read_text().splitlines()]
    by_id = {r["id"]: r for r in results}

    # No id lost or duplicated.
    assert len(results) == N_CASES
    assert sorted(by_id) == ids
    assert run.summary["n_cases"] == N_CASES
    groups = by_case(requests)
    assert sorted(groups) == ids

    # Every fault kind occurred at the server, at about its rate.
    faults = [r.fault for r in requests]
    counts = {fault: faults.count(fault) for fault in Fault}
    print("faults:", {str(f): n for f, n in counts.items()}, "clean:", faults.count(None))
    for fault, rate in STORM.fault_rates.items():
        sd = math.sqrt(len(requests) * rate * (1 - rate))
        assert abs(counts[fault] - len(requests) * rate) <= 4 * sd, fault

    failed = []
    retried: defaultdict[Fault, int] = defaultdict(int)
    for case_id, group in groups.items():
        result = by_id[case_id]
        (judgement,) = result["judgements"]
        # Every call the server saw is counted once in the case's attempts.
        assert judgement["attempts"] == len(group), case_id

        # Every fault was retried: a transport fault with the same request, a malformed
        # verdict with a repair turn. Only the last request of a case may go unanswered.
        for request, following in zip(group, group[1:], strict=False):
            assert request.fault is not None, f"{case_id}: asked again after a clean reply"
            if request.fault in TRANSPORT_FAULTS:
                assert following.body == request.body, case_id
            else:
                assert is_repair_of(following, request), case_id
            if request.fault is Fault.RATE_LIMIT:
                # Retry-After honoured (the 429 is sent on arrival, without latency).
                assert following.time - request.time >= STORM.rate_limit_retry_after_s, case_id
            retried[request.fault] += 1

        last = group[-1]
        if result["status"] == "failed":
            failed.append(case_id)
            assert last.fault is not None, case_id
            assert result["error"], case_id
            assert judgement["error"], case_id
            assert "score" not in result, case_id
            assert "passed" not in result, case_id
            if last.fault in TRANSPORT_FAULTS:
                tries = DEFAULT_MAX_RETRIES + 1
                assert f"gave up after {tries} attempts" in judgement["error"], case_id
            else:
                assert judgement["raw"] == MALFORMED_CONTENT, case_id
            continue

        # An ok case was scored from the clean reply that ended its requests, never from a
        # faulted one: the raw text is exactly what the simulator sent for that request.
        assert result["status"] == "ok", case_id
        assert is_success(last), case_id
        assert judgement["raw"] == verdict_content(last.body, seed=STORM.seed), case_id
        assert result["score"] == json.loads(judgement["raw"])["score"], case_id
        assert 1 <= result["score"] <= 4, case_id

    print("retried:", {str(f): n for f, n in retried.items()}, "failed:", len(failed))
    assert set(retried) == set(Fault)

    # No call repeated after it succeeded: a body answered cleanly is never sent again
    # (a successful reply ends its case, and the reply cache would answer a repeat).
    answered: set[str] = set()
    for request in requests:
        key = body_key(request.body)
        assert key not in answered, "a request was sent again after a clean reply"
        if is_success(request):
            answered.add(key)

    # The failure rate is what the retry policy implies (0.42%), not a magic number.
    p_failed = failure_probability(STORM, DEFAULT_MAX_RETRIES)
    assert p_failed < 0.005
    bound = binomial_upper_bound(N_CASES, p_failed, TAIL)
    assert len(failed) <= bound, f"{len(failed)} failed; the policy implies {p_failed:.2%}"
    assert len(failed) / N_CASES < 0.01
    assert run.summary["n_failed"] == len(failed)
    # The summary counts every call the server saw, and every one after a case's first.
    assert run.summary["usage"]["calls"] == len(requests)
    assert run.summary["usage"]["retries"] == len(requests) - N_CASES
