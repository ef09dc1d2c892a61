"""Enum options (cli/options.py): their values are the core enums' values, spelled in any
case, and any other value is one usage error naming the flag and the choices."""

from __future__ import annotations

import pytest

from judgecli.cli.options import (
    ChoiceError,
    FlipPolicyChoice,
    GateOnChoice,
    SheetFormatChoice,
    choice,
)
from judgecli.deciding.gate import GateOn
from judgecli.grading.debias import FlipPolicy
from judgecli.store.sheets import SheetFormat


@pytest.mark.parametrize(
    ("option", "core"),
    [
        pytest.param(FlipPolicyChoice, FlipPolicy, id="flip-policy"),
        pytest.param(GateOnChoice, GateOn, id="on"),
        pytest.param(SheetFormatChoice, SheetFormat, id="format"),
    ],
)
def test_an_enum_option_offers_exactly_the_core_enums_values(option, core):
    assert [c.value for c in option] == [c.value for c in core]
    assert {core(member) for member in option} == set(core)


@pytest.mark.parametrize("text", ["lower-bound", "LOWER-BOUND", " Lower-Bound "])
def test_a_choice_is_read_in_any_case(text):
    assert choice(GateOnChoice, "--on")(text) is GateOnChoice.LOWER_BOUND


def test_a_default_that_is_already_a_member_stays_itself():
    assert choice(FlipPolicyChoice, "--flip-policy")(FlipPolicyChoice.VOTE) is FlipPolicyChoice.VOTE


def test_another_value_is_one_line_naming_the_flag_and_the_choices():
    with pytest.raises(ChoiceError) as caught:
        choice(FlipPolicyChoice, "--flip-policy")("coin")
    assert caught.value.format_message() == "--flip-policy 'coin' is not one of: tie, drop, vote"
    assert caught.value.exit_code == 2
