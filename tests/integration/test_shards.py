"""--shard i/N and judge merge, through the real CLI against the simulator: N shards
merged are the run one machine makes, and the gate runs on the merged run only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judgecli.simulator.server import SimulatorServer
from tests.integration.conftest import write_numbered_cases

REPO = Path(__file__).resolve().parents[2]
OLD, NEW = REPO / "datasets" / "old.jsonl", REPO / "datasets" / "new.jsonl"
TIMING = {"latency_s", "latency_p50_s", "latency_p95_s"}


def untimed(value: Any) -> Any:
    """A summary or results line without what the clock decides (latencies)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def results_by_id(run: Path) -> dict[str, Any]:
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    assert len({r["id"] for r in rows}) == len(rows)
    return {r["id"]: untimed(r) for r in rows}


def pairwise_args(out: Path, *extra: str) -> list[str]:
    return ["pairwise", str(OLD), str(NEW), "--rubric", "pairwise", "--out", str(out), *extra]


def shard_runs(run_cli, server: SimulatorServer, args, tmp: Path, count: int) -> list[Path]:
    """Run `args(out)` as shards 0..count-1; each exits 0 (no gate on a shard)."""
    runs = []
    for index in range(count):
        out = tmp / f"shard-{index}"
        result = run_cli(server, *args(out), "--shard", f"{index}/{count}", "--quiet")
        assert result.exit_code == 0, result.stderr
        runs.append(out)
    return runs


