"""`judge probe` end to end: the real CLI, LiteLLM over HTTP, the simulator with known
padding and verbosity biases (simulator/probes.py), the bundled pairs by default.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.conftest import REPO

OLD = REPO / "datasets" / "old.jsonl"
NEW = REPO / "datasets" / "new.jsonl"


@pytest.fixture(scope="module")
def padding_judge() -> Iterator[SimulatorServer]:
    """A judge that prefers a padded answer 60% of the time, and sees through restating."""
    with SimulatorServer(SimulatorConfig(padding_bias=0.6)) as server:
        yield server


def probe(run_cli, server, *extra: str, out: str = "run"):
    return run_cli(server, "probe", "--out", out, "--json", "--quiet", *extra)


def by_name(summary: dict) -> dict[str, dict]:
    return {p["name"]: p for p in summary["probes"]}


def test_a_padding_biased_judge_fails_its_length_ceiling_with_exit_1(run_cli, padding_judge):
    padding_judge.reset()
    run = probe(run_cli, padding_judge, "--max-length-bias", "0.2", "--max-verbosity-bias", "0.2")
    assert run.exit_code == 1, run.stderr
    probes = by_name(run.summary)
    assert set(probes) == {"position", "length", "verbosity"}
    length = probes["length"]
    assert length["n"] >= 20
    assert length["flip_rate_ci"][0] > 0.2
    assert length["flip_rate_ci"][0] <= 0.6 <= length["flip_rate_ci"][1]
    assert length["examples"]
    assert probes["verbosity"]["flips"] == 0
    assert probes["position"]["flips"] == 0
    gate = run.summary["gate"]
    assert not gate["passed"]
    assert {c["probe"]: c["passed"] for c in gate["checks"]} == {
        "length": False,
        "verbosity": True,
    }
    report = Path("run/report.md").read_text()
    assert "BIASED: the flip rate is above the 20.0% floor" in report
    assert "**Biased: length (" in report
    assert "| length |" in report
    assert "verdicts that moved" in report
    assert "<failure" in Path("run/results.junit.xml").read_text()
    assert "length" in Path("run/report.html").read_text()


def test_an_unbiased_judge_passes_every_ceiling(run_cli, judge_server):
    run = probe(
        run_cli,
        judge_server,
        str(OLD),
        str(NEW),
        "--max-position-bias",
        "0.2",
        "--max-length-bias",
        "0.2",
        "--max-verbosity-bias",
        "0.2",
    )
    assert run.exit_code == 0, run.stderr
    assert all(p["flips"] == 0 for p in run.summary["probes"])
    assert run.summary["gate"]["passed"]
    # Each pair in both orders, then each decided pair's two rewrites in both orders.
    decided = by_name(run.summary)["length"]["n"]
    assert len(judge_server.requests) == 2 * (30 + 2 * decided)


def test_a_finished_run_resumed_asks_the_judge_nothing_more(run_cli, judge_server):
    first = probe(run_cli, judge_server, "--probes", "position,length")
    calls = len(judge_server.requests)
    again = run_cli(
        judge_server, "probe", "--probes", "position,length", "--resume", "run", "--json", "--quiet"
    )
    assert again.exit_code == 0, again.stderr
    assert len(judge_server.requests) == calls
    assert again.summary["probes"] == first.summary["probes"]


def test_power_sizes_the_pairs_probed(run_cli, judge_server):
    run = probe(run_cli, judge_server, "--probes", "position", "--power", "0.8", "--effect", "0.3")
    assert run.exit_code == 0, run.stderr
    # rate_sample_size(floor=0.05, effect=0.3, power=0.8) = 10 (tests/unit/stats/test_power.py).
    assert run.summary["sizing"]["n_pairs"] == 10
    assert run.summary["n_cases"] == 10
    assert by_name(run.summary)["position"]["n_needed"] == 10


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--probes", "selfish"], "no probe named 'selfish'"),
        (["--power", "0.8"], "--power and --effect go together"),
        ([str(OLD)], "OLD and NEW, or neither; got 1 file"),
        (["--rubric", "helpfulness"], "not pairwise"),
        (["--probes", "position", "--max-length-bias", "0.1"], "probes not run"),
    ],
)
def test_usage_errors_exit_2_before_the_judge_is_called(run_cli, judge_server, args, message):
    run = probe(run_cli, judge_server, *args)
    assert run.exit_code == 2
    assert message in run.stderr
    assert "hint:" in run.stderr
    assert judge_server.requests == []
    assert not Path("run/results.jsonl").exists()


def test_the_summary_keys_are_the_documented_ones(run_cli, judge_server):
    run = probe(run_cli, judge_server, "--probes", "position", "--limit", "4")
    summary = json.loads(Path("run/summary.json").read_text())
    assert summary == run.summary
    assert summary["command"] == "probe"
    for p in summary["probes"]:
        assert {"name", "flip_rate", "flip_rate_ci", "n"} <= set(p)


def test_the_python_api_probes_rows_as_the_command_does(padding_judge, monkeypatch):
    from judgecli import probe_judge

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    rows = [json.loads(line) for line in OLD.read_text().splitlines()]
    other = [json.loads(line) for line in NEW.read_text().splitlines()]
    run = probe_judge(
        rows,
        other,
        model="openai/sim",
        api_base=f"{padding_judge.url}/v1",
        out="api-run",
        probes=["length"],
        max_length_bias=0.2,
    )
    assert run.exit_code == 1
    (length,) = run.summary.probes
    assert length.flip_rate is not None
    assert length.flip_rate > 0.2
    run_json = json.loads(Path("api-run/run.json").read_text())
    assert "--max-length-bias" in run_json["argv"]


def test_a_judge_that_cannot_grade_is_exit_3_whatever_the_gate(run_cli):
    with SimulatorServer(SimulatorConfig(error_rate=0.5)) as failing:
        run = probe(run_cli, failing, "--max-retries", "0", "--max-length-bias", "0.9")
    assert run.exit_code == 3
    assert "could not grade" in run.stderr
    assert "judge resume" in run.stderr
    assert "gate" not in run.summary  # an incomplete run is never gated
    assert run.summary["incomplete"]


def test_a_judge_that_prefers_its_own_familys_answers_fails_its_self_ceiling(run_cli, tmp_path):
    old_rows = [json.loads(line) | {"model": "sim-small"} for line in OLD.read_text().splitlines()]
    new_rows = [
        json.loads(line) | {"model": "other-large"} for line in NEW.read_text().splitlines()
    ]
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old.write_text("".join(json.dumps(r) + "\n" for r in old_rows))
    new.write_text("".join(json.dumps(r) + "\n" for r in new_rows))
    config = SimulatorConfig(self_bias=1.0, self_answers=(old, new))
    with SimulatorServer(config) as server:
        args = ["probe", str(old), str(new), "--out", "run", "--json", "--quiet"]
        args += ["--probes", "self", "--max-self-bias", "0.2", "--api-base", f"{server.url}/v1"]
        run = run_cli(None, *args, "--model", "openai/sim", "--model", "openai/ref")
    assert run.exit_code == 1, run.stderr
    (self_probe,) = run.summary["probes"]
    # A judge that always sides with its own family moves every verdict it can.
    assert self_probe["n"] > 0
    assert self_probe["flips"] == self_probe["n"]
    assert self_probe["examples"][0]["changed"] == "openai/sim: old"


def test_self_without_a_panel_is_not_probed_and_a_ceiling_on_it_is_undecided(run_cli, judge_server):
    run = probe(run_cli, judge_server, "--probes", "self", "--max-self-bias", "0.2")
    assert run.exit_code == 3
    (self_probe,) = run.summary["probes"]
    assert self_probe["n"] == 0
    assert "needs a panel" in self_probe["note"]
    assert not run.summary["gate"]["decided"]
    assert "hint:" in run.stderr
