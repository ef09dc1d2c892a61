"""The response-format ladder."""

from __future__ import annotations

from judgecli.judge.formats import FormatLadder, FormatMode, wire_format

SCHEMA = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "winner": {"type": "string", "enum": ["A", "B", "tie"]},
    },
}
STRICT = {
    "type": "json_schema",
    "json_schema": {"name": "verdict", "schema": SCHEMA, "strict": True},
}


def test_each_mode_sends_what_servers_of_that_kind_accept():
    assert wire_format(FormatMode.JSON_SCHEMA, STRICT) == STRICT
    grammar = wire_format(FormatMode.JSON_OBJECT_SCHEMA, STRICT)
    assert grammar["type"] == "json_object"
    # Under llama.cpp's limit of 1000 repetitions (its server crashed at 1,010).
    assert 0 < grammar["schema"]["properties"]["reasoning"]["maxLength"] <= 1000
    assert "maxLength" not in grammar["schema"]["properties"]["winner"]  # enums stay as they are
    assert wire_format(FormatMode.JSON_OBJECT, STRICT) == {"type": "json_object"}
    assert wire_format(FormatMode.PROMPT, STRICT) is None
    assert wire_format(FormatMode.JSON_SCHEMA, None) is None  # no schema asked for


def test_a_refusal_steps_down_once_however_many_calls_saw_it():
    ladder = FormatLadder({"m": FormatMode.JSON_SCHEMA})
    assert ladder.step_down("m", FormatMode.JSON_SCHEMA, "HTTP 500 ...")
    assert ladder.step_down("m", FormatMode.JSON_SCHEMA, "HTTP 500 ...")  # a call in flight
    assert ladder.mode("m") is FormatMode.JSON_OBJECT_SCHEMA
    assert len(ladder.steps) == 1
    assert "json_schema" in ladder.steps[0]
    assert "HTTP 500" in ladder.steps[0]


def test_below_prompt_only_there_is_nothing_to_step_to():
    ladder = FormatLadder({"m": FormatMode.JSON_OBJECT})
    assert ladder.step_down("m", FormatMode.JSON_OBJECT, "400")
    assert ladder.mode("m") is FormatMode.PROMPT
    assert not ladder.step_down("m", FormatMode.PROMPT, "400")
    assert ladder.modes == {"m": "prompt"}
