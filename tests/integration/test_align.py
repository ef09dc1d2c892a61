"""`judge align` end to end against the simulator's blind-spot judge (issue 34)."""

from __future__ import annotations

import json
from pathlib import Path

from judgecli.inputs.rubric_file import load_rubric
from judgecli.simulator.config import SimulatorConfig
from judgecli.simulator.server import SimulatorServer

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "datasets" / "align.jsonl"
PHRASE = "I guarantee this is correct"


def align_args(out: str, *extra: str) -> list[str]:
    return [
        "align",
        str(ROOT / "rubrics" / "answer-correctness.yaml"),
        "--dataset",
        str(DATA),
        "--labels",
        str(DATA),
        "--optimizer-model",
        "openai/opt-sim",
        "--seed",
        "1",
        "--out",
        out,
        "--json",
        *extra,
    ]


def test_align_finds_the_blind_spot_and_writes_an_extending_rubric_with_its_provenance(
    run_cli, tmp_path: Path
) -> None:
    config = SimulatorConfig(truth_file=DATA, blind_spot=PHRASE)
    with SimulatorServer(config) as server:
        run = run_cli(server, *align_args(str(tmp_path / "run")))
        assert run.exit_code == 0, run.stderr
        summary = run.summary
        assert summary["decision"] == "better"
        assert summary["gain_ci"]["kappa"][0] > 0
        for key in ("baseline", "aligned", "gain", "gain_ci"):
            assert set(summary[key]) == {"kappa", "accuracy", "agreement"}
        split = json.loads((tmp_path / "run" / "split.json").read_text())
        assert split["test_hash"] == summary["split"]["test_hash"]
        assert sorted(split["test"]) == summary["split"]["test"]
        rubric = (tmp_path / "run" / "rubric.yaml").read_text()
        assert "extends:" in rubric
        assert summary["labels_hash"] in rubric
        assert "Why: Wrong: the reference answer is" in rubric  # the rater's reason shown
        written = load_rubric(tmp_path / "run" / "rubric.yaml")
        assert written.content_hash == summary["aligned_rubric_hash"] != summary["rubric_hash"]
        # The rubric written is one judge can read, and its test labels feed --labels.
        labels = (tmp_path / "run" / "test-labels.jsonl").read_text().splitlines()
        assert len(labels) == len(split["test"])
        # The gate: a gain's lower bound below --min-gain is exit 1. The same align again
        # (a new --out) is answered by the reply cache, the optimizer's revision included:
        # a re-run never pays twice.
        asked = len(server.requests)
        gated = run_cli(server, *align_args(str(tmp_path / "gated"), "--min-gain", "0.99"))
        assert gated.exit_code == 1, gated.stderr
        assert gated.summary["passed"] is False
        assert len(server.requests) == asked
        assert gated.summary["gain"] == summary["gain"]


def test_a_judge_that_ignores_its_prompt_gets_no_significant_gain_and_keeps_the_baseline(
    run_cli, tmp_path: Path
) -> None:
    config = SimulatorConfig(truth_file=DATA, blind_spot=PHRASE, ignores_prompt=True)
    with SimulatorServer(config) as server:
        run = run_cli(server, *align_args(str(tmp_path / "run")))
    assert run.exit_code == 0, run.stderr
    assert run.summary["decision"] == "no significant gain"
    assert run.summary["kept"] == "baseline"
    assert "prompt" not in (tmp_path / "run" / "rubric.yaml").read_text().split("extends:")[1]


def test_a_pairwise_rubric_is_refused_before_any_call(run_cli, tmp_path: Path) -> None:
    with SimulatorServer(SimulatorConfig()) as server:
        args = align_args(str(tmp_path / "run"))
        args[1] = "pairwise"
        run = run_cli(server, *args)
        assert run.exit_code == 2
        assert "binary" in run.stderr
        assert not server.requests


def test_an_out_directory_holding_an_align_run_is_refused_without_force(
    run_cli, tmp_path: Path
) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "split.json").write_text("{}")
    with SimulatorServer(SimulatorConfig(truth_file=DATA)) as server:
        run = run_cli(server, *align_args(str(tmp_path / "run")))
        assert run.exit_code == 2
        assert "--force" in run.stderr
        assert not server.requests


def test_labels_of_cases_the_dataset_lacks_are_refused_naming_one(run_cli, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"id": "al-001", "label": "NO"}\n{"id": "nope", "label": "YES"}\n')
    with SimulatorServer(SimulatorConfig(truth_file=DATA)) as server:
        args = align_args(str(tmp_path / "run"))
        args[args.index("--labels") + 1] = str(labels)
        run = run_cli(server, *args)
        assert run.exit_code == 2, run.stderr
        assert "'nope'" in run.stderr
        assert not server.requests


def test_a_pointwise_rubric_is_aligned_on_pass_or_fail_with_a_pass_mark_candidate(
    run_cli, tmp_path: Path
) -> None:
    labels = ROOT / "datasets" / "labels.jsonl"
    config = SimulatorConfig(truth_file=labels, noise=0.2)
    with SimulatorServer(config) as server:
        args = [
            "align",
            "helpfulness",
            "--dataset",
            str(ROOT / "datasets" / "example.jsonl"),
            "--labels",
            str(labels),
            "--out",
            str(tmp_path / "run"),
            "--json",
        ]
        run = run_cli(server, *args)
    assert run.exit_code == 0, run.stderr
    assert set(run.summary["cv_accuracy"]) == {"baseline", "pass-mark", "few-shot"}
    assert run.summary["n_test_labels"] >= len(run.summary["split"]["test"])
    # 24 cases make a 7-case test: too small for a narrow interval, and it says so.
    assert "warning: the sealed test holds 7 cases" in run.stderr
