"""The shared judging flags' declarations (judgecli/settings/flags.py): each is well formed,
where it lands in RunConfig exists, and the command line refuses exactly what RunConfig would."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
from pydantic import ValidationError

from judgecli.rubric import JudgeDefaults
from judgecli.settings.config import RunConfig
from judgecli.settings.flags import CASCADE_FLAGS, SUBSET_FLAGS, flag_fields
from judgecli.settings.judges import ModelSettings

FLAGS = flag_fields()
LANDING = [shared for shared in FLAGS if shared.flag.to is not None]


def ids(shared) -> str:
    return shared.name


def test_every_field_is_a_declared_flag_with_its_own_names():
    long_names = [shared.flag.names[0] for shared in FLAGS]
    assert len(set(long_names)) == len(FLAGS)
    envs = [shared.flag.env for shared in FLAGS if shared.flag.env]
    assert len(set(envs)) == len(envs)
    assert {shared.name for shared in FLAGS} >= CASCADE_FLAGS | SUBSET_FLAGS


@pytest.mark.parametrize("shared", FLAGS, ids=ids)
def test_a_flag_is_spelled_long_first_and_its_variable_is_judge_something(shared):
    declared = shared.flag
    assert declared.names[0].startswith("--")
    assert all(name.startswith("-") for name in declared.names)
    assert declared.env is None or declared.env.startswith("JUDGE_")
    assert declared.help.endswith(".")
    # A flag without a value (a switch) names none; every other one names its value.
    switch = shared.type is bool or shared.type == bool | None
    assert (declared.metavar is None) == switch


@pytest.mark.parametrize("shared", LANDING, ids=ids)
def test_a_flag_lands_in_a_field_runconfig_has(shared):
    assert shared.flag.to in RunConfig.model_fields
    if shared.flag.rubric:
        assert shared.flag.to in JudgeDefaults.model_fields


def run_config(**settings) -> RunConfig:
    return RunConfig(
        command="score", models=[ModelSettings(name="openai/m")], out=Path("x"), **settings
    )


def runconfig_accepts(field: str, value: float) -> bool:
    try:
        run_config(**{field: value})
    except ValidationError:
        return False
    return True


def flag_accepts(shared, value: float) -> bool:
    declared = shared.flag
    return (
        (declared.min is None or value >= declared.min)
        and (declared.max is None or value <= declared.max)
        and (not declared.positive or value > 0)
    )


def value_types(shared) -> set:
    """`int` for `int | None`, as for `int`."""
    return set(get_args(shared.type) or [shared.type])


NUMERIC = [shared for shared in LANDING if value_types(shared) & {int, float}]


@pytest.mark.parametrize("shared", NUMERIC, ids=ids)
def test_the_command_line_refuses_exactly_what_runconfig_refuses(shared):
    # The flag's bounds are checked by typer (one `error:` line, exit 2) before RunConfig
    # sees the value; they must be RunConfig's own, or a value would pass one and fail the
    # other (a traceback rather than a usage error).
    whole = int in value_types(shared)
    for value in (-1, 0, 0.5, 1, 2, 2.5, 3, 1000):
        if whole and value != int(value):
            continue
        assert flag_accepts(shared, value) == runconfig_accepts(shared.flag.to, value), value
