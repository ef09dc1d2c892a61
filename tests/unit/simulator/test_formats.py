"""Response formats: which response_format types a simulated server accepts, enforces or
refuses, and how each refusal looks on the wire."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from judgecli.errors import ConfigError
from judgecli.simulator.config import JudgeProfile
from judgecli.simulator.formats import (
    PRESETS,
    FormatRejection,
    FormatType,
    ResponseFormats,
    parse_formats,
)
from judgecli.simulator.profiles import parse_profiles, parse_server_settings
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from judgecli.simulator.verdicts import verdict_content
from tests.unit.simulator.requests import JSON_SCHEMA_FORMAT, SCHEMA, message_of, post, request

JSON_OBJECT_WITH_SCHEMA = {"type": "json_object", "schema": SCHEMA}
JSON_OBJECT = {"type": "json_object"}
TEXT = {"type": "text"}


@pytest.mark.parametrize(
    ("spec", "accepted", "rejection"),
    [
        pytest.param("all", None, FormatRejection.INVALID_VALUE, id="all"),
        pytest.param(
            "llama-cpp",
            {FormatType.TEXT, FormatType.JSON_OBJECT},
            FormatRejection.LLAMA_CPP,
            id="llama-cpp",
        ),
        pytest.param("none", set(), FormatRejection.UNSUPPORTED, id="none"),
        pytest.param(
            " json_object + text ",
            {FormatType.TEXT, FormatType.JSON_OBJECT},
            FormatRejection.INVALID_VALUE,
            id="types-and-spaces",
        ),
        pytest.param("json_schema", {FormatType.JSON_SCHEMA}, FormatRejection.INVALID_VALUE),
    ],
)
def test_format_settings_parse_from_presets_and_type_lists(spec, accepted, rejection):
    formats = parse_formats(spec)

    assert formats.accepted == (None if accepted is None else frozenset(accepted))
    assert formats.rejection is rejection
    assert formats.enforced


def test_the_ignored_preset_accepts_everything_and_enforces_nothing():
    assert parse_formats("ignored") == ResponseFormats(enforced=False)


@pytest.mark.parametrize("spec", ["xml", "json_object+yaml", "", "json_object+"])
def test_an_unknown_format_is_named_with_the_choices(spec):
    with pytest.raises(ValueError, match="unknown response format .* a preset \\(all, llama-cpp"):
        parse_formats(spec)


@pytest.mark.parametrize("name", list(PRESETS))
def test_a_preset_reads_back_as_its_name(name):
    assert str(parse_formats(name)) == name


def test_settings_take_format_strings_and_flags_name_a_bad_one():
    assert SimulatorConfig(formats="llama-cpp").formats == PRESETS["llama-cpp"]
    assert JudgeProfile(formats="none").formats == PRESETS["none"]
    assert parse_profiles(["local:formats=json_object+text,style=prose"])["local"].formats == (
        ResponseFormats(accepted=frozenset({FormatType.JSON_OBJECT, FormatType.TEXT}))
    )
    with pytest.raises(ConfigError, match="--profile 'local:formats=xml': unknown response"):
        parse_profiles(["local:formats=xml"])
    with pytest.raises(ConfigError, match="--formats: unknown response format 'xml'"):
        parse_server_settings("json", "xml")
    with pytest.raises(ValidationError):
        SimulatorConfig(formats="xml")


# --- Over the socket: one server, a profile per kind of real server -----------------------

SERVERS = SimulatorConfig(
    profiles={
        "llama": JudgeProfile(formats="llama-cpp"),
        "bare": JudgeProfile(formats="none"),
        "objects": JudgeProfile(formats="json_object+text"),
        "proxy": JudgeProfile(formats="ignored", style="prose"),
        "small": JudgeProfile(style="prose"),
    }
)


@pytest.fixture(scope="module")
def shared() -> Iterator[SimulatorServer]:
    with SimulatorServer(SERVERS) as running:
        yield running


@pytest.fixture
def server(shared: SimulatorServer) -> SimulatorServer:
    shared.reset()
    return shared


def expected_verdict(body: dict[str, Any]) -> dict[str, Any]:
    verdict = json.loads(verdict_content(body, seed=0))
    assert isinstance(verdict, dict)
    return verdict


def test_llama_cpp_answers_json_schema_with_its_500_validation_error(server):
    status, _, reply = post(server.url, request(model="llama", response_format=JSON_SCHEMA_FORMAT))

    assert status == 500
    error = reply["error"]
    assert (error["type"], error["param"], error["code"]) == ("internal_server_error", None, None)
    # The text llama-cpp-python 0.3.36 sends, spread over several lines as there.
    lines = error["message"].splitlines()
    assert lines[0].startswith("1 validation error: {'type': 'literal_error'")
    assert "Input should be 'text' or 'json_object'" in lines[0]
    assert "'input': 'json_schema'" in lines[0]
    assert lines[-1] == "POST /v1/chat/completions"


def test_llama_cpp_fills_the_schema_of_a_json_object_format(server):
    body = request(model="llama", response_format=JSON_OBJECT_WITH_SCHEMA, schema_in_prompt=False)

    message, _ = message_of(server.url, body)

    verdict = json.loads(message["content"])
    assert list(verdict) == list(SCHEMA["properties"])
    # The same verdict the schema would get as json_schema from a server that takes it.
    assert verdict == expected_verdict(request(model="llama", response_format=JSON_SCHEMA_FORMAT))


@pytest.mark.parametrize(
    "response_format",
    [pytest.param(TEXT, id="text"), pytest.param(None, id="no-response-format")],
)
def test_llama_cpp_accepts_text_and_requests_without_a_format(server, response_format):
    status, _, _ = post(server.url, request(model="llama", response_format=response_format))

    assert status == 200


@pytest.mark.parametrize(
    "response_format",
    [pytest.param(JSON_SCHEMA_FORMAT, id="json_schema"), pytest.param(TEXT, id="text")],
)
def test_a_server_without_response_format_refuses_any_with_400(server, response_format):
    status, _, reply = post(server.url, request(model="bare", response_format=response_format))

    assert status == 400
    assert reply["error"]["message"] == "response_format is not supported"
    assert reply["error"]["type"] == "invalid_request_error"
    assert post(server.url, request(model="bare"))[0] == 200


def test_a_type_list_refuses_other_types_as_openai_does(server):
    status, _, reply = post(
        server.url, request(model="objects", response_format=JSON_SCHEMA_FORMAT)
    )

    assert status == 400
    assert reply["error"] == {
        "message": "Invalid value: 'json_schema'. Supported values are: 'json_object' and 'text'.",
        "type": "invalid_request_error",
        "param": "response_format.type",
        "code": "invalid_value",
    }


def test_json_mode_without_any_schema_still_answers_a_json_object(server):
    body = request(model="objects", response_format=JSON_OBJECT, schema_in_prompt=False)

    message, _ = message_of(server.url, body)

    assert isinstance(json.loads(message["content"]), dict)


def test_a_prose_judge_answers_prose_without_a_response_format_and_json_with_one(server):
    prompt_only, _ = message_of(server.url, request(model="small"))
    enforced, _ = message_of(server.url, request(model="small", response_format=JSON_OBJECT))

    assert "{" not in prompt_only["content"]
    assert json.loads(enforced["content"]) == expected_verdict(request(model="small"))


def test_a_server_that_ignores_response_format_lets_a_prose_judge_write_prose(server):
    message, _ = message_of(server.url, request(model="proxy", response_format=JSON_SCHEMA_FORMAT))

    assert "{" not in message["content"]
    assert "out of 5" in message["content"]


def test_an_ignored_schema_is_never_seen_by_the_judge():
    body = request(response_format=JSON_SCHEMA_FORMAT, schema_in_prompt=False)
    with SimulatorServer(SimulatorConfig(formats="ignored")) as running:
        message, _ = message_of(running.url, body)

    # Only the prompt could have told it the schema, and the prompt does not.
    assert message["content"].startswith("Simulated judge")
    with pytest.raises(json.JSONDecodeError):
        json.loads(message["content"])


def test_the_record_says_which_response_format_each_request_carried(server):
    post(server.url, request(model="llama", response_format=JSON_SCHEMA_FORMAT))
    post(server.url, request(model="llama", response_format=JSON_OBJECT_WITH_SCHEMA))
    post(server.url, request(model="llama"))
    post(server.url, request(model="llama", response_format={"schema": SCHEMA}))

    assert [(r.response_format, r.status) for r in server.requests] == [
        ("json_schema", 500),
        ("json_object", 200),
        (None, 200),
        ("", 500),  # no type: llama-cpp refuses it like any other type it does not know
    ]
