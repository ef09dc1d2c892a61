"""Classifying failed calls, and saying what went wrong in one line."""

from __future__ import annotations

import socket

import pytest

from judgecli.judge.failures import (
    Endpoint,
    FailureKind,
    classify,
    describe,
    from_provider,
    likely_fix,
)


def error(name: str, message: str = "", *, status: int | None = None, cause=None):
    """An exception shaped like LiteLLM's: a class name, a status code, a message."""
    cls = type(name, (Exception,), {})
    err = cls(message)
    err.message = message
    if status is not None:
        err.status_code = status
    err.__cause__ = cause
    return err


REFUSED = ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 9)")


@pytest.mark.parametrize(
    ("err", "sent", "kind"),
    [
        pytest.param(
            error(
                "InternalServerError",
                "Connection error.",
                status=500,
                cause=error("APIConnectionError", cause=REFUSED),
            ),
            False,
            FailureKind.UNREACHABLE,
            id="refused-looks-like-500",
        ),
        pytest.param(
            error(
                "InternalServerError",
                "Connection error.",
                status=500,
                cause=socket.gaierror(-2, "Name or service not known"),
            ),
            False,
            FailureKind.UNREACHABLE,
            id="unknown-host",
        ),
        pytest.param(
            error(
                "InternalServerError",
                "OpenAIException - Missing credentials. Please pass an `api_key`",
                status=500,
            ),
            False,
            FailureKind.ENDPOINT,
            id="missing-key-looks-like-500",
        ),
        pytest.param(
            error(
                "BadRequestError",
                "LLM Provider NOT provided. You passed model=notaprovider/foo",
                status=400,
            ),
            True,
            FailureKind.ENDPOINT,
            id="unknown-provider-even-with-a-format",
        ),
        pytest.param(
            error("AuthenticationError", "bad key", status=401),
            False,
            FailureKind.ENDPOINT,
            id="401",
        ),
        pytest.param(
            error("PermissionDeniedError", "no", status=403), False, FailureKind.ENDPOINT, id="403"
        ),
        pytest.param(
            error("NotFoundError", "404: Not Found", status=404),
            False,
            FailureKind.ENDPOINT,
            id="404-wrong-path",
        ),
        pytest.param(
            error("BadRequestError", "The model `gpt-9` does not exist", status=400),
            True,
            FailureKind.ENDPOINT,
            id="model-missing",
        ),
        pytest.param(
            error("RateLimitError", "slow down", status=429),
            True,
            FailureKind.RATE_LIMITED,
            id="429",
        ),
        pytest.param(
            error("Timeout", "timed out", status=408), False, FailureKind.TRANSIENT, id="timeout"
        ),
        pytest.param(TimeoutError(), False, FailureKind.TRANSIENT, id="our-timeout"),
        pytest.param(
            error("InternalServerError", "boom", status=500), False, FailureKind.TRANSIENT, id="500"
        ),
        pytest.param(
            error("ServiceUnavailableError", "later", status=503),
            True,
            FailureKind.TRANSIENT,
            id="503",
        ),
        pytest.param(
            error("APIConnectionError", "Server disconnected"),
            False,
            FailureKind.TRANSIENT,
            id="dropped-connection",
        ),
        pytest.param(
            error(
                "APIError",
                "Hosted_vllmException - Unable to get json response - Unterminated string",
                status=200,
            ),
            True,
            FailureKind.TRANSIENT,
            id="truncated-200-body",
        ),
        pytest.param(
            error(
                "InternalServerError",
                "1 validation error for "
                "CreateChatCompletionRequest response_format.type Input should be "
                "'text' or 'json_object'",
                status=500,
            ),
            True,
            FailureKind.FORMAT,
            id="llama-cpp-500-on-json-schema",
        ),
        pytest.param(
            error("InternalServerError", "1 validation error ... response_format", status=500),
            False,
            FailureKind.TRANSIENT,
            id="format-words-but-no-format-sent",
        ),
        pytest.param(
            error("BadRequestError", "response_format is not supported", status=400),
            True,
            FailureKind.FORMAT,
            id="400-with-a-format",
        ),
        pytest.param(
            error("UnsupportedParamsError", "response_format not supported"),
            True,
            FailureKind.FORMAT,
            id="litellm-unsupported-param",
        ),
        pytest.param(
            error("BadRequestError", "temperature is not supported", status=400),
            False,
            FailureKind.REQUEST,
            id="400-without-a-format",
        ),
        pytest.param(
            error("ContextWindowExceededError", "too long", status=400),
            True,
            FailureKind.REFUSED,
            id="context-window",
        ),
        pytest.param(
            error("ContentPolicyViolationError", "refused", status=400),
            False,
            FailureKind.REFUSED,
            id="content-policy",
        ),
    ],
)
def test_failures_are_classified_by_what_they_mean(err, sent, kind):
    assert classify(err, sent_format=sent) is kind