def test_three_shards_merge_into_the_single_machine_run(
    judge_server: SimulatorServer, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    gate = ("--min-win-rate", "0.6")
    single = run_cli(judge_server, *pairwise_args(tmp_path / "single", *gate, "--no-cache"))
    assert single.exit_code == 0, single.stderr
    shards = shard_runs(run_cli, judge_server, lambda out: pairwise_args(out, *gate), tmp_path, 3)
    sizes = [read_json(run / "summary.json")["n_cases"] for run in shards]
    assert sum(sizes) == 30
    assert all(sizes)
    for run in shards:
        summary = read_json(run / "summary.json")
        assert summary.get("gate") is None
        assert any("judge merge" in w for w in summary["warnings"])

    merged = run_cli(None, "merge", *map(str, shards), "--out", str(tmp_path / "merged"))
    assert merged.exit_code == 0, merged.stderr
    assert "PASS" in merged.stdout
    expected = untimed(read_json(tmp_path / "single" / "summary.json"))
    got = untimed(read_json(tmp_path / "merged" / "summary.json"))
    assert got == expected
    assert results_by_id(tmp_path / "merged") == results_by_id(tmp_path / "single")
    info = read_json(tmp_path / "merged" / "run.json")
    assert "--shard" not in info["argv"]
    assert info["config"]["shard"] is None
    assert sorted(m["shard"] for m in info["merged"]) == ["0/3", "1/3", "2/3"]
    # The merged run is a run like any other: its reports re-render, it can be re-gated.
    again = run_cli(
        None, "gate", str(tmp_path / "merged" / "summary.json"), "--min-win-rate", "0.99"
    )
    assert again.exit_code == 1


def test_a_sample_is_drawn_before_the_split(
    judge_server: SimulatorServer, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--sample picks the same cases on every shard, so the merged run judged exactly the
    single run's sample."""
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "cases.jsonl"
    write_numbered_cases(
        data, 60, lambda i: {"id": f"c{i}", "input": f"Question {i}?", "output": f"Answer {i}."}
    )

    def args(out: Path) -> list[str]:
        return ["score", str(data), "--rubric", "helpfulness", "--out", str(out)] + [
            "--sample",
            "25",
            "--seed",
            "3",
            "--no-cache",
        ]

    single = run_cli(judge_server, *args(tmp_path / "single"))
    assert single.exit_code == 0, single.stderr
    shards = shard_runs(run_cli, judge_server, args, tmp_path, 2)
    merged = run_cli(None, "merge", *map(str, shards), "--out", str(tmp_path / "merged"), "--quiet")
    assert merged.exit_code == 0, merged.stderr
    assert set(results_by_id(tmp_path / "merged")) == set(results_by_id(tmp_path / "single"))
    assert untimed(read_json(tmp_path / "merged" / "summary.json")) == untimed(
        read_json(tmp_path / "single" / "summary.json")
    )


def test_the_gate_fails_on_the_merged_run_only(
    judge_server: SimulatorServer, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    shards = shard_runs(
        run_cli, judge_server, lambda out: pairwise_args(out, "--min-win-rate", "0.99"), tmp_path, 2
    )
    merged = run_cli(None, "merge", *map(str, shards), "--out", str(tmp_path / "m"), "--json")
    assert merged.exit_code == 1
    assert merged.summary["gate"]["passed"] is False


@pytest.fixture
def three_shards(judge_server: SimulatorServer, run_cli, tmp_path_factory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("shards")
    return shard_runs(run_cli, judge_server, pairwise_args, tmp, 3)


@pytest.mark.parametrize(
    ("pick", "message"),
    [
        (lambda s: s[:2], "missing shard(s) 2/3"),
        (lambda s: [s[0], s[1], s[1]], None),  # the same directory twice counts once
        (lambda s: [s[0], s[2]], "missing shard(s) 1/3"),
    ],
)
def test_merge_names_missing_shards(three_shards, run_cli, tmp_path: Path, pick, message) -> None:
    out = tmp_path / "merged"
    result = run_cli(None, "merge", *map(str, pick(three_shards)), "--out", str(out))
    assert result.exit_code == 2
    assert (message or "missing shard(s) 2/3") in result.stderr
    assert not out.exists()


def test_merge_refuses_shards_of_different_runs(
    three_shards, judge_server: SimulatorServer, run_cli, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    made = run_cli(judge_server, *pairwise_args(other, "--seed", "5"), "--shard", "2/3", "--quiet")
    assert made.exit_code == 0
    out = tmp_path / "merged"
    result = run_cli(None, "merge", *map(str, three_shards[:2]), str(other), "--out", str(out))
    assert result.exit_code == 2
    assert "different command lines" in result.stderr
    assert not out.exists()


def test_merge_refuses_a_repeated_index_and_other_splits(
    three_shards, judge_server: SimulatorServer, run_cli, tmp_path: Path
) -> None:
    twin = tmp_path / "twin"
    made = run_cli(judge_server, *pairwise_args(twin), "--shard", "1/3", "--quiet")
    assert made.exit_code == 0
    result = run_cli(
        None, "merge", *map(str, three_shards), str(twin), "--out", str(tmp_path / "m")
    )
    assert result.exit_code == 2
    assert "are both shard 1/3" in result.stderr
    halves = tmp_path / "halves"
    made = run_cli(judge_server, *pairwise_args(halves), "--shard", "1/2", "--quiet")
    assert made.exit_code == 0
    result = run_cli(
        None, "merge", str(three_shards[0]), str(halves), "--out", str(tmp_path / "m2")
    )
    assert result.exit_code == 2
    assert "not shards of one split" in result.stderr


def test_merge_refuses_unfinished_and_unsharded_runs(
    three_shards, judge_server: SimulatorServer, run_cli, tmp_path: Path
) -> None:
    (three_shards[1] / "summary.json").unlink()
    result = run_cli(None, "merge", *map(str, three_shards), "--out", str(tmp_path / "m"))
    assert result.exit_code == 2
    assert "has not finished" in result.stderr
    assert "judge resume" in result.stderr
    plain = tmp_path / "plain"
    assert run_cli(judge_server, *pairwise_args(plain), "--quiet").exit_code == 0
    result = run_cli(None, "merge", str(plain), "--out", str(tmp_path / "m"))
    assert result.exit_code == 2
    assert "not a shard run" in result.stderr
    assert not (tmp_path / "m").exists()


def test_merge_refuses_a_dataset_that_changed(
    judge_server: SimulatorServer, run_cli, tmp_path: Path
) -> None:
    """The merged run judges nothing: a case the shards never saw is an error (exit 2, no
    merged run), not a call."""
    data = tmp_path / "cases.jsonl"
    row = lambda i: {"id": f"c{i}", "input": f"Question {i}?", "output": f"Answer {i}."}  # noqa: E731
    write_numbered_cases(data, 12, row)

    def args(out: Path) -> list[str]:
        return ["score", str(data), "--rubric", "helpfulness", "--out", str(out)]

    shards = shard_runs(run_cli, judge_server, args, tmp_path, 2)
    write_numbered_cases(data, 13, row)
    calls = len(judge_server.requests)
    out = tmp_path / "merged"
    result = run_cli(None, "merge", *map(str, shards), "--out", str(out))
    assert result.exit_code == 2
    assert "have no result in the merged runs" in result.stderr
    assert "'c12'" in result.stderr
    assert len(judge_server.requests) == calls
    assert not out.exists()


def test_sequential_does_not_follow_a_shard(run_cli, judge_server, tmp_path: Path) -> None:
    result = run_cli(
        judge_server,
        *pairwise_args(tmp_path / "s", "--min-win-rate", "0.5", "--sequential"),
        "--shard",
        "0/2",
    )
    assert result.exit_code == 2
    assert "--sequential with --shard" in result.stderr
    assert not (tmp_path / "s").exists()


def test_the_merge_prints_as_its_own_flags_say_not_as_a_shard_did(
    judge_server: SimulatorServer, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 30: the merged run's command line kept the first shard's --quiet and --json, so a
    # merge of quiet shards printed no tables and one of --json shards printed summary.json,
    # whatever the merge itself was given (and which shard came first decided).
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    shards = shard_runs(
        run_cli, judge_server, lambda out: pairwise_args(out, "--json"), tmp_path, 2
    )
    loud = run_cli(None, "merge", *map(str, shards), "--out", str(tmp_path / "loud"))
    assert loud.exit_code == 0, loud.stderr
    assert "━━━" in loud.stdout  # the tables, which --quiet leaves out
    assert not loud.stdout.lstrip().startswith("{")
    info = read_json(tmp_path / "loud" / "run.json")
    assert not {"--quiet", "--json"} & set(info["argv"])
    as_json = run_cli(None, "merge", *map(str, shards), "--out", str(tmp_path / "json"), "--json")
    assert as_json.exit_code == 0, as_json.stderr
    assert json.loads(as_json.stdout)["command"] == "pairwise"
