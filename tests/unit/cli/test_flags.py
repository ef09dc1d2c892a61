"""The shared judging flags on the command line (cli/flags.py): `@judge_flags` gives typer one
option per declared flag, and every flag a judging command offers reaches its RunConfig —
from the flag, or from its JUDGE_* variable — with flag > environment > rubric > default."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import get_args

import pytest
from typer.testing import CliRunner

from judgecli.cli.flags import gate_thresholds, judge_flags
from judgecli.cli.main import app
from judgecli.commands import jobs
from judgecli.errors import ExitCode
from judgecli.settings.config import FailureLimit, RunConfig
from judgecli.settings.flags import (
    CASCADE_FLAGS,
    CHECKLIST_FLAGS,
    REPEAT_FLAGS,
    SCALE_OUT_FLAGS,
    SUBSET_FLAGS,
    JudgeFlags,
    flag_fields,
)
from judgecli.settings.gate_flags import GateThresholds
from judgecli.settings.items_per_call import ItemsPerCall
from judgecli.settings.judges import Price
from judgecli.settings.score_mode import ScoreMode
from tests.conftest import DATA

FLAGS = {shared.name: shared for shared in flag_fields()}


# --- the decorator ---------------------------------------------------------------------


def test_the_flags_parameter_becomes_one_keyword_option_per_flag():
    @judge_flags(without=CASCADE_FLAGS)
    def command(dataset: Path, *, flags: JudgeFlags) -> ExitCode:
        return ExitCode.OK

    params = inspect.signature(command).parameters
    assert list(params) == ["dataset", *(n for n in FLAGS if n not in CASCADE_FLAGS)]
    assert {p.kind for p in params.values()} == {inspect.Parameter.KEYWORD_ONLY}
    assert params["seed"].default == 0
    assert command.__annotations__["return"] is ExitCode


def test_the_command_gets_the_values_as_one_judgeflags():
    seen: list[JudgeFlags] = []

    @judge_flags(without=SUBSET_FLAGS)
    def command(dataset: Path, *, flags: JudgeFlags) -> ExitCode:
        seen.append(flags)
        return ExitCode.OK

    values = {name: shared.default for name, shared in FLAGS.items() if name not in SUBSET_FLAGS}
    assert command(dataset=Path("d"), **(values | {"seed": 7})) is ExitCode.OK
    assert seen == [JudgeFlags(seed=7)]


def without_flags(dataset: Path) -> ExitCode:
    return ExitCode.OK


def with_a_seed(seed: int, *, flags: JudgeFlags) -> ExitCode:
    return ExitCode.OK


@pytest.mark.parametrize(
    ("without", "command", "problem"),
    [
        pytest.param(frozenset({"sede"}), with_a_seed, "no shared flags named", id="unknown"),
        pytest.param(frozenset(), without_flags, "no `flags: JudgeFlags`", id="no-flags"),
        pytest.param(frozenset(), with_a_seed, "are shared flags too", id="clash"),
    ],
)
def test_a_mistaken_declaration_fails_at_import(without, command, problem):
    with pytest.raises((TypeError, ValueError), match=problem):
        judge_flags(without=without)(command)


def test_the_thresholds_parameter_becomes_the_commands_threshold_options():
    seen: list[GateThresholds] = []

    @gate_thresholds("calibrate")
    def command(labels: Path, *, thresholds: GateThresholds, on: str = "point") -> ExitCode:
        seen.append(thresholds)
        return ExitCode.OK

    params = inspect.signature(command).parameters
    assert list(params) == ["labels", "min_kappa", "min_accuracy", "min_stability", "on"]
    values = {"min_kappa": 0.2, "min_accuracy": None, "min_stability": None}
    assert command(labels=Path("l"), on="point", **values) is ExitCode.OK
    assert seen == [GateThresholds(min_kappa=0.2)]


def test_the_thresholds_and_the_shared_flags_stack():
    seen: list[tuple[JudgeFlags, GateThresholds]] = []

    @judge_flags(without=SUBSET_FLAGS)
    @gate_thresholds("arena")
    def command(*, flags: JudgeFlags, thresholds: GateThresholds) -> ExitCode:
        seen.append((flags, thresholds))
        return ExitCode.OK

    shared = [n for n in FLAGS if n not in SUBSET_FLAGS]
    assert list(inspect.signature(command).parameters) == [*shared, "min_consistency"]
    values = {name: FLAGS[name].default for name in shared}
    assert command(**values | {"seed": 2}, min_consistency=0.7) is ExitCode.OK
    assert seen == [(JudgeFlags(seed=2), GateThresholds(min_consistency=0.7))]


def with_a_threshold(min_mean: float, *, thresholds: GateThresholds) -> ExitCode:
    return ExitCode.OK


def test_a_parameter_named_like_a_threshold_fails_at_import():
    with pytest.raises(TypeError, match=r"\['min_mean'\] are thresholds too"):
        gate_thresholds("score")(with_a_threshold)
    with pytest.raises(TypeError, match="no `thresholds: GateThresholds`"):
        gate_thresholds("score")(without_flags)


# --- from the command line to RunConfig --------------------------------------------------

RUBRIC = """\
name: {name}
kind: {kind}
{scale}
requires: [input, output]
judge: {{model: openai/rubric-judge, temperature: 0.3}}
prompt:
  user: "{{input}} {prompt}"
