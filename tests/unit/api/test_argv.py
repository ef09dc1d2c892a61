"""The command line an API run records (issue 31): the CLI parses it back into the very
settings the API call had, so `judge resume RUN_DIR` continues an API run as it was made."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgecli.api.argv import command_line, option_words
from judgecli.api.jobs import gate_words, offered, pair_words
from judgecli.api.settings import read_settings
from judgecli.cli.main import app
from judgecli.commands import jobs
from judgecli.commands.jobs import Sides
from judgecli.commands.setup import GateAsked
from judgecli.deciding.gate import GateOn, GateSpec
from judgecli.grading.debias import FlipPolicy
from judgecli.settings.gate_flags import PAIRWISE, thresholds_of


class Captured(Exception):
    def __init__(self, **parsed):
        self.parsed = parsed


@pytest.fixture
def parsed(monkeypatch):
    """parsed(argv) → what `judge pairwise` made of the words (it stops before the run)."""

    def capture(old, new, found, flags, asked, sides):
        raise Captured(old=old, new=new, flags=flags, asked=asked, sides=sides)

    monkeypatch.setattr(jobs, "prepare_pairwise", capture)

    def parse(argv):
        result = CliRunner().invoke(app, argv[1:], env={"JUDGE_DEBUG": "1"})
        assert isinstance(result.exception, Captured), result.output
        return result.exception.parsed

    return parse


SETTINGS = {
    "model": ["openai/a", "openai/b"],
    "api_base": "http://127.0.0.1:9/v1",
    "price": (0.5, 1.5),
    "temperature": 0.7,
    "max_tokens": 300,
    "repeats": 3,
    "json_schema": False,
    "concurrency": 4,
    "rpm": 120.0,
    "max_retries": 2,
    "timeout": 30.0,
    "cache": False,
    "max_cost": 2.5,
    "max_failures": "10%",
    "limit": 5,
    "seed": 7,
    "field": {"output": "answer"},
    "out": "runs/x",
    "min_win_rate": 0.55,
    "min_consistency": 0.6,
}


def test_the_recorded_command_line_parses_back_into_the_same_settings(parsed):
    read = read_settings(SETTINGS, caller="t", flags=offered(), thresholds=thresholds_of(PAIRWISE))
    asked = GateAsked(
        GateSpec.of(read.thresholds, on=GateOn.LOWER_BOUND), sequential=False, fdr=True
    )
    sides = Sides(flip=False, flip_policy=FlipPolicy.DROP, allow_partial=True)
    argv = command_line(
        "pairwise",
        [Path("old.jsonl"), Path("new.jsonl")],
        read.flags,
        read.thresholds,
        ("--rubric", "pairwise", None),
        *pair_words(sides),
        *gate_words(asked),
    )
    got = parsed(argv)
    assert got["flags"] == read.flags
    assert got["asked"] == asked
    assert got["sides"] == sides
    assert (got["old"], got["new"]) == (Path("old.jsonl"), Path("new.jsonl"))


def test_defaults_write_nothing():
    read = read_settings({}, caller="t", flags=offered())
    assert command_line("score", ["d.jsonl"], read.flags, read.thresholds) == [
        "judge",
        "score",
        "d.jsonl",
    ]


@pytest.mark.parametrize(
    ("spelling", "value", "default", "words"),
    [
        pytest.param("--x", 3, None, ["--x", "3"], id="value"),
        pytest.param("--x", 3, 3, [], id="default"),
        pytest.param("--x", ["a", "b"], None, ["--x", "a", "--x", "b"], id="repeated"),
        pytest.param("--x", True, False, ["--x"], id="switch-on"),
        pytest.param("--x/--no-x", False, True, ["--no-x"], id="switch-off"),
        pytest.param("--x/--no-x", False, None, ["--no-x"], id="tri-state-off"),
        pytest.param("--on", GateOn.LOWER_BOUND, None, ["--on", "lower-bound"], id="enum"),
        pytest.param("--x", None, None, [], id="none"),
    ],
)
def test_option_words(spelling, value, default, words):
    assert option_words(spelling, value, default=default) == words
