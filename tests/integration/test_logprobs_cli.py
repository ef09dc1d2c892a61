"""--score-mode logprob through the real CLI and LiteLLM against the simulator, whose
logprobs spread each verdict over its neighbours by a known rule
(judgecli.simulator.logprobs.value_distribution): the expected scores and probabilities in
results.jsonl must be the ones that rule gives; a server that gives no logprobs stops the
run at its first call (exit 2), never a silent fallback to the sampled score; the reply
cache serves logprob replies, and never to a sampled run or from one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judgecli.grading.debias import to_winner
from judgecli.result import Order
from judgecli.simulator.logprobs import OTHER_SHARE, value_distribution
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from judgecli.store import RESULTS
from judgecli.verdict import Position
from tests.integration.conftest import write_jsonl, write_numbered_cases

REPO = Path(__file__).resolve().parents[2]
HELPFULNESS_POINTS = [1, 2, 3, 4]
# LiteLLM strips the provider: `--model openai/sim` reaches the server as "sim".
SERVED_MODEL = "sim"


def case(i: int) -> dict[str, str]:
    words = " ".join(["useful", "detail"] * (i % 7))
    return {
        "id": f"lp-{i:02d}",
        "input": f"How do tides work, question {i}?",
        "output": f"Tides follow the moon's pull, case {i}. {words}".strip(),
        "category": "science" if i % 2 else "nature",
    }


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    write_numbered_cases(path, 12, case)
    return path


@pytest.fixture(scope="module")
def silent_server() -> Iterator[SimulatorServer]:
    """A server that ignores `logprobs: true`, as many do."""
    with SimulatorServer(SimulatorConfig(logprobs=False)) as server:
        yield server


def results(out: Path) -> list[dict[str, Any]]:
    lines = (out / RESULTS).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def judgements(out: Path) -> list[dict[str, Any]]:
    return [j for row in results(out) for j in row["judgements"]]


def known(key: str, written: str, values: list[Any], raw: str) -> dict[str, float]:
    """The simulator's spread for a reply, renormalised over the valid values."""
    shares = value_distribution(key, written, values, seed=0, model=SERVED_MODEL, content=raw)
    return {value: p / (1 - OTHER_SHARE) for value, p in shares.items()}


def score(run_cli, server, data: Path, out: Path, *extra: str):
    return run_cli(
        server,
        "score",
        str(data),
        "--rubric",
        "helpfulness",
        "--out",
        str(out),
        "--json",
        "--quiet",
        *extra,
    )


def test_a_logprob_run_reports_the_expected_score_of_every_judgement(
    run_cli, judge_server, cases, tmp_path
):
    out = tmp_path / "run"
    run = score(run_cli, judge_server, cases, out, "--score-mode", "logprob")
    assert run.exit_code == 0, run.stderr
    sent = judge_server.requests
    assert sent
    assert all((r.body["logprobs"], r.body["top_logprobs"]) == (True, 20) for r in sent)
    for judgement in judgements(out):
        written = judgement["verdict"]["score"]
        spread = known("score", str(int(written)), HELPFULNESS_POINTS, judgement["raw"])
        assert judgement["probabilities"] == pytest.approx(spread, abs=1e-6)
        expected = math.fsum(int(point) * p for point, p in spread.items())
        assert judgement["score_expected"] == pytest.approx(expected, abs=1e-6)
        # The sampled verdict is kept, and the expected score lies within a point of it.
        assert abs(judgement["score_expected"] - written) < 1


def test_the_summary_mean_is_the_mean_of_the_expected_scores(
    run_cli, judge_server, cases, tmp_path
):
    out = tmp_path / "run"
    run = score(run_cli, judge_server, cases, out, "--score-mode", "logprob")
    assert run.exit_code == 0, run.stderr
    rows = results(out)
    expected = [row["judgements"][0]["score_expected"] for row in rows]
    assert [row["score"] for row in rows] == pytest.approx(expected)
    assert run.summary["mean"] == pytest.approx(math.fsum(expected) / len(expected))


def test_a_server_without_logprobs_stops_the_run_at_the_first_call(
    run_cli, silent_server, cases, tmp_path
):
    silent_server.reset()
    out = tmp_path / "run"
    run = score(run_cli, silent_server, cases, out, "--score-mode", "logprob")
    assert run.exit_code == 2
    assert f"the judge openai/sim at {silent_server.url}/v1 gives none" in run.stderr
    assert "hint: use --score-mode sample" in run.stderr
    assert "Traceback" not in run.stderr
    assert len(silent_server.requests) == 1  # the probe, alone: nothing else was sent
    assert not out.exists()  # the new run directory is discarded: nothing half-written
    assert run.stdout == ""


def test_the_same_server_serves_a_sampled_run(run_cli, silent_server, cases, tmp_path):
    silent_server.reset()
    run = score(run_cli, silent_server, cases, tmp_path / "run")
    assert run.exit_code == 0, run.stderr
    assert all("logprobs" not in r.body for r in silent_server.requests)


