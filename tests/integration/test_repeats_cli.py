"""`--repeats K` through the real CLI and LiteLLM against the simulator, whose per-call
jitter is a judge with known noise: with probability j a call is a uniform guess, else the
judge's fixed verdict. For a binary rubric two asks then agree with probability
(1 - j/2)^2 + (j/2)^2, all K with (1 - j/2)^K + (j/2)^K, and Fleiss' κ follows from the
share of YES among the fixed verdicts: the run's numbers must find these within their
intervals. A re-run pays for nothing and gives the same numbers; the stability gate exits
1 on judged evidence, 2 when it cannot be asked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from judgecli.store import RESULTS, SUMMARY
from tests.integration.conftest import write_jsonl, write_numbered_cases

JITTER = 0.4
K = 3
N = 300
WORDS = ("tides", "rainbows", "volcanoes", "magnets", "glaciers", "eclipses")


def case(i: int) -> dict[str, str]:
    topic = WORDS[i % len(WORDS)]
    fact = f"{topic.capitalize()} follow from physics case {i}, measured and explained."
    # Half the answers restate the reference, half do not: both verdicts are common.
    output = fact if i % 2 else f"I am not sure about {topic}."
    return {
        "id": f"r-{i:03d}",
        "input": f"What drives {topic} in case {i}?",
        "output": output,
        "reference": fact,
        "category": topic,
    }


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    write_numbered_cases(path, N, case)
    return path


def binary_score(run_cli, server, data: Path, out: str, *extra: str):
    return run_cli(
        server,
        "score",
        str(data),
        "--rubric",
        "answer-correctness",
        "--out",
        out,
        "--json",
        "--quiet",
        *extra,
    )


def expected_kappa(yes_share: float, jitter: float) -> float:
    """Fleiss' κ of K asks of a judge with per-call jitter, on cases a share of whose fixed
    verdicts is YES: observed agreement of two asks against chance at the asks' marginal.
    """
    agree = (1 - jitter / 2) ** 2 + (jitter / 2) ** 2
    p = yes_share * (1 - jitter / 2) + (1 - yes_share) * jitter / 2
    chance = p * p + (1 - p) * (1 - p)
    return (agree - chance) / (1 - chance)


def test_known_jitter_gives_the_expected_stability_and_kappa(run_cli, tmp_path, cases):
    with SimulatorServer(SimulatorConfig(seed=5)) as sharp:
        fixed = binary_score(run_cli, sharp, cases, str(tmp_path / "fixed"))
    assert fixed.exit_code == 0, fixed.stderr
    yes_share = fixed.summary["choices"]["YES"] / N
    assert 0.2 < yes_share < 0.8

    with SimulatorServer(SimulatorConfig(seed=5, jitter=JITTER)) as noisy:
        run = binary_score(
            run_cli,
            noisy,
            cases,
            str(tmp_path / "run"),
            "--repeats",
            str(K),
            "--temperature",
            "0.7",
        )
        assert run.exit_code == 0, run.stderr
        assert len(noisy.requests) == N * K
    summary = run.summary
    assert summary["repeats"] == K
    low, high = summary["stability_ci"]
    stable = (1 - JITTER / 2) ** K + (JITTER / 2) ** K  # 0.52
    assert low <= stable <= high, summary["stability"]
    details = summary["self_consistency"]
    k_low, k_high = details["fleiss_kappa_ci"]
    assert k_low <= expected_kappa(yes_share, JITTER) <= k_high, details["fleiss_kappa"]
    assert details["compared"] == "choice"
    assert details["stable"] == round(summary["stability"] * N)
    rows = [json.loads(line) for line in (tmp_path / "run" / RESULTS).read_text().splitlines()]
    assert all(len(r["repeats"]) == K for r in rows)
    assert sum(r["stable"] for r in rows) == details["stable"]
    assert all(sorted(j["repeat"] for j in r["judgements"]) == list(range(K)) for r in rows)


def test_a_re_run_replays_the_same_k_replies_and_pays_nothing(run_cli, tmp_path, cases):
    args = ("--repeats", str(K), "--temperature", "0.7")
    with SimulatorServer(SimulatorConfig(seed=5, jitter=JITTER)) as server:
        first = binary_score(run_cli, server, cases, str(tmp_path / "a"), *args)
        paid = len(server.requests)
        again = binary_score(run_cli, server, cases, str(tmp_path / "b"), *args)
        assert len(server.requests) == paid  # 0 calls the second time
    assert first.exit_code == again.exit_code == 0
    assert again.summary["usage"]["cached"] == N * K
    for key in ("stability", "stability_ci", "self_consistency", "pass_rate", "choices"):
        assert again.summary[key] == first.summary[key], key


def test_adding_repeats_to_a_judged_run_pays_only_for_the_new_asks(run_cli, tmp_path, cases):
    with SimulatorServer(SimulatorConfig(seed=5, jitter=JITTER)) as server:
        once = binary_score(run_cli, server, cases, str(tmp_path / "once"), "--temperature", "0.7")
        assert once.exit_code == 0, once.stderr
        repeated = binary_score(
            run_cli, server, cases, str(tmp_path / "k"), "--repeats", "2", "--temperature", "0.7"
        )
        assert repeated.exit_code == 0, repeated.stderr
        assert len(server.requests) == 2 * N  # N for the first run, N for repeat 1
    assert repeated.summary["usage"]["cached"] == N


def test_the_stability_gate_fails_on_judged_evidence_and_passes_below_it(run_cli, tmp_path, cases):
    args = ("--repeats", str(K), "--temperature", "0.7")
    with SimulatorServer(SimulatorConfig(seed=5, jitter=JITTER)) as server:
        strict = binary_score(
            run_cli, server, cases, str(tmp_path / "a"), *args, "--min-stability", "0.9"
        )
        lenient = binary_score(
            run_cli, server, cases, str(tmp_path / "b"), *args, "--min-stability", "0.3"
        )
        pass_k = binary_score(
            run_cli, server, cases, str(tmp_path / "c"), *args, "--min-pass-k", "0.99"
        )
    assert strict.exit_code == 1, strict.stderr
    [check] = strict.summary["gate"]["checks"]
    assert (check["metric"], check["passed"]) == ("stability", False)
    assert lenient.exit_code == 0, lenient.stderr
    assert pass_k.exit_code == 1
    assert pass_k.summary["gate"]["checks"][0]["metric"] == "pass_k"
    assert (
        pass_k.summary["gate"]["checks"][0]["value"] == pass_k.summary["self_consistency"]["pass_k"]
    )


def test_a_stability_gate_without_repeats_is_a_usage_error(run_cli, judge_server, tmp_path, cases):
    run = binary_score(
        run_cli, judge_server, cases, str(tmp_path / "run"), "--min-stability", "0.8"
    )
    assert run.exit_code == 2
    assert "--min-stability need --repeats K (2 or more)" in run.stderr
    assert judge_server.requests == []
    assert not (tmp_path / "run").exists()


def test_judge_gate_asks_for_stability_of_a_run_without_repeats(run_cli, judge_server, tmp_path):
    data = write_jsonl(tmp_path / "c.jsonl", [case(i) for i in range(4)])
    run = binary_score(run_cli, judge_server, data, str(tmp_path / "run"))
    assert run.exit_code == 0, run.stderr
    gate = run_cli(None, "gate", str(tmp_path / "run" / SUMMARY), "--min-stability", "0.5")
    assert gate.exit_code == 2
    assert "need a run judged with --repeats K" in gate.stderr


def test_temperature_0_is_warned_of(run_cli, judge_server, tmp_path):
    data = write_jsonl(tmp_path / "c.jsonl", [case(i) for i in range(4)])
    run = run_cli(
        judge_server,
        "score",
        str(data),
        "--rubric",
        "answer-correctness",
        "--out",
        str(tmp_path / "run"),
        "--repeats",
        "2",
    )
    assert run.exit_code == 0, run.stderr
    assert "--repeats 2 at temperature 0" in " ".join(run.stderr.split())
    summary = json.loads((tmp_path / "run" / SUMMARY).read_text())
    assert any("--repeats 2 at temperature 0" in w for w in summary["warnings"])


def test_pairwise_repeats_reconcile_each_repeat_then_take_the_majority(run_cli, tmp_path):
    old = write_jsonl(tmp_path / "old.jsonl", [case(2 * i) for i in range(40)])
    new = write_jsonl(
        tmp_path / "new.jsonl",
        [case(2 * i) | {"output": case(2 * i + 1)["output"]} for i in range(40)],
    )
    with SimulatorServer(SimulatorConfig(seed=5, jitter=0.5)) as server:
        run = run_cli(
            server,
            "pairwise",
            str(old),
            str(new),
            "--out",
            str(tmp_path / "run"),
            "--json",
            "--quiet",
            "--repeats",
            "3",
            "--temperature",
            "0.7",
            "--min-stability",
            "0.01",
            # Issue 29: a judge guessing half its verdicts agrees with itself across the two
            # orders about half the time, right at the default consistency floor; this test
            # is about how repeats are reconciled, so the floor is off.
            "--min-consistency",
            "0",
        )
        assert len(server.requests) == 40 * 2 * 3, run.stderr
    assert run.exit_code == 0, run.stderr
    assert run.summary["repeats"] == 3
    assert run.summary["self_consistency"]["compared"] == "winner"
    rows = [json.loads(line) for line in (tmp_path / "run" / RESULTS).read_text().splitlines()]
    for row in rows:
        winners = [r.get("winner") for r in row["repeats"]]
        decided = [w for w in winners if w is not None]
        top = max(set(decided), key=decided.count) if decided else None
        if decided and decided.count(top) * 2 > len(decided):
            assert row["winner"] == top
        assert row["stable"] == (len(set(winners)) == 1)


def test_calibrate_measures_agreement_on_the_aggregate_and_reports_stability(run_cli, tmp_path):
    rows = [case(i) for i in range(30)]
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [r | {"label": "YES" if i % 2 else "NO"} for i, r in enumerate(rows)],
    )
    with SimulatorServer(SimulatorConfig(seed=5, jitter=0.3)) as server:
        run = run_cli(
            server,
            "calibrate",
            str(labels),
            "--rubric",
            "answer-correctness",
            "--out",
            str(tmp_path / "cal"),
            "--json",
            "--quiet",
            "--repeats",
            "3",
            "--temperature",
            "0.7",
        )
        assert len(server.requests) == 30 * 3
    assert run.exit_code == 0, run.stderr
    assert run.summary["repeats"] == 3
    assert run.summary["self_consistency"]["cases"] == 30
