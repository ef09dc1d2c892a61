"""`judge demo` ends by saying where its runs are, which report to open and what to try
next (review 2026-11-23, finding 18: it ended with "demo runs are in runs/..." only)."""

from __future__ import annotations

from pathlib import Path

from judgecli.cli.demo import demo_steps, next_steps

REPO = Path(__file__).resolve().parents[3]
DATASETS = REPO / "datasets"


def test_the_demo_ends_with_the_report_to_open_and_commands_for_a_real_judge(monkeypatch):
    monkeypatch.chdir(REPO)
    target = REPO / "runs" / "20261123T000000Z-demo"
    lines = next_steps(target, DATASETS)
    assert lines[0] == "demo runs are in runs/20261123T000000Z-demo"
    assert lines[1].startswith("open runs/20261123T000000Z-demo/pairwise-pass/report.html")
    commands = [line.strip() for line in lines if line.strip().startswith("judge ")]
    assert (
        "judge score datasets/example.jsonl --rubric helpfulness --model openai/gpt-4o-mini"
        in commands
    )
    assert any(
        c.startswith("judge pairwise datasets/old.jsonl datasets/new.jsonl") for c in commands
    )
    assert not any("openai/sim" in c or "--api-base" in c for c in commands)


def test_the_report_named_is_one_a_demo_step_writes():
    steps = demo_steps("http://127.0.0.1:1/v1", Path("out"), DATASETS)
    outs = {args[args.index("--out") + 1] for _, args, _ in steps if "--out" in args}
    assert str(Path("out") / "pairwise-pass") in outs


def test_paths_outside_the_working_directory_stay_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lines = next_steps(REPO / "runs" / "x-demo", DATASETS)
    assert f"open {REPO}/runs/x-demo/pairwise-pass/report.html" in lines[1]
    # Issue 29: from a wheel the datasets are in site-packages; named whole, a suggested
    # command works from any folder.
    assert f"judge score {DATASETS}/example.jsonl --rubric helpfulness" in lines[4]
