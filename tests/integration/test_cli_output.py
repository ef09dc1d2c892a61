"""What the CLI prints where: reports on stdout (JSON alone with --json), progress and
warnings on stderr, plain progress lines in a log; and the run-directory flags around it
(--force, resume's progress), through the real CLI against the simulator."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import REPO

EXAMPLE = REPO / "datasets" / "example.jsonl"
PROGRESS = re.compile(
    r"^judging: (\d+)/(\d+) \(\d+%\), [\d.e+-]+/s, (ETA \S+|in \S+), "
    r"\d+ failed, \$\d+\.\d{4}$",
    re.MULTILINE,
)


def score(run_cli, server, *extra, out="run"):
    return run_cli(server, "score", str(EXAMPLE), "--rubric", "helpfulness", "--out", out, *extra)


def test_json_mode_keeps_stdout_to_the_json_and_moves_the_tables_to_stderr(run_cli, judge_server):
    run = score(run_cli, judge_server, "--limit", "3", "--json")
    assert run.exit_code == 0, run.stderr
    assert json.loads(run.stdout)["n_cases"] == 3  # nothing but the JSON
    assert "mean score" in run.stderr
    assert "run directory: run" in run.stderr


# Regression (review 2026-11-23, finding 11): a non-TTY stderr got no progress at all.
def test_a_log_gets_plain_progress_lines_at_the_chosen_interval(run_cli, judge_server):
    run = score(run_cli, judge_server, "--limit", "6", "--progress-every", "0.001")
    assert run.exit_code == 0, run.stderr
    lines = PROGRESS.findall(run.stderr)
    assert lines, run.stderr
    assert lines[-1][:2] == ("6", "6")
    assert lines[-1][2].startswith("in ")
    assert "judging:" not in run.stdout


def test_quiet_prints_no_progress(run_cli, judge_server):
    run = score(run_cli, judge_server, "--limit", "2", "--quiet", "--progress-every", "0.001")
    assert run.exit_code == 0, run.stderr
    assert "judging:" not in run.stderr


# Regression (review 2026-11-23, finding 5): the progress of `judge resume` counted from 0,
# so it never reached its total.
def test_resume_progress_starts_from_the_cases_already_done(run_cli, judge_server):
    # (Not --quiet: the resume runs the same command line.)
    capped = score(
        run_cli, judge_server, "--price", "1,2", "--max-cost", "0.004", "--concurrency", "1"
    )
    assert capped.exit_code == 3
    done = len(Path("run/results.jsonl").read_text().splitlines())
    assert 0 < done < 24
    resumed = run_cli(None, "resume", "run", "--max-cost", "1")
    assert resumed.exit_code == 0, resumed.stderr
    lines = PROGRESS.findall(resumed.stderr)
    assert lines[-1][:2] == ("24", "24"), resumed.stderr  # not 24 - done


def test_report_rubrics_list_and_cache_stats_print_on_stdout(run_cli, judge_server):
    score(run_cli, judge_server, "--limit", "2", "--quiet")
    report = run_cli(None, "report", "run")
    assert report.exit_code == 0
    assert "mean score" in report.stdout
    assert "mean score" not in report.stderr
    assert "helpfulness" in run_cli(None, "rubrics", "list").stdout
    assert "2 replies" in run_cli(None, "cache", "stats").stdout


# Regression (review 2026-11-23, finding 21): `--out` on an existing run had no way over.
def test_force_starts_over_in_an_existing_run_directory(run_cli, judge_server):
    assert score(run_cli, judge_server, "--limit", "5", "--quiet").exit_code == 0
    Path("run/notes.txt").write_text("mine")
    again = score(run_cli, judge_server, "--limit", "2", "--quiet", "--force", "--json")
    assert again.exit_code == 0, again.stderr
    assert again.summary["n_cases"] == 2
    assert len(Path("run/results.jsonl").read_text().splitlines()) == 2  # no old line mixed in
    assert Path("run/notes.txt").read_text() == "mine"  # not a run file: left alone


def test_without_force_an_existing_run_is_refused_with_the_hint(run_cli, judge_server):
    assert score(run_cli, judge_server, "--limit", "2", "--quiet").exit_code == 0
    again = score(run_cli, judge_server, "--limit", "2", "--quiet")
    assert again.exit_code == 2
    assert "already holds a run" in again.stderr


def test_force_refuses_a_folder_that_is_not_a_run(run_cli, judge_server):
    Path("run").mkdir()
    Path("run/results.jsonl").write_text("precious\n")
    run = score(run_cli, judge_server, "--limit", "2", "--force")
    assert run.exit_code == 2
    assert "--force: run is not a judge run directory (no run.json)" in run.stderr
    assert Path("run/results.jsonl").read_text() == "precious\n"
    assert judge_server.requests == []


def test_bad_input_with_force_keeps_the_old_run(run_cli, judge_server, write):
    assert score(run_cli, judge_server, "--limit", "2", "--quiet").exit_code == 0
    write("bad.jsonl", '{"id": "a", "input": "q"}\n')
    run = run_cli(
        judge_server, "score", "bad.jsonl", "--rubric", "helpfulness", "--out", "run", "--force"
    )
    assert run.exit_code == 2
    assert len(Path("run/results.jsonl").read_text().splitlines()) == 2


@pytest.mark.parametrize(
    ("sample", "expected"),
    [pytest.param("25%", 6, id="share"), pytest.param("5", 5, id="count")],
)
def test_sample_takes_a_count_or_a_share(run_cli, judge_server, sample, expected):
    # Regression (review 2026-11-23, finding 21): "--sample 10%" was "not a valid integer".
    run = score(run_cli, judge_server, "--sample", sample, "--quiet", "--json")
    assert run.exit_code == 0, run.stderr
    assert run.summary["n_cases"] == expected
    argv = json.loads(Path("run/run.json").read_text())["argv"]
    assert argv[argv.index("--sample") + 1] == sample  # a resume draws the same sample


# Regression (review 2026-11-23, finding 21): a typo got no suggestion.
def test_a_misspelt_rubric_name_gets_the_nearest_names(run_cli, judge_server):
    run = score(run_cli, judge_server, "--rubric", "helpfulnes")
    assert run.exit_code == 2
    assert "hint: did you mean 'helpfulness'" in run.stderr
    shown = run_cli(None, "rubrics", "show", "helpfulnes")
    assert "did you mean 'helpfulness'" in shown.stderr


# Regression (review 2026-11-23, finding 21): JSONL given to `judge gate` printed
# "not a judge summary.json (: Invalid JSON...".
def test_gate_on_a_jsonl_file_says_what_it_is(run_cli):
    Path("ok3.jsonl").write_text('{"id": 1}\n{"id": 2}\n')
    run = run_cli(None, "gate", "ok3.jsonl", "--min-win-rate", "0.5")
    assert run.exit_code == 2
    assert "ok3.jsonl: not a judge summary.json: holds more than one JSON value" in run.stderr
    assert "(:" not in run.stderr


# The gate of a run the judge could not grade is not evaluated: exit 3, never 0 or 1.
@pytest.mark.parametrize("threshold", ["0.1", "0.9"])
def test_gate_on_an_incomplete_summary_exits_3_whatever_the_threshold(run_cli, threshold):
    from tests.unit.cli.test_render import INCOMPLETE, summary

    Path("run").mkdir()
    Path("run/summary.json").write_text(
        summary(incomplete=INCOMPLETE).model_dump_json(exclude_none=True)
    )
    run = run_cli(None, "gate", "run/summary.json", "--min-win-rate", threshold)
    assert run.exit_code == 3, run.stderr
    assert run.stderr.splitlines() == [
        f"error: run/summary.json: {INCOMPLETE}",
        "hint: continue with: judge resume run --retry-failed",
    ]
    assert run.stdout == ""


# A reader that leaves early (`judge report RUN | head`) must not change the exit code:
# click answers a closed pipe with exit 1, which CI reads as a failed gate.
def closed_pipe_exit(args: list[str], cwd: Path) -> tuple[int, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "judgecli", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ | {"COLUMNS": "80"},
    )
    assert process.stdout is not None
    # Closed before judge (which takes a good part of a second to start) writes a byte:
    # every write meets a closed pipe, as the lines after `head`'s last do.
    process.stdout.close()
    _, stderr = process.communicate(timeout=120)
    return process.returncode, stderr.decode()


@pytest.mark.parametrize(("threshold", "code"), [("0.5", 0), ("0.99", 1)])
def test_a_reader_that_leaves_early_does_not_change_the_exit_code(
    run_cli, judge_server, tmp_path, threshold, code
):
    run = run_cli(
        judge_server,
        "pairwise",
        str(REPO / "datasets" / "old.jsonl"),
        str(REPO / "datasets" / "new.jsonl"),
        "--out",
        "run",
        "--quiet",
    )
    assert run.exit_code == 0, run.stderr
    for args in (["report", "run"], ["gate", "run/summary.json", "--min-win-rate", threshold]):
        exit_code, stderr = closed_pipe_exit(args, tmp_path)
        assert exit_code == (code if args[0] == "gate" else 0), stderr
        assert "Traceback" not in stderr
        assert "BrokenPipe" not in stderr
