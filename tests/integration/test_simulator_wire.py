"""What real LiteLLM (the path judge runs) makes of the simulator's reply styles, refused
response formats and rate-limit headers, over a real socket.

These pin the attribute and header names the judge client reads:
* ``choices[0].message.reasoning_content`` (absent, not None, when the server sends none:
  read it with ``getattr(message, "reasoning_content", None)``); LiteLLM also fills it
  from a ``<think>...</think>`` block that *starts* the content, leaving the rest (with its
  leading newlines) as content, but passes a reply with only ``</think>`` through whole;
* ``choices[0].finish_reason == "length"``;
* a 500 refusal is ``litellm.InternalServerError`` whose ``str()`` holds the server's message;
* on success ``response._hidden_params["additional_headers"]`` holds every response header
  prefixed ``llm_provider-``, plus ``x-ratelimit-limit-requests`` and
  ``x-ratelimit-remaining-requests`` unprefixed (LiteLLM copies only those two request ones);
* on a 429, ``RateLimitError.litellm_response_headers`` is an ``httpx.Headers`` with the raw
  names: ``retry-after`` and ``x-ratelimit-*-requests``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from judgecli.simulator.config import JudgeProfile
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.unit.simulator.requests import JSON_SCHEMA_FORMAT, SCHEMA, request

CONFIG = SimulatorConfig(
    rpm=4,
    rate_limit_window_s=600,  # nothing expires during a test: the counts are exact
    profiles={
        "r1": JudgeProfile(style="reasoning-content"),
        "qwen": JudgeProfile(style="think"),
        "distill": JudgeProfile(style="think-unopened"),
        "tiny": JudgeProfile(style="truncated"),
        "llama": JudgeProfile(formats="llama-cpp"),
        "bare": JudgeProfile(formats="none"),
    },
)


@pytest.fixture(scope="module")
def shared() -> Iterator[SimulatorServer]:
    with SimulatorServer(CONFIG) as server:
        yield server


@pytest.fixture
def server(shared: SimulatorServer) -> SimulatorServer:
    shared.reset()
    return shared


def complete(server: SimulatorServer, model: str, **kwargs: Any) -> Any:
    """One litellm.acompletion call, with no retries so each call is one request."""
    import litellm

    body = request(model=model)

    async def call() -> Any:
        return await litellm.acompletion(
            model=f"openai/{model}",
            api_base=f"{server.url}/v1",
            api_key="sk-test-dummy",
            messages=body["messages"],
            num_retries=0,
            max_retries=0,
            **kwargs,
        )

    return asyncio.run(call())


def response_headers(error: Exception) -> Any:
    """The headers LiteLLM attaches to a mapped exception (set at runtime, not typed)."""
    return getattr(error, "litellm_response_headers", None)


def test_reasoning_content_reaches_the_litellm_message(server):
    reply = complete(server, "r1", response_format=JSON_SCHEMA_FORMAT)
    plain = complete(server, "sim", response_format=JSON_SCHEMA_FORMAT)

    message = reply.choices[0].message
    assert "{ relevance" in message.reasoning_content
    assert message.content.startswith('{"reasoning": ')
    assert getattr(plain.choices[0].message, "reasoning_content", None) is None


def test_litellm_moves_a_leading_think_block_into_reasoning_content(server):
    reply = complete(server, "qwen")

    message = reply.choices[0].message
    assert "<think>" not in message.content
    assert message.content.startswith("\n\n{")
    assert "{ relevance" in message.reasoning_content


def test_litellm_passes_a_reply_with_only_the_closing_think_tag_through_whole(server):
    reply = complete(server, "distill")

    message = reply.choices[0].message
    assert "{ relevance" in message.content
    assert "\n</think>\n\n{" in message.content
    assert getattr(message, "reasoning_content", None) is None


def test_a_cut_reply_reaches_litellm_with_finish_reason_length(server):
    reply = complete(server, "tiny", response_format=JSON_SCHEMA_FORMAT)

    assert reply.choices[0].finish_reason == "length"
    assert reply.choices[0].message.content.startswith('{"reasoning": ')
    assert not reply.choices[0].message.content.endswith("}")


def test_llama_cpps_500_on_json_schema_is_an_internal_server_error_with_its_text(server):
    from litellm.exceptions import InternalServerError

    with pytest.raises(InternalServerError) as caught:
        complete(server, "llama", response_format=JSON_SCHEMA_FORMAT)
    accepted = complete(server, "llama", response_format={"type": "json_object", "schema": SCHEMA})

    assert caught.value.status_code == 500
    # The text llama-cpp-python 0.3.36 sends (captured by tests/local_llm/measure_formats.py).
    assert "1 validation error: {'type': 'literal_error'" in str(caught.value)
    assert "Input should be 'text' or 'json_object'" in str(caught.value)
    assert "'input': 'json_schema'" in str(caught.value)
    assert accepted.choices[0].message.content.startswith('{"reasoning": ')
    assert [(r.response_format, r.status) for r in server.requests] == [
        ("json_schema", 500),
        ("json_object", 200),
    ]


def test_a_400_refusal_is_a_bad_request_error_naming_response_format(server):
    from litellm.exceptions import BadRequestError

    with pytest.raises(BadRequestError, match="response_format is not supported"):
        complete(server, "bare", response_format=JSON_SCHEMA_FORMAT)


def test_rate_limit_headers_reach_the_caller_on_success_and_on_429(server):
    from litellm.exceptions import RateLimitError

    replies = [complete(server, "sim") for _ in range(4)]
    with pytest.raises(RateLimitError) as caught:
        complete(server, "sim")

    headers = replies[-1]._hidden_params["additional_headers"]
    assert headers["x-ratelimit-limit-requests"] == "4"
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert headers["llm_provider-x-ratelimit-remaining-requests"] == "0"
    assert headers["llm_provider-x-ratelimit-reset-requests"].endswith("s")
    remaining = [
        r._hidden_params["additional_headers"]["x-ratelimit-remaining-requests"] for r in replies
    ]
    assert remaining == ["3", "2", "1", "0"]
    limited = response_headers(caught.value)
    assert limited["x-ratelimit-remaining-requests"] == "0"
    assert limited["x-ratelimit-limit-requests"] == "4"
    assert 0 < float(limited["retry-after"]) <= 600


def test_without_rate_limit_headers_litellm_sees_only_retry_after():
    from litellm.exceptions import RateLimitError

    config = SimulatorConfig(rpm=1, rate_limit_headers=False)
    with SimulatorServer(config) as server:
        reply = complete(server, "sim")
        with pytest.raises(RateLimitError) as caught:
            complete(server, "sim")

    assert not any("ratelimit" in name for name in reply._hidden_params["additional_headers"])
    limited = response_headers(caught.value)
    assert "retry-after" in limited
    assert "x-ratelimit-remaining-requests" not in limited
