"""`judge review plan` and labels that carry inclusion probabilities, through the CLI on
runs made against the simulator (issue 33): plan → label files → --labels weighs them and
the summary records the design; calibrate reads the label files directly.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from judgecli.result import OUTCOME, Winner
from judgecli.stats.active import active_mean
from tests.integration.conftest import REPO

OLD = REPO / "datasets" / "pairwise-old.jsonl"
NEW = REPO / "datasets" / "pairwise-new.jsonl"
PANEL = ("--model", "openai/sim", "--model", "openai/sim2")


def pairwise(run_cli, server, out: str, *extra: str):
    return run_cli(
        server, "pairwise", str(OLD), str(NEW), *PANEL, "--out", out, "--quiet", *extra, model=None
    )


@pytest.fixture
def pairwise_run(run_cli, judge_server) -> Path:
    done = pairwise(run_cli, judge_server, "run")
    assert done.exit_code == 0, done.stderr
    return Path("run")


def plan(run_cli, *args: str):
    return run_cli(None, "review", "plan", *args)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_plan_lists_cases_with_their_probabilities_and_why(run_cli, pairwise_run):
    done = plan(run_cli, "run", "--budget", "6", "--strategy", "disagreement", "--out", "p.jsonl")
    assert done.exit_code == 0, done.stderr
    lines = read_jsonl(Path("p.jsonl"))
    assert lines
    assert all(0 < line["inclusion_probability"] <= 1 for line in lines)
    assert {line["strategy"] for line in lines} == {"disagreement"}
    assert {line["budget"] for line in lines} == {6}
    assert all(line["why"] for line in lines)
    assert "wrote p.jsonl" in done.stderr
    again = plan(run_cli, "run", "--budget", "6", "--strategy", "disagreement")
    assert [json.loads(x) for x in again.stdout.splitlines()] == lines  # stdout, same seed


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--budget", "0"), "--budget 0"),
        (("--budget", "3", "--strategy", "most"), "--strategy 'most'"),
    ],
)
def test_bad_usage_exits_2_and_writes_nothing(run_cli, pairwise_run, args, message):
    done = plan(run_cli, "run", *args, "--out", "p.jsonl")
    assert done.exit_code == 2
    assert message in done.stderr
    assert "hint:" in done.stderr
    assert not Path("p.jsonl").exists()


def test_a_bad_results_line_exits_2_naming_file_and_line(run_cli, pairwise_run):
    results = pairwise_run / "results.jsonl"
    count = len(results.read_text().splitlines())
    with results.open("a") as handle:
        handle.write('{"id": "broken"}\n{"id": "after"}\n')
    done = plan(run_cli, "run", "--budget", "3", "--out", "p.jsonl")
    assert done.exit_code == 2
    assert f"results.jsonl:{count + 1}: not a judge results line" in done.stderr
    assert not Path("p.jsonl").exists()


def test_an_existing_plan_is_never_replaced(run_cli, pairwise_run):
    Path("p.jsonl").write_text("mine\n")
    done = plan(run_cli, "run", "--budget", "3", "--out", "p.jsonl")
    assert done.exit_code == 2
    assert "already exists" in done.stderr
    assert Path("p.jsonl").read_text() == "mine\n"


def test_labels_of_a_plan_are_weighed_and_the_design_recorded(run_cli, judge_server, pairwise_run):
    done = plan(run_cli, "run", "--budget", "8", "--strategy", "uncertainty", "--out", "p.jsonl")
    assert done.exit_code == 0, done.stderr
    planned = read_jsonl(Path("p.jsonl"))
    labels = pairwise_run / "labels"
    labels.mkdir()
    rows = [
        {
            "id": line["id"],
            "label": ["old", "new", "tie"][k % 3],
            "rater": "ana",
            "at": "2026-11-27T12:00:00Z",
            "inclusion_probability": line["inclusion_probability"],
            "strategy": line["strategy"],
            "budget": line["budget"],
        }
        for k, line in enumerate(planned)
    ]
    text = "".join(json.dumps(row) + "\n" for row in rows)
    (labels / "ana.jsonl").write_text(text + '{"id": "torn', encoding="utf-8")

    corrected = pairwise(run_cli, judge_server, "run2", "--labels", "run")
    assert corrected.exit_code == 0, corrected.stderr
    summary = json.loads(Path("run2/summary.json").read_text())
    design = summary["corrections"]["design"]
    assert (design["strategy"], design["budget"], design["weighted"]) == ("uncertainty", 8, True)
    assert design["n_weighted"] == len(rows)
    assert design["n_unplanned"] == 0

    judged = [r for r in read_jsonl(Path("run2/results.jsonl")) if r.get("winner")]
    index = {r["id"]: i for i, r in enumerate(judged)}
    expected = active_mean(
        [OUTCOME[Winner(r["winner"])] for r in judged],
        {index[r["id"]]: (OUTCOME[Winner(r["label"])], r["inclusion_probability"]) for r in rows},
    )
    assert summary["win_rate_corrected"] == pytest.approx(expected.estimate)
    assert "active inference" in Path("run2/report.md").read_text()


def test_calibrate_reads_the_label_files_of_a_run(run_cli, pairwise_run):
    labels = pairwise_run / "labels"
    labels.mkdir()
    ids = [r["id"] for r in read_jsonl(pairwise_run / "results.jsonl")][:4]
    rows = [{"id": i, "label": "new", "rater": "bo", "at": "2026-11-27T12:00:00Z"} for i in ids]
    rows.append({"id": ids[0], "label": None, "rater": "bo", "at": "2026-11-27T12:01:00Z"})
    (labels / "bo.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = run_cli(
        None, "calibrate", "--results", "run/results.jsonl", "--labels", "run", "--out", "cal"
    )
    assert done.exit_code == 0, done.stderr
    assert "on 3 labels" in done.stderr + done.stdout


def test_a_sheet_exported_from_a_plan_keeps_the_probabilities_of_its_labels(run_cli, judge_server):
    dataset = str(REPO / "datasets" / "helpfulness.jsonl")
    scored = run_cli(judge_server, "score", dataset, "--rubric", "helpfulness", "--out", "run")
    assert scored.exit_code == 0, scored.stderr
    done = plan(run_cli, "run", "--budget", "6", "--strategy", "uniform", "--out", "p.jsonl")
    assert done.exit_code == 0, done.stderr
    exported = run_cli(None, "review", "export", "run", "--plan", "p.jsonl", "--out", "s.csv")
    assert exported.exit_code == 0, exported.stderr
    with Path("s.csv").open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    planned = read_jsonl(Path("p.jsonl"))
    assert [r["id"] for r in rows] == [p["id"] for p in planned]
    assert [float(r["inclusion_probability"]) for r in rows] == [
        p["inclusion_probability"] for p in planned
    ]
    label = next(k for k in rows[0] if k.startswith("label"))
    for k, row in enumerate(rows):
        row[label] = str(1 + k % 4)
    with Path("done.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    corrected = run_cli(
        judge_server,
        "score",
        dataset,
        "--rubric",
        "helpfulness",
        "--out",
        "run2",
        "--labels",
        "done.csv",
    )
    assert corrected.exit_code == 0, corrected.stderr
    design = json.loads(Path("run2/summary.json").read_text())["corrections"]["design"]
    assert (design["strategy"], design["budget"], design["n_weighted"]) == ("uniform", 6, 6)


def test_a_plan_and_a_sample_together_are_refused(run_cli, pairwise_run):
    assert plan(run_cli, "run", "--budget", "3", "--out", "p.jsonl").exit_code == 0
    done = run_cli(
        None, "review", "export", "run", "--plan", "p.jsonl", "--sample", "2", "--out", "s.csv"
    )
    assert done.exit_code == 2
    assert "--plan picks" in done.stderr
    assert not Path("s.csv").exists()
