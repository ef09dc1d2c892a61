"""`judge rubrics validate FILE...` checks every file it is given (issue 29, review
2026-11-27 finding 20: it stopped at the first invalid one, and the files after it were
never checked)."""

from __future__ import annotations

from tests.integration.conftest import DATA

BAD = DATA / "bad"


def test_every_file_is_reported_and_any_invalid_one_exits_2(run_cli):
    files = [
        BAD / "good-binary.yaml",
        BAD / "rubric-scale-min-above-max.yaml",
        BAD / "good-needs-reference.yaml",
        BAD / "rubric-unknown-key.yaml",
    ]
    run = run_cli(None, "rubrics", "validate", *map(str, files))

    assert run.exit_code == 2
    ok = run.stdout.splitlines()
    assert [line.split(": ok (")[0] for line in ok] == [str(files[0]), str(files[2])]
    errors = [line for line in run.stderr.splitlines() if line.startswith("error: ")]
    hints = [line for line in run.stderr.splitlines() if line.startswith("hint: ")]
    assert errors == [
        f"error: {files[1]}:3: scale: scale.max must be greater than scale.min",
        f"error: {files[3]}:4: pass_threshold: unknown key",
    ]
    assert len(hints) == 2
    assert hints[1].startswith("hint: did you mean pass_at?")
    assert "Traceback" not in run.stderr


def test_all_valid_files_exit_0(run_cli):
    files = [BAD / "good-binary.yaml", BAD / "good-needs-reference.yaml"]
    run = run_cli(None, "rubrics", "validate", *map(str, files))
    assert run.exit_code == 0, run.stderr
    assert len(run.stdout.splitlines()) == 2
    assert run.stderr == ""
