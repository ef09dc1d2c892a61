"""CSV, Parquet and hf:// datasets through the real CLI against the simulator (issue 31):
the same cases in another format give the same run, to the byte of summary.json but for
its timings and the dataset's name, and the judge is sent the same requests. A missing
optional extra is an exit 2 naming what to install, before anything is called or written.
"""

from __future__ import annotations

import csv
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import DATA
from tests.integration.conftest import REPO

DEMO = REPO / "datasets"
HUB = DATA / "hub"
TIMINGS = ("latency_p50_s", "latency_p95_s")


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    """`rows` as a CSV sheet: a list or an object in its cell as JSON, as a user writes it."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {k: json.dumps(v) if isinstance(v, list | dict) else v for k, v in row.items()}
            )
    return path


def write_parquet(path: Path, rows: list[dict[str, Any]]) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def comparable(run_dir: str, *names: str) -> str:
    """summary.json without its timings, each dataset name in it replaced by DATASET."""
    text = (Path(run_dir) / "summary.json").read_text(encoding="utf-8")
    for name in names:
        text = text.replace(json.dumps(name)[1:-1], "DATASET")
    summary = json.loads(text)
    for key in TIMINGS:
        summary["usage"].pop(key, None)
    return json.dumps(summary, indent=2, ensure_ascii=False)


def requests_of(server) -> list[str]:
    """What the judge was sent, in a fixed order (calls finish in any order)."""
    return sorted(json.dumps(r.body["messages"]) for r in server.requests)


def judged(run_cli, server, *argv: str, out: str) -> list[str]:
    """Run a judging command (its replies not cached); the requests the judge got."""
    server.reset()
    run = run_cli(server, *argv, "--out", out, "--no-cache", "--quiet")
    assert run.exit_code == 0, run.stderr
    return requests_of(server)


@pytest.fixture
def hub(tmp_path, monkeypatch) -> None:
    """The local stand-in of `hf://judge-tests/cases` in the working directory; the Hub
    switched off and the datasets library's cache in the test's directory."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    shutil.copytree(HUB / "judge-tests", tmp_path / "judge-tests")


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_score_of_a_csv_or_parquet_file_is_the_run_of_the_same_jsonl(
    run_cli, judge_server, tmp_path, suffix
):
    rows = rows_of(DEMO / "example.jsonl")
    # A context list, an empty answer, line breaks and quotes: what a table must carry.
    rows[0] |= {"context": ["passage one", 'passage "two"'], "output": "line one\nline two"}
    rows[1]["output"] = ""
    jsonl = tmp_path / "cases.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    other = (write_csv if suffix == "csv" else write_parquet)(tmp_path / f"cases.{suffix}", rows)
    argv = ("score", "--rubric", "helpfulness")
    sent = judged(run_cli, judge_server, argv[0], str(jsonl), *argv[1:], out="a")
    assert judged(run_cli, judge_server, argv[0], str(other), *argv[1:], out="b") == sent
    assert len(sent) == len(rows)
    assert comparable("a", str(jsonl)) == comparable("b", str(other))


def test_score_of_a_hub_split_is_the_run_of_its_file(run_cli, judge_server, hub):
    split = "judge-tests/cases/validation.jsonl"
    sent = judged(run_cli, judge_server, "score", split, "--rubric", "helpfulness", out="a")
    name = "hf://judge-tests/cases:validation"
    assert judged(run_cli, judge_server, "score", name, "--rubric", "helpfulness", out="b") == sent
    assert len(sent) == 4
    assert comparable("a", split) == comparable("b", name)
    # run.json keeps the name whole, for `judge resume` and `judge drift --anchor`.
    assert json.loads(Path("b/run.json").read_text())["argv"][2] == name


def test_pairwise_of_a_parquet_old_and_a_shuffled_csv_new_is_the_run_of_the_jsonl_pair(
    run_cli, judge_server, tmp_path
):
    old, new = rows_of(DEMO / "old.jsonl"), rows_of(DEMO / "new.jsonl")
    random.Random(7).shuffle(new)
    write_parquet(tmp_path / "old.parquet", old)
    write_csv(tmp_path / "new.csv", new)
    sent = judged(
        run_cli, judge_server, "pairwise", str(DEMO / "old.jsonl"), str(DEMO / "new.jsonl"), out="a"
    )
    mixed = judged(run_cli, judge_server, "pairwise", "old.parquet", "new.csv", out="b")
    assert mixed == sent
    assert len(sent) == 2 * len(old)  # both orders
    assert comparable("a") == comparable("b")