"""
# Each judging command's arguments up to its shared flags, and the flags it leaves out.
COMMANDS = {
    "score": (["score", "cases.jsonl", "--rubric", "pointwise.yaml"], frozenset()),
    "pairwise": (
        ["pairwise", "old.jsonl", "new.jsonl", "--rubric", "pairwise.yaml"],
        CHECKLIST_FLAGS,
    ),
    "calibrate": (
        ["calibrate", "labels.jsonl", "--rubric", "pointwise.yaml"],
        CASCADE_FLAGS | SUBSET_FLAGS | SCALE_OUT_FLAGS | CHECKLIST_FLAGS,
    ),
    "refine": (
        ["refine", "cases.jsonl", "--rubric", "pointwise.yaml", "--generator", "openai/gen"],
        CASCADE_FLAGS | SCALE_OUT_FLAGS | REPEAT_FLAGS | CHECKLIST_FLAGS,
    ),
}
THERE = "elsewhere"
# What some flags need beside them to mean anything.
BESIDE = {
    "escalate": ["--screen", "openai/cheap"],
    "screen_price": ["--screen", "openai/cheap"],
    "retry_failed": ["--resume", THERE],
    # The last --rubric given is the one used: the library's checklist (which names no
    # judge), as only a checklist rubric has items to ask about.
    "items_per_call": ["--rubric", "checklist", "--model", "openai/x"],
}
SPEC = str(DATA / "spec" / "judge.yaml")
# The flags build_run_config combines (no `to=`): a value, and what RunConfig shows of it.
COMBINED = {
    "model": ("openai/x", lambda c: c.model_names == ["openai/x"]),
    "api_base": ("http://127.0.0.1:9/v1", lambda c: c.models[0].api_base.endswith(":9/v1")),
    "price": ("1,2", lambda c: c.models[0].price == Price(input_per_mtok=1, output_per_mtok=2)),
    "json_schema": (False, lambda c: c.models[0].json_schema is False),
    "screen": ("openai/cheap", lambda c: c.screen_name == "openai/cheap"),
    "screen_price": ("3,4", lambda c: c.screen.price == Price(input_per_mtok=3, output_per_mtok=4)),
    "out": (THERE, lambda c: c.out == Path(THERE) and not c.resume),
    "resume": (THERE, lambda c: c.out == Path(THERE) and c.resume),
    "no_cache": (True, lambda c: not c.use_cache),
    "max_failures": ("3", lambda c: c.max_failures == FailureLimit(count=3)),
    "sample": ("4", lambda c: c.sample == 4),
    "field": ("output=answer", lambda c: c.field_map == {"output": "answer"}),
    "workers": ("3", lambda c: c.workers == 3),
    "shard": ("1/4", lambda c: (c.shard.index, c.shard.count) == (1, 4)),
    "score_mode": ("logprob", lambda c: c.score_mode is ScoreMode.LOGPROB),
    "items_per_call": ("all", lambda c: c.items_per_call is ItemsPerCall.ALL),
    # Issue 35: the spec read, its files checked, its hash kept (tests/data/spec pins them).
    "spec": (SPEC, lambda c: c.spec is not None and c.spec.hash.startswith("sha256:")),
}
# Read by the command itself (progress and printing), not by the run.
COMMAND_ONLY = {"quiet", "json_output", "progress_every"}
# A value of each type for the flags that set a RunConfig field as given.
GIVEN = {int: 3, float: 1.5, str: "failed", bool: True}


def test_every_flag_is_checked_here():
    landing = {name for name, shared in FLAGS.items() if shared.flag.to is not None}
    assert landing | set(COMBINED) | COMMAND_ONLY == set(FLAGS)
    assert not landing & set(COMBINED)


def given(name: str) -> tuple[object, Callable[[RunConfig], bool]]:
    """A value for flag `name`, and the check that RunConfig holds it."""
    if name in COMBINED:
        return COMBINED[name]
    shared = FLAGS[name]
    [kind] = [t for t in get_args(shared.type) or [shared.type] if t is not type(None)]
    value, field = GIVEN[kind], shared.flag.to
    # A value equal to the default would pass without reaching anything.
    assert value != RunConfig.model_fields[field].default
    return value, lambda c: getattr(c, field) == value


def as_argv(name: str, value: object) -> list[str]:
    long, _, negative = FLAGS[name].flag.names[0].partition("/")
    if isinstance(value, bool):
        return [long if value else negative]
    return [long, str(value)]


class Captured(Exception):
    def __init__(self, config: RunConfig) -> None:
        self.config = config


@pytest.fixture
def config_of(monkeypatch, tmp_path):
    """config_of(command, *flags, env={}) → the RunConfig the command built (it stops there)."""
    for name, scale, prompt in [
        ("pointwise", "scale: {min: 1, max: 4}\npass_at: 3", "{output}"),
        ("pairwise", "", "{output_a} {output_b}"),
    ]:
        text = RUBRIC.format(name=name, kind=name, scale=scale, prompt=prompt)
        (tmp_path / f"{name}.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "labels.jsonl").write_text('{"id": "a", "label": 3}\n', encoding="utf-8")
    real = jobs.judge_config

    def capture(command, rubric, flags):
        raise Captured(real(command, rubric, flags))

    monkeypatch.setattr(jobs, "judge_config", capture)
    # --max-cost is refused for a model without a price (tests/integration/test_run_settings);
    # here its value only has to reach RunConfig.
    monkeypatch.setattr("judgecli.judge.provider.check_prices", lambda models: None)

    def run(command: str, *flags: str, env: dict[str, str] | None = None) -> RunConfig:
        args = [*COMMANDS[command][0], *flags]
        result = CliRunner().invoke(app, args, env={"JUDGE_DEBUG": "1", **(env or {})})
        assert isinstance(result.exception, Captured), result.output
        return result.exception.config

    return run


OFFERED = [
    pytest.param(command, name, id=f"{command}-{name}")
    for command, (_, without) in COMMANDS.items()
    for name in FLAGS
    if name not in without and name not in COMMAND_ONLY
]


@pytest.mark.parametrize(("command", "name"), OFFERED)
def test_a_flag_reaches_runconfig(config_of, command, name):
    value, holds = given(name)
    config = config_of(command, *BESIDE.get(name, []), *as_argv(name, value))
    assert holds(config)


SETS = [name for name, shared in FLAGS.items() if shared.flag.sets is not None]


@pytest.mark.parametrize("name", SETS)
def test_a_flag_sets_the_runconfig_field_it_declares(config_of, name):
    # Issue 30: drift's audit reads the field a flag sets off its declaration (`sets`): it
    # must be the field build_run_config makes of the value.
    value, _ = given(name)
    field = FLAGS[name].flag.sets
    plain = config_of("score", *BESIDE.get(name, []))
    config = config_of("score", *BESIDE.get(name, []), *as_argv(name, value))
    assert getattr(config, field) != getattr(plain, field)


BY_VARIABLE = [
    pytest.param(command, name, id=f"{command}-{name}")
    for command, name in (p.values for p in OFFERED)
    if FLAGS[name].flag.env
]


@pytest.mark.parametrize(("command", "name"), BY_VARIABLE)
def test_a_flags_variable_reaches_runconfig(config_of, command, name):
    value, holds = given(name)
    config = config_of(command, *BESIDE.get(name, []), env={FLAGS[name].flag.env: str(value)})
    assert holds(config)


@pytest.mark.parametrize(
    ("flags", "env", "expected"),
    [
        pytest.param(["--concurrency", "7"], {"JUDGE_CONCURRENCY": "5"}, 7, id="flag-over-env"),
        pytest.param([], {"JUDGE_CONCURRENCY": "5"}, 5, id="env-over-default"),
        pytest.param([], {}, 16, id="default"),
    ],
)
def test_a_flag_beats_its_variable_which_beats_the_default(config_of, flags, env, expected):
    assert config_of("score", *flags, env=env).concurrency == expected


@pytest.mark.parametrize(
    ("flags", "env", "model", "temperature"),
    [
        pytest.param([], {}, "openai/rubric-judge", 0.3, id="rubric"),
        pytest.param([], {"JUDGE_MODEL": "openai/env"}, "openai/env", 0.3, id="env-over-rubric"),
        pytest.param(
            ["--model", "openai/flag", "--temperature", "1"],
            {"JUDGE_MODEL": "openai/env"},
            "openai/flag",
            1.0,
            id="flag-over-all",
        ),
    ],
)
def test_the_rubric_stands_in_for_flags_not_given(config_of, flags, env, model, temperature):
    config = config_of("pairwise", *flags, env=env)
    assert (config.model_names, config.temperature) == ([model], temperature)
    assert config.max_tokens == 1024  # neither flag nor rubric: the default
