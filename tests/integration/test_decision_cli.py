"""The statistics of the decision through the real CLI, real LiteLLM and the simulator: the
sequential gate (stops early, exit code is the gate's, resume recomputes the decision), the
sign test, category marks with their correction, human-corrected estimates from --labels,
and the paired tests of `judge report A B`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecli.store import RESULTS, SUMMARY
from tests.integration.conftest import write_jsonl

GOOD = (
    "The answer to question {i} about {topic}: {topic} works through a clear mechanism, "
    "explained step by step with an example, the reasons behind it, and what to check next."
)
EVASIVE = "I don't know."
TOPICS = ["tides", "rainbows", "volcanoes", "magnets", "glaciers", "eclipses"]


def question(i: int) -> str:
    return f"Question {i}: how do {TOPICS[i % len(TOPICS)]} work?"


def pair_files(tmp_path: Path, n: int, new_better: float) -> tuple[Path, Path]:
    """OLD and NEW where NEW answers well on the first `new_better` share of cases and
    evasively on the rest (OLD the other way round).
    """
    old, new = [], []
    for i in range(n):
        good = GOOD.format(i=i, topic=TOPICS[i % len(TOPICS)])
        better = i < new_better * n
        base = {"id": f"c{i:03d}", "input": question(i), "category": TOPICS[i % len(TOPICS)]}
        old.append(base | {"output": EVASIVE if better else good})
        new.append(base | {"output": good if better else EVASIVE})
    return write_jsonl(tmp_path / "old.jsonl", old), write_jsonl(tmp_path / "new.jsonl", new)


def summary_of(run_dir: Path) -> dict:
    return json.loads((run_dir / SUMMARY).read_text())


def score(run_cli, server, data: Path, out: Path, *extra: str):
    return run_cli(server, "score", str(data), "--rubric", "helpfulness", "--out", str(out), *extra)


def pairwise(run_cli, server, old: Path, new: Path, out: Path, *extra: str):
    return run_cli(
        server, "pairwise", str(old), str(new), "--out", str(out), "--json", "--quiet", *extra
    )


def test_sequential_pairwise_stops_early_and_passes(run_cli, judge_server, tmp_path):
    old, new = pair_files(tmp_path, 200, new_better=0.9)
    run = pairwise(
        run_cli, judge_server, old, new, tmp_path / "run", "--sequential", "--min-win-rate", "0.55"
    )
    assert run.exit_code == 0, run.stderr
    seq = run.summary["sequential"]
    assert seq["decision"] == "pass"
    assert seq["n_cases"] == 200
    assert 0 < seq["decided_after"] < 200
    assert seq["decided_after"] <= seq["judged"] < 200
    assert seq["bound"] > 0.55
    assert seq["saved_cases"] == 200 - seq["judged"]
    # The run judged what it needed: complete, not "stopped early".
    assert run.summary["n_cases"] == seq["judged"]
    assert "incomplete" not in run.summary
    assert run.summary["gate"]["on"] == "sequential"
    assert run.summary["gate"]["passed"] is True
    lines = (tmp_path / "run" / RESULTS).read_text().splitlines()
    assert len(lines) == seq["judged"]
    report = (tmp_path / "run" / "report.md").read_text()
    assert f"decided PASS after {seq['decided_after']} of 200 cases" in report
    assert "## Sequential gate" in report


def test_sequential_pairwise_fails_on_a_regression(run_cli, judge_server, tmp_path):
    old, new = pair_files(tmp_path, 200, new_better=0.1)
    run = pairwise(
        run_cli, judge_server, old, new, tmp_path / "run", "--sequential", "--min-win-rate", "0.55"
    )
    assert run.exit_code == 1, run.stderr
    seq = run.summary["sequential"]
    assert seq["decision"] == "fail"
    assert seq["decided_after"] < 200
    assert seq["bound"] < 0.55


def test_sequential_undecided_when_the_data_runs_out_fails_the_gate(
    run_cli, judge_server, tmp_path
):
    # 12 cases cannot show anything at 95%: the sequence never leaves the bar.
    old, new = pair_files(tmp_path, 12, new_better=0.6)
    run = pairwise(
        run_cli, judge_server, old, new, tmp_path / "run", "--sequential", "--min-win-rate", "0.55"
    )
    assert run.exit_code == 1, run.stderr
    seq = run.summary["sequential"]
    assert seq["decision"] == "undecided"
    assert seq["decided_after"] is None
    assert seq["judged"] == 12
    assert "undecided after all 12 cases" in (tmp_path / "run" / "report.md").read_text()


def test_a_resumed_sequential_run_recomputes_its_state_from_results(
    run_cli, judge_server, tmp_path
):
    old, new = pair_files(tmp_path, 200, new_better=0.9)
    args = ("--sequential", "--min-win-rate", "0.55", "--concurrency", "4")
    first = pairwise(run_cli, judge_server, old, new, tmp_path / "run", *args)
    seq = first.summary["sequential"]
    # A crash after a few cases: results.jsonl keeps its first lines, no summary.
    results = tmp_path / "run" / RESULTS
    kept = results.read_text().splitlines()[:5]
    results.write_text("".join(line + "\n" for line in kept))
    (tmp_path / "run" / SUMMARY).unlink()
    judge_server.reset()
    resumed = run_cli(None, "resume", str(tmp_path / "run"))
    assert resumed.exit_code == 0, resumed.stderr
    again = summary_of(tmp_path / "run")["sequential"]
    assert again["decision"] == seq["decision"]
    assert again["decided_after"] == seq["decided_after"]
    # A finished sequential run resumed judges nothing more.
    judge_server.reset()
    rerun = run_cli(None, "resume", str(tmp_path / "run"))
    assert rerun.exit_code == 0, rerun.stderr
    assert judge_server.requests == []
    assert summary_of(tmp_path / "run")["sequential"]["decided_after"] == seq["decided_after"]


def test_gate_command_rechecks_a_sequential_run(run_cli, judge_server, tmp_path):
    old, new = pair_files(tmp_path, 200, new_better=0.9)
    pairwise(
        run_cli, judge_server, old, new, tmp_path / "run", "--sequential", "--min-win-rate", "0.55"
    )
    summary = str(tmp_path / "run" / SUMMARY)
    ok = run_cli(None, "gate", summary, "--min-win-rate", "0.55", "--on", "sequential")
    assert ok.exit_code == 0, ok.stderr
    # At a bar above the sequence's lower end the same interval cannot pass.
    high = run_cli(None, "gate", summary, "--min-win-rate", "0.99", "--on", "sequential")
    assert high.exit_code == 1


def test_sequential_score_on_the_pass_rate(run_cli, judge_server, tmp_path):
    rows = [
        {
            "id": f"s{i:03d}",
            "input": question(i),
            "output": GOOD.format(i=i, topic=TOPICS[i % len(TOPICS)]) if i % 10 else EVASIVE,
        }
        for i in range(150)
    ]
    data = write_jsonl(tmp_path / "cases.jsonl", rows)
    run = score(
        run_cli,
        judge_server,
        data,
        tmp_path / "run",
        "--json",
        "--quiet",
        "--sequential",
        "--min-pass-rate",
        "0.5",
    )
    assert run.exit_code == 0, run.stderr
    seq = run.summary["sequential"]
    assert seq["metric"] == "pass_rate"
    assert seq["decision"] == "pass"
    assert seq["decided_after"] < 150


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--sequential"], "--sequential stops on one number"),
        # Issue 29: --min-consistency is the floor a sequential run may set; another
        # threshold beside the one it stops on is still refused.
        (
            ["--sequential", "--min-win-rate", "0.55", "--max-loss-rate", "0.2"],
            "--sequential stops on one number",
        ),
        (["--sequential", "--min-win-rate", "0.55", "--on", "lower-bound"], "--on lower-bound"),
        (["--min-win-rate", "0.55", "--on", "corrected"], "needs --labels"),
        (["--sequential", "--min-win-rate", "1"], "leaves nothing to decide"),
    ],
)
def test_decision_usage_errors_exit_2_before_any_call(
    run_cli, judge_server, tmp_path, extra, message
):
    old, new = pair_files(tmp_path, 10, new_better=0.5)
    run = pairwise(run_cli, judge_server, old, new, tmp_path / "run", *extra)
    assert run.exit_code == 2
    assert message in run.stderr
    assert judge_server.requests == []
    assert not (tmp_path / "run").exists()


def test_labels_of_no_case_exit_2(run_cli, judge_server, tmp_path):
    old, new = pair_files(tmp_path, 10, new_better=0.5)
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"id": "zz-1", "label": "new"}])
    run = pairwise(run_cli, judge_server, old, new, tmp_path / "run", "--labels", str(labels))
    assert run.exit_code == 2
    assert "none of the 1 labels match a case id" in run.stderr
    assert judge_server.requests == []


def test_pairwise_reports_sign_test_marks_and_corrected_win_rate(run_cli, judge_server, tmp_path):
    old, new = pair_files(tmp_path, 60, new_better=0.7)
    # Human raters who disagree with the judge on a third of the cases they labelled.
    labels = [
        {"id": f"c{i:03d}", "label": "old" if i % 3 == 0 else ("new" if i < 42 else "old")}
        for i in range(0, 60, 2)
    ]
    label_file = write_jsonl(tmp_path / "labels.jsonl", labels)
    run = pairwise(
        run_cli,
        judge_server,
        old,
        new,
        tmp_path / "run",
        "--labels",
        str(label_file),
        "--min-win-rate",
        "0.5",
        "--on",
        "corrected",
        "--fdr",
    )
    assert run.exit_code in (0, 1), run.stderr
    s = run.summary
    assert 0 <= s["sign_test_p"] <= 1
    assert s["category_calls"]["correction"] == "bh"
    assert s["category_calls"]["reference"] == 0.5
    assert {c["mark"] for c in s["by_category"].values()} <= {
        "above",
        "below",
        "not significant",
        "too few",
    }
    low, high = s["win_rate_corrected_ci"]
    assert low <= s["win_rate_corrected"] <= high
    details = s["corrections"]["win_rate"]
    assert details["n_labeled"] == 30
    assert details["n_unlabeled"] == 30
    assert details["raw"] == pytest.approx(s["win_rate"])
    check = s["gate"]["checks"][0]
    assert check["on"] == "corrected"
    assert check["value"] == pytest.approx(s["win_rate_corrected"])
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## Human-corrected (PPI++)" in report
    assert "sign test p" in report
    assert "Benjamini–Hochberg" in report
    html = (tmp_path / "run" / "report.html").read_text()
    assert "human-corrected" in html


def test_score_reports_corrected_pass_rate_and_mean(run_cli, judge_server, tmp_path):
    rows = [
        {
            "id": f"s{i:03d}",
            "input": question(i),
            "output": GOOD.format(i=i, topic=TOPICS[i % len(TOPICS)]) if i % 4 else EVASIVE,
            "category": TOPICS[i % 3],
        }
        for i in range(40)
    ]
    data = write_jsonl(tmp_path / "cases.jsonl", rows)
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [{"id": f"s{i:03d}", "label": 2 if i % 4 == 0 else 3} for i in range(0, 40, 2)],
    )
    run = score(
        run_cli,
        judge_server,
        data,
        tmp_path / "run",
        "--json",
        "--quiet",
        "--labels",
        str(labels),
        "--min-mean",
        "1",
    )
    assert run.exit_code == 0, run.stderr
    s = run.summary
    for key in ("pass_rate_corrected", "mean_corrected"):
        assert s[key] is not None
        low, high = s[f"{key}_ci"]
        assert low <= s[key] <= high
    assert s["corrections"]["mean"]["n_labeled"] == 20
    assert s["category_calls"]["correction"] == "holm"
    assert s["gate"]["checks"][0]["metric"] == "mean"


def test_report_compares_two_runs_with_paired_tests(run_cli, judge_server, tmp_path):
    rows = [
        {"id": f"s{i:03d}", "input": question(i), "output": GOOD.format(i=i, topic="x")}
        for i in range(30)
    ]
    worse = [r | {"output": EVASIVE if i % 2 else r["output"]} for i, r in enumerate(rows)]
    for name, data in (("a", rows), ("b", worse)):
        path = write_jsonl(tmp_path / f"{name}.jsonl", data)
        run = score(run_cli, judge_server, path, tmp_path / name, "--quiet")
        assert run.exit_code == 0, run.stderr
    compared = run_cli(None, "report", str(tmp_path / "a"), str(tmp_path / "b"), "--json")
    assert compared.exit_code == 0, compared.stderr
    deltas = {d["metric"]: d for d in json.loads(compared.stdout)}
    assert deltas["mean"]["t_p"] < 0.05
    assert deltas["mean"]["wilcoxon_p"] < 0.05
    assert deltas["pass_rate"]["mcnemar_p"] < 0.05
    assert "paired tests of B − A" in compared.stderr
    assert "McNemar (exact)" in compared.stderr