def test_a_binary_judgement_gives_the_probability_of_its_pass_choice(
    run_cli, judge_server, tmp_path
):
    out = tmp_path / "run"
    data = REPO / "datasets" / "fact-check.jsonl"
    run = run_cli(
        judge_server,
        "score",
        str(data),
        "--rubric",
        "fact-check",
        "--limit",
        "4",
        "--out",
        str(out),
        "--json",
        "--quiet",
        "--score-mode",
        "logprob",
    )
    assert run.exit_code == 0, run.stderr
    for judgement in judgements(out):
        written = judgement["verdict"]["choice"]
        spread = known("choice", written, ["YES", "NO"], judgement["raw"])
        assert judgement["probabilities"] == pytest.approx(spread, abs=1e-6)
        assert judgement["score_expected"] == pytest.approx(spread["YES"], abs=1e-6)
    # One judge: a case's probabilities are its judgement's; the weighted pass rate their
    # mean P(YES), beside the pass rate of the written choices.
    rows = results(out)
    assert [r["probabilities"] for r in rows] == [r["judgements"][0]["probabilities"] for r in rows]
    p_yes = [r["probabilities"]["YES"] for r in rows]
    assert run.summary["pass_rate_weighted"] == pytest.approx(math.fsum(p_yes) / len(p_yes))
    low, high = run.summary["pass_rate_weighted_ci"]
    assert low <= run.summary["pass_rate_weighted"] <= high
    assert "pass rate, probability-weighted" in (out / "report.md").read_text()


def test_pairwise_probabilities_are_mapped_back_through_both_orders(
    run_cli, judge_server, tmp_path
):
    old = write_jsonl(
        tmp_path / "old.jsonl",
        [
            {"id": f"p{i}", "input": f"Why is the sky blue, {i}?", "output": "Light."}
            for i in range(4)
        ],
    )
    new = write_jsonl(
        tmp_path / "new.jsonl",
        [
            {
                "id": f"p{i}",
                "input": f"Why is the sky blue, {i}?",
                "output": "Air scatters blue sunlight more than red (Rayleigh scattering), "
                f"so the sky looks blue, case {i}.",
            }
            for i in range(4)
        ],
    )
    out = tmp_path / "run"
    run = run_cli(
        judge_server,
        "pairwise",
        str(old),
        str(new),
        "--out",
        str(out),
        "--json",
        "--quiet",
        "--score-mode",
        "logprob",
    )
    assert run.exit_code == 0, run.stderr
    for row in results(out):
        orders = {j["order"] for j in row["judgements"]}
        assert orders == {"old-new", "new-old"}
        for judgement in row["judgements"]:
            order = Order(judgement["order"])
            written = judgement["verdict"]["winner"]
            positional = known("winner", written, ["A", "B", "tie"], judgement["raw"])
            mapped = {to_winner(Position(k), order).value: p for k, p in positional.items()}
            assert judgement["probabilities"] == pytest.approx(mapped, abs=1e-6)
            # The sampled winner, mapped back the same way, is the likeliest.
            sampled = to_winner(Position(written), order).value
            assert max(mapped, key=mapped.__getitem__) == sampled
            assert judgement["score_expected"] == pytest.approx(
                mapped["new"] + mapped["tie"] / 2, abs=1e-6
            )
    # AlpacaEval 2's weighted annotator: each case's P(new) + ½ P(tie), both orders
    # averaged, then the mean over cases.
    per_case = [
        math.fsum(j["score_expected"] for j in row["judgements"]) / 2 for row in results(out)
    ]
    assert run.summary["win_rate_weighted"] == pytest.approx(
        math.fsum(per_case) / len(per_case), abs=1e-5
    )
    assert "win rate, probability-weighted" in (out / "report.md").read_text()


def test_logprob_replies_are_cached_apart_from_sampled_ones(run_cli, judge_server, cases, tmp_path):
    sampled = score(run_cli, judge_server, cases, tmp_path / "sampled")
    assert sampled.exit_code == 0, sampled.stderr
    paid = len(judge_server.requests)
    # A sampled reply has no logprobs: the logprob run pays for its own, every case.
    first = score(run_cli, judge_server, cases, tmp_path / "first", "--score-mode", "logprob")
    assert first.exit_code == 0, first.stderr
    asked = judge_server.requests[paid:]
    assert {r.body.get("logprobs") for r in asked} == {True}
    assert len(asked) >= len(results(tmp_path / "first")) == 12
    assert not any(j["cached"] for j in judgements(tmp_path / "first"))
    # And a re-run is answered from the cache, with the same probabilities.
    sent = len(judge_server.requests)
    again = score(run_cli, judge_server, cases, tmp_path / "again", "--score-mode", "logprob")
    assert again.exit_code == 0, again.stderr
    assert len(judge_server.requests) == sent
    cached = judgements(tmp_path / "again")
    assert all(j["cached"] for j in cached)
    by_reply = {j["raw"]: j for j in judgements(tmp_path / "first")}
    for judgement in cached:
        original = by_reply[judgement["raw"]]
        assert judgement["score_expected"] == original["score_expected"]
        assert judgement["probabilities"] == original["probabilities"]


def test_the_environment_variable_sets_the_mode(
    run_cli, judge_server, cases, monkeypatch, tmp_path
):
    monkeypatch.setenv("JUDGE_SCORE_MODE", "logprob")
    out = tmp_path / "run"
    assert score(run_cli, judge_server, cases, out).exit_code == 0
    assert all(j["score_expected"] is not None for j in judgements(out))
    monkeypatch.setenv("JUDGE_SCORE_MODE", "bogus")
    bad = score(run_cli, judge_server, cases, tmp_path / "bad")
    assert bad.exit_code == 2
    assert "--score-mode 'bogus' is not one of: sample, logprob" in bad.stderr
