"""cli/app.py's `invoked_only`: the app a process builds for the command it was given."""

from __future__ import annotations

import pytest
import typer.main

from judgecli.cli import app
from judgecli.cli.app import invoked_only


def params_of(command: object) -> list[str]:
    return [p.name for p in command.params]  # type: ignore[attr-defined]


def test_a_named_command_is_built_alone_with_every_option_it_has():
    lean = invoked_only(app, ["score", "cases.jsonl", "--rubric", "helpfulness"])
    group = typer.main.get_command(lean)
    whole = typer.main.get_command(app)
    assert list(group.commands) == ["score"]  # type: ignore[attr-defined]
    assert params_of(group.commands["score"]) == params_of(whole.commands["score"])  # type: ignore[attr-defined]
    assert len(app.registered_commands) > 1  # the app itself is left whole


def test_a_named_group_is_built_alone():
    lean = invoked_only(app, ["cache", "stats"])
    assert list(typer.main.get_command(lean).commands) == ["cache"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("args", [[], ["--help"], ["--version"], ["scor", "x.jsonl"]])
def test_anything_but_a_command_name_gets_the_whole_app(args):
    assert invoked_only(app, args) is app