def test_describe_keeps_the_servers_whole_message_on_one_line():
    # Regression (issue 13): llama.cpp's 500 was cut to "1 validation error:".
    err = error(
        "InternalServerError",
        "litellm.InternalServerError: InternalServerError: OpenAIException - 1 validation "
        "error for CreateChatCompletionRequest\nresponse_format.type\n  Input should be 'text' "
        "or 'json_object' [type=literal_error]\nGive Feedback / Get Help: https://x",
        status=500,
    )
    assert describe(err) == (
        "HTTP 500 InternalServerError: OpenAIException - 1 validation error for "
        "CreateChatCompletionRequest response_format.type Input should be 'text' or "
        "'json_object' [type=literal_error]"
    )


def test_describe_gives_the_servers_words_not_the_routes_provider_or_its_json():
    # An OpenAI-compatible server is called through LiteLLM's hosted_vllm provider
    # (route.py), which names itself and passes the server's error body on whole.
    err = error(
        "RateLimitError",
        "litellm.RateLimitError: RateLimitError: Hosted_vllmException - "
        '{"error": {"message": "slow down", "type": "rate_limit_error"}}',
        status=429,
    )
    assert describe(err) == "HTTP 429 RateLimitError: slow down"
    lines = error(
        "InternalServerError",
        'Hosted_vllmException - {"error": {"message": "1 validation error:\\n {\'type\'}"}}',
        status=500,
    )
    assert describe(lines) == "HTTP 500 InternalServerError: 1 validation error: {'type'}"
    timeout = error(
        "Timeout", "Timeout Error: Hosted_vllmException - Connection timed out", status=408
    )
    assert describe(timeout) == "HTTP 408 Timeout: Timeout Error: Connection timed out"
    bare = error("InternalServerError", "Hosted_vllmException - {not json", status=500)
    assert describe(bare) == "HTTP 500 InternalServerError: {not json"


def test_describe_names_the_refused_address_not_a_500():
    # LiteLLM maps a refused connection to "HTTP 500 ... Connection error.": no server
    # answered, and which address refused is deep in the cause chain.
    err = error("InternalServerError", "Connection error.", status=500, cause=REFUSED)
    assert describe(err) == (
        "cannot connect (ConnectionRefusedError: [Errno 111] Connect call failed ('127.0.0.1', 9))"
    )


def test_describe_masks_secrets():
    err = error("AuthenticationError", "Incorrect API key provided: sk-abcdefgh1234", status=401)
    assert "sk-abcdefgh1234" not in describe(err)
    assert describe(err, ["hunter2-secret"]).startswith("HTTP 401 AuthenticationError")
    # A secret passed in is masked too (the message above does not hold it).
    named = error("AuthenticationError", "key hunter2-secret was refused", status=401)
    assert "hunter2-secret" not in describe(named, ["hunter2-secret"])


LOCAL = Endpoint(model="openai/sim", api_base="http://127.0.0.1:8080")


@pytest.mark.parametrize(
    ("kind", "status", "message", "endpoint", "fix"),
    [
        (
            FailureKind.UNREACHABLE,
            500,
            "Connection error.",
            LOCAL,
            "nothing answers at http://127.0.0.1:8080",
        ),
        (
            FailureKind.ENDPOINT,
            404,
            "Not Found",
            LOCAL,
            "check --api-base; OpenAI-compatible servers usually end in /v1",
        ),
        (
            FailureKind.ENDPOINT,
            500,
            "Missing credentials",
            Endpoint("openai/gpt-4o", None),
            "set OPENAI_API_KEY",
        ),
        (
            FailureKind.ENDPOINT,
            401,
            "bad key",
            Endpoint("anthropic/claude-x", None),
            "the key was refused",
        ),
        (
            FailureKind.ENDPOINT,
            400,
            "LLM Provider NOT provided",
            Endpoint("foo/bar", None),
            "LiteLLM does not know the provider",
        ),
        (
            FailureKind.ENDPOINT,
            404,
            "model not found",
            Endpoint("openai/x", "http://h:1/v1"),
            "check the model name 'openai/x'",
        ),
    ],
)
def test_the_likely_fix_names_what_to_change(kind, status, message, endpoint, fix):
    assert fix in likely_fix(kind, status, message, endpoint)


def test_only_errors_from_the_way_to_the_provider_are_call_failures():
    import httpx

    assert from_provider(httpx.ConnectError("refused"))
    assert from_provider(ConnectionRefusedError())
    assert from_provider(TimeoutError())
    assert not from_provider(TypeError("a bug of ours"))
    assert not from_provider(KeyError("model"))
