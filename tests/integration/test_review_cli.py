"""`judge review export` through the CLI, on runs made against the simulator (issue 7)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from judgecli.simulator import SimulatorConfig, SimulatorServer
from tests.integration.conftest import REPO

EXAMPLE = REPO / "datasets" / "example.jsonl"


@pytest.fixture
def scored_run(run_cli, judge_server) -> Path:
    run = run_cli(judge_server, "score", str(EXAMPLE), "--rubric", "helpfulness",
                  "--out", "run", "--quiet")  # fmt: skip
    assert run.exit_code == 0, run.stderr
    return Path("run")


def export(run_cli, *args: str):
    return run_cli(None, "review", "export", *args)


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def results(run: Path) -> dict[str, dict]:
    lines = (run / "results.jsonl").read_text().splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def test_export_samples_and_includes_borderline_with_the_scale_in_the_header(run_cli, scored_run):
    run = export(run_cli, "run", "--sample", "25%", "--include", "borderline,failed",
                 "--seed", "7", "--out", "review.csv")  # fmt: skip
    assert run.exit_code == 0, run.stderr
    assert run.stdout == ""
    raw = Path("review.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    rows = read_csv(Path("review.csv"))
    assert list(rows[0]) == ["id", "category", "input", "output", "reference", "reason",
                             "label (1-4; pass at 3)", "annotator"]  # fmt: skip
    assert sum("sample" in r["reason"] for r in rows) == 6  # 25% of 24
    by_id = results(scored_run)
    borderline = {i for i, r in by_id.items() if r.get("score") in (2.0, 3.0)}
    assert borderline  # the simulator gives some 2s and 3s
    assert borderline <= {r["id"] for r in rows}
    assert len(rows) == len({r["id"] for r in rows})
    assert all(r["label (1-4; pass at 3)"] == "" for r in rows)
    assert all(r["input"] and r["output"] for r in rows)  # joined from run.json's dataset
    recorded = json.loads((scored_run / "run.json").read_text())["review_exports"]
    assert recorded[0]["argv"][:4] == ["judge", "review", "export", "run"]
    assert "--seed" in recorded[0]["argv"]


def test_the_same_seed_exports_the_same_sheet(run_cli, scored_run):
    for out in ("a.csv", "b.csv"):
        assert export(run_cli, "run", "--sample", "8", "--seed", "3", "--out", out).exit_code == 0
    assert Path("a.csv").read_bytes() == Path("b.csv").read_bytes()
    assert len(read_csv(Path("a.csv"))) == 8


def test_the_verdict_column_is_absent_unless_asked_for(run_cli, scored_run):
    assert export(run_cli, "run", "--sample", "5", "--out", "hidden.jsonl").exit_code == 0
    shown = export(run_cli, "run", "--sample", "5", "--out", "shown.jsonl", "--show-verdict")
    assert shown.exit_code == 0, shown.stderr
    hidden_rows = [json.loads(x) for x in Path("hidden.jsonl").read_text().splitlines()]
    shown_rows = [json.loads(x) for x in Path("shown.jsonl").read_text().splitlines()]
    assert len(hidden_rows) == len(shown_rows) == 5
    assert all("verdict" not in r for r in hidden_rows)
    by_id = results(scored_run)
    assert all(r["verdict"] == f"{by_id[r['id']]['score']:g}" for r in shown_rows)


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_round_trip_export_fill_labels_calibrate(run_cli, scored_run, suffix):
    sheet = Path(f"review.{suffix}")
    run = export(run_cli, "run", "--sample", "12", "--seed", "1", "--out", str(sheet),
                 "--show-verdict")  # fmt: skip
    assert run.exit_code == 0, run.stderr
    # A rater who agrees with the judge on every case but the last, which is left blank.
    if suffix == "csv":
        rows = read_csv(sheet)
        header = list(rows[0])
        label = next(h for h in header if h.startswith("label"))
        for row in rows[:-1]:
            row[label], row["annotator"] = row["verdict"], "ann"
        with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=header)
            writer.writeheader()
            writer.writerows(rows)
    else:
        rows = [json.loads(x) for x in sheet.read_text().splitlines()]
        for row in rows[:-1]:
            row["label"] = int(row["verdict"])
        sheet.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cal = run_cli(None, "calibrate", "--results", "run/results.jsonl", "--labels", str(sheet),
                  "--out", "cal", "--json", "--quiet")  # fmt: skip
    assert cal.exit_code == 0, cal.stderr
    assert cal.summary["n_labels"] == 11
    assert cal.summary["accuracy"] == 1.0


def test_pairwise_export_has_both_answers_and_includes_inconsistent_cases(run_cli):
    old, new = REPO / "datasets" / "pairwise-old.jsonl", REPO / "datasets" / "pairwise-new.jsonl"
    # A judge swayed by position: some verdicts change with the order (inconsistent).
    with SimulatorServer(SimulatorConfig(position_bias=0.6, seed=2)) as server:
        made = run_cli(server, "pairwise", str(old), str(new), "--out", "pw", "--quiet")
    assert made.exit_code == 0, made.stderr
    run = export(run_cli, "pw", "--sample", "2", "--include", "inconsistent", "--out", "pw.csv")
    assert run.exit_code == 0, run.stderr
    rows = read_csv(Path("pw.csv"))
    assert "label (old, new or tie)" in rows[0]
    assert {"output_old", "output_new"} <= set(rows[0])
    inconsistent = {i for i, r in results(Path("pw")).items() if r.get("consistent") is False}
    assert inconsistent
    assert inconsistent <= {r["id"] for r in rows}
    assert len(rows) == 2 + len(inconsistent - {r["id"] for r in rows if "sample" in r["reason"]})


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--sample", "ten"], "--sample 'ten'", id="bad-sample"),
        pytest.param(["--include", "hard"], "'hard' is not a group", id="bad-group"),
        pytest.param(["--format", "xlsx"], "--format", id="bad-format"),
        pytest.param(["--cases", "nope.jsonl"], "nope.jsonl", id="missing-cases"),
    ],
)
def test_bad_flags_exit_2_and_write_nothing(run_cli, scored_run, args, message):
    run = export(run_cli, "run", *args, "--out", "bad.csv")
    assert run.exit_code == 2
    assert message in run.stderr
    assert not Path("bad.csv").exists()


def test_a_directory_that_is_not_a_run_exits_2(run_cli, tmp_path):
    run = export(run_cli, str(tmp_path), "--out", "x.csv")
    assert run.exit_code == 2
    assert "no run.json" in run.stderr


def test_an_existing_sheet_is_not_overwritten(run_cli, scored_run):
    Path("done.csv").write_text("a rater's work")
    run = export(run_cli, "run", "--sample", "3", "--out", "done.csv")
    assert run.exit_code == 2
    assert Path("done.csv").read_text() == "a rater's work"
