"""The installed entry points, in real subprocesses (typer's own tutorial-test pattern)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from judgecli.cli.app import COMMANDS
from tests.integration.conftest import DATA, score_args


def run(*args: str, env: dict | None = None, unset: str = "") -> subprocess.CompletedProcess:
    """`python ARGS` with `env` added to the environment and the variable `unset` left out."""
    environ = {k: v for k, v in os.environ.items() if k != unset}
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**environ, **(env or {})},
    )


# What `judge --help` must not import (its speed: typer and rich are all it needs). pydantic
# alone costs ~0.2 s: a command module that imports a model at its top slows every --help.
NOT_FOR_HELP = ("litellm", "scipy", "numpy", "pydantic", "judgecli.store", "judgecli.summary")


def test_help_does_not_import_litellm_or_any_model():
    code = (
        "import sys\n"
        "from judgecli.cli.main import app\n"
        "try:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
        f"print([m for m in {NOT_FOR_HELP!r} if m in sys.modules])\n"
    )
    result = run("-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


# What a plain `judge score` run must not import: the other commands' modules (cli/app.py
# registers only the command a process runs), their core modules, and what only a branch of
# score it did not take needs (--labels, --sequential, --workers, --screen, a --batch run).
NOT_FOR_SCORE = (
    *(f"judgecli.cli.{name}" for name in COMMANDS if name != "score"),
    "judgecli.commands.arena",
    "judgecli.commands.calibrate",
    "judgecli.commands.drift.measure",
    "judgecli.commands.pairwise",
    "judgecli.commands.refine",
    "judgecli.deciding.corrected",
    "judgecli.inputs.labels",
    "judgecli.deciding.sequential",
    "judgecli.running.workers",
    "judgecli.running.batch_record",
    "judgecli.grading.escalate",
)


def test_a_score_run_imports_no_other_command(judge_server, tmp_path):
    args = score_args(judge_server, DATA / "three_cases.jsonl", tmp_path / "run", "--json")
    code = (
        "import sys\n"
        "from judgecli import startup\n"
        "sys.argv = ['judge', *sys.argv[1:]]\n"
        "try:\n    startup.main()\n"
        "except SystemExit as done:\n"
        f"    found = [m for m in {NOT_FOR_SCORE!r} if m in sys.modules]\n"
        "    print('RESULT', done.code, found, file=sys.stderr)\n"
    )
    result = run("-c", code, *args, env={"OPENAI_API_KEY": "sk-test-dummy"})
    assert "RESULT 0 []" in result.stderr, result.stderr


def test_python_dash_m_shows_help_and_version():
    assert "score" in run("-m", "judgecli", "--help").stdout
    version = run("-m", "judgecli", "--version")
    assert version.returncode == 0
    assert version.stdout.startswith("judge ")


def test_a_real_run_in_a_subprocess(judge_server, tmp_path):
    args = score_args(judge_server, DATA / "three_cases.jsonl", tmp_path / "run", "--json")
    result = run("-m", "judgecli", *args, env={"OPENAI_API_KEY": "sk-test-dummy"})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["n_ok"] == 3
    assert len(judge_server.requests) == 3
    assert (tmp_path / "run" / "report.md").exists()


def test_a_keyless_local_server_works_without_openai_api_key(judge_server, tmp_path):
    args = score_args(judge_server, DATA / "three_cases.jsonl", tmp_path / "run", "--json")
    result = run("-m", "judgecli", *args, "--limit", "1", unset="OPENAI_API_KEY")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["n_ok"] == 1
    assert "authorization" in judge_server.requests[0].headers


def test_help_shows_the_defaults_written_into_flag_texts(monkeypatch):
    # Square brackets in a help text are rich markup: "[default: 16]" used to vanish.
    from typer.testing import CliRunner

    from judgecli.cli.main import app

    monkeypatch.setenv("COLUMNS", "250")
    text = CliRunner().invoke(app, ["score", "--help"]).stdout
    for shown in ("(default: 16)", "(default: rubric's, else 0)", "(default: 120)"):
        assert shown in text


# Regression (review 2026-11-23, finding 23): the app was built with add_completion=False.
def test_judge_offers_shell_completion(monkeypatch):
    from typer.testing import CliRunner

    from judgecli.cli.main import app

    monkeypatch.setenv("COLUMNS", "120")
    text = CliRunner().invoke(app, ["--help"]).stdout
    assert "--install-completion" in text
    assert "--show-completion" in text
    # Shell detection looks at the parent processes; the shell is named instead (typer's own
    # tests do the same).
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    script = CliRunner().invoke(app, ["--show-completion", "bash"], prog_name="judge")
    assert script.exit_code == 0
    assert "_JUDGE_COMPLETE=complete_bash" in script.stdout
    assert "complete -o default -F _judge_completion judge" in script.stdout


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        pytest.param("judge sco", "score", id="a-command"),
        pytest.param("judge score d.jsonl --rub", "--rubric", id="an-option"),
        pytest.param("judge rubrics va", "validate", id="a-subcommand"),
    ],
)
def test_the_completion_script_completes_commands_and_options(words, expected):
    # What the installed bash function runs on <TAB>.
    from typer.testing import CliRunner

    from judgecli.cli.main import app

    env = {
        "_JUDGE_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - 1),
    }
    result = CliRunner().invoke(app, [], prog_name="judge", env=env)
    assert result.exit_code == 0
    assert result.stdout.split() == [expected]


def watching_gc(judge_step: str, *, report: str = "") -> str:
    """A program that runs the `judge` entry (its argv after the program's) and prints
    `RESULT <exit code> <whether the collector was on at each call of judge_step>` plus
    `report` (an expression evaluated at exit) on stderr. `judge_step` is a function of a
    judgecli module, as `module.function` (`running.judging.run_cases`).
    """
    module, function = judge_step.rsplit(".", 1)
    tail = f", {report}" if report else ""
    return (
        "import gc, sys\n"
        f"import judgecli.{module} as module\n"
        "from judgecli import startup\n"
        "seen = []\n"
        f"step = module.{function}\n"
        "def watched(*a, **k):\n"
        "    seen.append(gc.isenabled())\n"
        "    return step(*a, **k)\n"
        f"module.{function} = watched\n"
        "sys.argv = ['judge', *sys.argv[1:]]\n"
        "try:\n    startup.main()\n"
        "except SystemExit as done:\n"
        f"    print('RESULT', done.code, seen{tail}, file=sys.stderr)\n"
    )


def test_the_entry_collects_while_judging_and_imports_no_scipy(judge_server, tmp_path):
    # The command line pauses the collector while it loads and resumes it for the judging
    # (gc_pause.py); a long run must never judge with the collector off. And a score run's
    # statistics need no scipy (stats/special.py): its import alone costs ~0.15 s.
    args = score_args(judge_server, DATA / "three_cases.jsonl", tmp_path / "run", "--json")
    report = "gc.get_freeze_count() > 0, any(m.split('.')[0] == 'scipy' for m in sys.modules)"
    code = watching_gc("running.judging.run_cases", report=report)
    result = run("-c", code, *args, env={"OPENAI_API_KEY": "sk-test-dummy"})
    assert "RESULT 0 [True] True False" in result.stderr, result.stderr


def test_with_workers_the_parent_collects_while_they_judge(judge_server, tmp_path):
    # The parent only gathers results (no event loop of its own): it must not stay paused.
    args = score_args(judge_server, DATA / "three_cases.jsonl", tmp_path / "run", "--json")
    code = watching_gc("running.workers.run_workers")
    result = run("-c", code, *args, "--workers", "2", env={"OPENAI_API_KEY": "sk-test-dummy"})
    assert "RESULT 0 [True]" in result.stderr, result.stderr


def test_the_entry_point_builds_the_named_command_with_its_help_and_errors():
    # The process builds only the command it is given (cli.app.app_for); its help
    # and usage errors must read as they do when the whole app is built.
    text = run("-m", "judgecli", "score", "--help", env={"COLUMNS": "200"}).stdout
    assert "score [OPTIONS] {DATASET}" in text
    assert "--min-pass-rate" in text
    assert "--max-cost" in text
    typo = run("-m", "judgecli", "scor", "x.jsonl")
    assert typo.returncode == 2
    assert "Did you mean 'score'" in typo.stderr
    missing = run("-m", "judgecli", "score")
    assert missing.returncode == 2
    assert missing.stderr.startswith("error:")
