"""`--help` at 80 columns, the width rich uses in pipes and CI logs: no label is cut, and every
option names its value in words (`MODEL`, `N`, `USD`) rather than a Python type."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from judgecli.cli.main import app
from judgecli.settings.flags import (
    CASCADE_FLAGS,
    CHECKLIST_FLAGS,
    REPEAT_FLAGS,
    SCALE_OUT_FLAGS,
    SUBSET_FLAGS,
    flag_fields,
)


def command_paths() -> list[list[str]]:
    """Every command and group, as the words that reach it (`[]` is `judge` itself)."""
    from typer.main import get_command

    paths: list[list[str]] = []

    def walk(command, path: list[str]) -> None:
        paths.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(get_command(app), [])
    return paths


PYTHON_TYPE = re.compile(r"<(?:bool|str|int|float|path|list\[[a-z]+\]|[a-z]+ range)>")


# Help texts in other owners' files that still cut a word at 80 columns; strict, so the
# mark fails (and must go) once the text is fixed.
# Commands whose help is known to be cut at 80 columns (an expected failure each): none.
KNOWN_CUT: dict[str, str] = {}


def help_params() -> list:
    return [
        pytest.param(
            path,
            id=" ".join(path) or "judge",
            marks=[pytest.mark.xfail(strict=True, reason=KNOWN_CUT[" ".join(path)])]
            if " ".join(path) in KNOWN_CUT
            else [],
        )
        for path in command_paths()
    ]


@pytest.mark.parametrize("path", help_params())
def test_help_fits_80_columns_with_readable_metavars(monkeypatch, path):
    monkeypatch.setenv("COLUMNS", "80")
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "Usage:" in text
    assert "…" not in text, text
    options = [line for line in text.splitlines() if re.match(r"│ (\*\s+)?-", line)]
    assert options  # every command has at least --help: the filter finds the rows
    assert not [line for line in options if PYTHON_TYPE.search(line)], text
    assert "[[" not in text  # an optional argument's metavar already in brackets
    assert max(len(line) for line in text.splitlines()) <= 80


def test_every_command_is_reached():
    # The walk above must see the nested groups, or the test would pass on too little.
    names = {" ".join(p) for p in command_paths()}
    assert {"score", "pairwise", "rubrics show", "cache stats", "review export"} <= names


def test_the_commands_list_joins_a_docstrings_line_breaks(monkeypatch):
    # Regression (review 2026-11-23, finding 13): `judge rubrics --help` broke "show" mid-line.
    monkeypatch.setenv("COLUMNS", "200")
    text = CliRunner().invoke(app, ["rubrics", "--help"]).stdout
    show = next(line for line in text.splitlines() if line.startswith("│ show "))
    assert "the messages the judge would get" in show


def test_flags_show_no_type(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    text = CliRunner().invoke(app, ["score", "--help"]).stdout
    line = next(line for line in text.splitlines() if "--quiet" in line)
    assert re.search(r"--quiet\s+-q\s+No progress", line), line


# The flags each judging command leaves out of the shared ones.
JUDGING = {
    "score": frozenset(),
    "pairwise": CHECKLIST_FLAGS,
    "calibrate": CASCADE_FLAGS | SUBSET_FLAGS | SCALE_OUT_FLAGS | CHECKLIST_FLAGS,
    "refine": CASCADE_FLAGS | SCALE_OUT_FLAGS | REPEAT_FLAGS | CHECKLIST_FLAGS,
}


@pytest.mark.parametrize("command", JUDGING)
def test_a_judging_commands_help_shows_every_shared_flag_with_its_variable(monkeypatch, command):
    monkeypatch.setenv("COLUMNS", "250")
    text = CliRunner().invoke(app, [command, "--help"]).stdout
    for shared in flag_fields():
        long = shared.flag.names[0].split("/")[0]
        shown = re.search(rf"│ {long}\s", text) is not None
        # A hidden flag is judge's own (judge merge sets --conclude-only), never listed.
        offered = shared.name not in JUDGING[command] and not shared.flag.hidden
        assert shown == offered, long
        if shown and shared.flag.env:
            assert f"env var: {shared.flag.env}" in text, long
