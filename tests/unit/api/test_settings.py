"""Keyword settings as the command line's flags (issue 31): the same JudgeFlags and
GateThresholds, the same bounds, and Python's own errors for what is no setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgecli.api.jobs import offered
from judgecli.api.settings import COMMAND_LINE_ONLY, read_settings
from judgecli.errors import ConfigError
from judgecli.settings.flags import JudgeFlags, flag_fields
from judgecli.settings.gate_flags import PAIRWISE, GateThresholds, thresholds_of


def read(**given):
    return read_settings(
        given, caller="score_dataset", flags=offered(), thresholds=thresholds_of(PAIRWISE)
    )


def test_every_judging_flag_is_a_setting_or_the_command_lines_own():
    # A flag added to settings/flags.py reaches the API unless it is declared the CLI's own.
    names = {shared.name for shared in offered()}
    assert names | COMMAND_LINE_ONLY == {shared.name for shared in flag_fields()}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param({"concurrency": 8}, JudgeFlags(concurrency=8), id="int"),
        pytest.param({"temperature": 1}, JudgeFlags(temperature=1.0), id="int-as-float"),
        pytest.param({"model": "openai/a"}, JudgeFlags(model=["openai/a"]), id="one-model"),
        pytest.param(
            {"model": ("openai/a", "openai/b")},
            JudgeFlags(model=["openai/a", "openai/b"]),
            id="panel",
        ),
        pytest.param(
            {"field": {"output": "answer", "id": "key"}},
            JudgeFlags(field=["output=answer", "id=key"]),
            id="field-map",
        ),
        pytest.param({"price": (0.15, 0.6)}, JudgeFlags(price="0.15,0.6"), id="price-pair"),
        pytest.param({"price": "1,2"}, JudgeFlags(price="1,2"), id="price-text"),
        pytest.param({"sample": 50}, JudgeFlags(sample="50"), id="sample-count"),
        pytest.param({"sample": "10%"}, JudgeFlags(sample="10%"), id="sample-share"),
        pytest.param({"max_failures": 0}, JudgeFlags(max_failures="0"), id="max-failures"),
        pytest.param({"cache": False}, JudgeFlags(no_cache=True), id="cache-off"),
        pytest.param({"use_cache": True}, JudgeFlags(no_cache=False), id="use-cache"),
        pytest.param({"out": "runs/x"}, JudgeFlags(out=Path("runs/x")), id="path"),
        pytest.param({"json_schema": False}, JudgeFlags(json_schema=False), id="switch"),
        pytest.param({"timeout": None}, JudgeFlags(), id="none-is-not-given"),
    ],
)
def test_a_setting_lands_in_judgeflags_as_the_flag_would(given, expected):
    assert read(**given).flags == expected


def test_thresholds_land_in_gatethresholds():
    settings = read(min_win_rate=0.55, max_loss_rate=0.2)
    assert settings.thresholds == GateThresholds(min_win_rate=0.55, max_loss_rate=0.2)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        pytest.param(
            {"concurency": 3},
            "score_dataset() got an unexpected keyword argument 'concurency'; "
            "did you mean concurrency?",
            id="misspelt",
        ),
        pytest.param({"min_winrate": 0.5}, "did you mean min_win_rate?", id="misspelt-threshold"),
        pytest.param({"min_kappa": 0.5}, "unexpected keyword argument 'min_kappa'", id="other"),
        pytest.param(
            {"quiet": True}, "takes no 'quiet': that flag is the command line's own", id="cli-only"
        ),
        pytest.param({"concurrency": "8"}, "'concurrency' must be an int, not str", id="type"),
        pytest.param({"concurrency": True}, "must be an int, not bool", id="bool-not-int"),
        pytest.param({"force": 1}, "'force' must be True or False, not 1", id="switch"),
        pytest.param({"model": 3}, "'model' must be a str or a list of str", id="model"),
        pytest.param(
            {"cache": False, "use_cache": False},
            "more than one of cache, use_cache",
            id="both-cache-names",
        ),
    ],
)
def test_what_is_no_setting_is_a_type_error(given, message):
    with pytest.raises(TypeError) as raised:
        read(**given)
    assert message in str(raised.value)


def test_a_flag_its_command_does_not_take_is_named():
    with pytest.raises(TypeError, match="takes no 'screen': its command has no such flag"):
        read_settings(
            {"screen": "openai/cheap"},
            caller="calibrate_judge",
            flags=offered(frozenset({"screen"})),
        )


@pytest.mark.parametrize(
    ("given", "message"),
    [
        pytest.param({"concurrency": 0}, "concurrency=0 is out of range: at least 1", id="min"),
        pytest.param({"temperature": 3}, "temperature=3 is out of range: from 0 to 2", id="max"),
        pytest.param({"rpm": 0}, "rpm=0 is not greater than 0", id="positive"),
        pytest.param({"min_win_rate": 1.5}, "min_win_rate=1.5 is out of range", id="threshold"),
        pytest.param({"out": " "}, "out: the path is empty", id="empty-path"),
    ],
)
def test_a_value_out_of_its_bounds_is_a_config_error(given, message):
    # The command line's exit 2 (typer's range check there), as an InputError here.
    with pytest.raises(ConfigError) as raised:
        read(**given)
    assert message in raised.value.message