def test_calibrate_of_a_csv_labels_sheet_with_the_case_fields_is_the_run_of_the_jsonl(
    run_cli, judge_server, tmp_path
):
    labels = DEMO / "labels.jsonl"
    write_csv(tmp_path / "labels.csv", rows_of(labels))
    argv = ("--rubric", "helpfulness")
    sent = judged(run_cli, judge_server, "calibrate", str(labels), *argv, out="a")
    assert judged(run_cli, judge_server, "calibrate", "labels.csv", *argv, out="b") == sent
    summary = json.loads(Path("b/summary.json").read_text())
    assert summary["n_labels"] == len(rows_of(labels))
    assert comparable("a", str(labels)) == comparable("b", "labels.csv")


def test_arena_of_jsonl_csv_and_parquet_systems_is_the_run_of_three_jsonl(
    run_cli, judge_server, tmp_path
):
    systems = {name: rows_of(DEMO / f"{name}.jsonl")[:8] for name in ("old", "new", "regressed")}
    for name, rows in systems.items():
        (tmp_path / f"{name}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
        )
    write_csv(tmp_path / "new.csv", systems["new"][::-1])
    write_parquet(tmp_path / "regressed.parquet", systems["regressed"])
    sent = judged(
        run_cli, judge_server, "arena", "old.jsonl", "new.jsonl", "regressed.jsonl", out="a"
    )
    mixed = judged(
        run_cli, judge_server, "arena", "old.jsonl", "new.csv", "regressed.parquet", out="b"
    )
    assert mixed == sent
    assert comparable("a", "new.jsonl", "regressed.jsonl") == comparable(
        "b", "new.csv", "regressed.parquet"
    )


def test_drift_anchor_and_review_export_read_a_csv_run_s_cases(run_cli, judge_server, tmp_path):
    write_csv(tmp_path / "cases.csv", rows_of(DEMO / "example.jsonl")[:6])
    judged(run_cli, judge_server, "score", "cases.csv", "--rubric", "helpfulness", out="a")
    judge_server.reset()
    drift = run_cli(
        judge_server, "drift", "a", "--anchor", "cases.csv", "--out", "d", "--quiet", model=None
    )
    assert drift.exit_code == 0, drift.stderr
    assert len(judge_server.requests) == 6
    export = run_cli(None, "review", "export", "a", "--sample", "3", "--out", "sheet.csv")
    assert export.exit_code == 0, export.stderr
    with Path("sheet.csv").open(encoding="utf-8-sig") as handle:
        sheet = list(csv.DictReader(handle))
    cases = {r["id"]: r for r in rows_of(DEMO / "example.jsonl")}
    assert [r["output"] for r in sheet] == [cases[r["id"]]["output"] for r in sheet]


def files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("module", "dataset", "says", "extra"),
    [
        pytest.param(
            "pyarrow",
            "cases.parquet",
            "reading cases.parquet needs pyarrow",
            "parquet",
            id="parquet",
        ),
        pytest.param(
            "datasets",
            "hf://judge-tests/cases",
            "reading hf://judge-tests/cases:train needs the datasets library",
            "hf",
            id="hf",
        ),
    ],
)
def test_a_missing_extra_exits_2_naming_it_before_anything_is_called(
    judge_server, tmp_path, module, dataset, says, extra
):
    # Issue 31: the extra is made missing in a process of its own (a None in sys.modules
    # makes its import fail), as on a machine without it.
    write_parquet(tmp_path / "cases.parquet", rows_of(DEMO / "example.jsonl")[:2])
    before = files_under(tmp_path)
    code = (
        f"import sys; sys.modules[{module!r}] = None; sys.argv[0] = 'judge'\n"
        "from judgecli.startup import main\nmain()"
    )
    argv = ["score", dataset, "--rubric", "helpfulness", "--model", "openai/sim"]
    argv += ["--api-base", f"{judge_server.url}/v1", "--out", "run"]
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "HF_HOME": str(tmp_path / "hf")}
    done = subprocess.run(
        [sys.executable, "-c", code, *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [f"error: {says}", f"hint: pip install 'judgecli[{extra}]'"]
    assert done.stdout == ""
    assert judge_server.requests == []
    assert files_under(tmp_path) == before
