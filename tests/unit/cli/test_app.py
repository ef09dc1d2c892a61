"""cli/app.py's `app_for` and `invoked_only`: the app a process builds for the command it was
given."""

from __future__ import annotations

import pytest
import typer.main

from judgecli.cli.app import COMMANDS, app_for, invoked_only, registered_name
from judgecli.cli.main import app


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


@pytest.mark.parametrize("args", [[], ["--help"], ["--version"], ["scor", "x.jsonl"]])
def test_app_for_anything_but_a_command_name_is_the_whole_app(args):
    assert app_for(args) is app


def test_app_for_a_command_is_the_app_with_it_alone():
    lean = app_for(["rubrics", "list"])
    assert [registered_name(g) for g in lean.registered_groups] == ["rubrics"]
    assert lean.registered_commands == []


def test_every_command_is_registered_once_in_the_order_help_lists_them():
    # typer lists plain commands before groups; COMMANDS names both in that order.
    registered = [*app.registered_commands, *app.registered_groups]
    assert [registered_name(r) for r in registered] == list(COMMANDS)
