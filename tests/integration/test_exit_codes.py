"""Bad input exits 2 with one line naming file:line and the fix, calls nothing and writes
nothing; a crash exits 3, never 1 (CI reads 1 as "the gate failed")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

GOOD_LINE = json.dumps({"id": "a", "input": "q", "output": "x"}) + "\n"


@pytest.mark.parametrize(
    ("dataset", "rubric", "extra", "message"),
    [
        pytest.param(
            GOOD_LINE + '{"id": "b", "input": \n',
            "helpfulness",
            [],
            "d.jsonl:2: invalid JSON",
            id="malformed-jsonl",
        ),
        pytest.param(
            GOOD_LINE + '{"id": "b", "input": "q"}\n',
            "helpfulness",
            [],
            'd.jsonl:2: missing required field "output"',
            id="missing-field",
        ),
        pytest.param(
            GOOD_LINE + GOOD_LINE,
            "helpfulness",
            [],
            "d.jsonl:2: duplicate id 'a'",
            id="duplicate-id",
        ),
        pytest.param("", "helpfulness", [], "d.jsonl: no cases", id="empty-file"),
        pytest.param(
            GOOD_LINE, "no-such-rubric", [], "no rubric file or library rubric", id="unknown-rubric"
        ),
        pytest.param(GOOD_LINE, "bad.yaml", [], "bad.yaml:3: kind:", id="bad-rubric"),
        pytest.param(
            GOOD_LINE,
            "helpfulness",
            ["--price", "cheap"],
            "--price 'cheap' is not IN,OUT",
            id="bad-price",
        ),
        pytest.param(
            GOOD_LINE,
            "helpfulness",
            ["--field", "output"],
            "is not NAME=COLUMN",
            id="bad-field-map",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line_and_calls_nothing(
    run_cli, judge_server, dataset, rubric, extra, message
):
    Path("d.jsonl").write_text(dataset)
    Path("bad.yaml").write_text("name: bad\nversion: 1\nkind: ranking\nprompt: {user: x}\n")
    run = run_cli(judge_server, "score", "d.jsonl", "--rubric", rubric, "--out", "run", *extra)
    assert run.exit_code == 2, run.stderr
    assert message in run.stderr
    assert run.stderr.startswith("error: ")
    assert "Traceback" not in run.stderr
    assert run.stdout == ""
    assert judge_server.requests == []
    assert not Path("run").exists()


def test_no_model_exits_2_with_a_hint(run_cli, judge_server):
    Path("d.jsonl").write_text(GOOD_LINE)
    run = run_cli(judge_server, "score", "d.jsonl", "--rubric", "helpfulness", model=None)
    assert run.exit_code == 2
    assert "error: no judge model" in run.stderr
    assert "hint: pass --model" in run.stderr


def test_unknown_flag_exits_2(run_cli):
    run = run_cli(None, "score", "d.jsonl", "--rubric", "helpfulness", "--colour", "blue")
    assert run.exit_code == 2
    assert "--colour" in run.stderr


def test_missing_dataset_file_exits_2(run_cli, judge_server):
    run = run_cli(judge_server, "score", "nope.jsonl", "--rubric", "helpfulness")
    assert run.exit_code == 2
    assert "nope.jsonl: no such file" in run.stderr


def test_an_existing_run_directory_is_not_overwritten(run_cli, judge_server):
    Path("d.jsonl").write_text(GOOD_LINE)
    first = run_cli(judge_server, "score", "d.jsonl", "--rubric", "helpfulness", "--out", "run")
    assert first.exit_code == 0
    again = run_cli(judge_server, "score", "d.jsonl", "--rubric", "helpfulness", "--out", "run")
    assert again.exit_code == 2
    assert "already holds a run" in again.stderr


def test_pairwise_rubric_on_score_exits_2(run_cli, judge_server):
    Path("d.jsonl").write_text(GOOD_LINE)
    Path("pw.yaml").write_text(
        "name: pw\nkind: pairwise\nprompt: {user: '{input} {output_a} {output_b}'}\n"
    )
    run = run_cli(judge_server, "score", "d.jsonl", "--rubric", "pw.yaml")
    assert run.exit_code == 2
    assert "is pairwise" in run.stderr


def test_an_unexpected_crash_exits_3_with_a_traceback(run_cli, judge_server, monkeypatch):
    # The one test that patches an internal: a crash cannot be provoked from outside.
    from judgecli.commands import score

    def explode(*args, **kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(score, "score_job", explode)
    Path("d.jsonl").write_text(GOOD_LINE)
    run = run_cli(judge_server, "score", "d.jsonl", "--rubric", "helpfulness")
    assert run.exit_code == 3
    assert "kaboom" in run.stderr
    assert "unexpected crash" in run.stderr


def test_rubrics_validate_names_the_line_and_exits_2(run_cli):
    Path("r.yaml").write_text(
        "name: r\nkind: pointwise\nscale: {min: 1, max: 4}\nbogus: 1\nprompt: {user: x}\n"
    )
    run = run_cli(None, "rubrics", "validate", "r.yaml")
    assert run.exit_code == 2
    assert "r.yaml:4: bogus: unknown key" in run.stderr


def test_rubrics_validate_accepts_the_bundled_library(run_cli):
    from judgecli.inputs.rubric_library import library

    run = run_cli(None, "rubrics", "validate", *map(str, library()))
    assert run.exit_code == 0, run.stderr
    assert ": ok (" in run.stdout


def test_rubrics_show_prints_the_yaml_on_stdout(run_cli):
    run = run_cli(None, "rubrics", "show", "helpfulness")
    assert run.exit_code == 0
    assert run.stdout.startswith("# How well an answer")
