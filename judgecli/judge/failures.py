"""What a failed judge call means: retry it, step down the response format, fail the case,
or stop the run because the endpoint itself is unusable.

LiteLLM maps every provider error onto the OpenAI exception tree, but not always onto the
right branch: a refused connection and a missing API key both arrive as
`InternalServerError` (HTTP 500), which looks retryable (docs/ecosystem.md, "Errors that
look retryable"). So the class, the status code, the message and the exception's cause
chain are read together.
Pure: no LiteLLM import (exceptions are recognised by their class names and attributes),
so every rule is tested with plain exceptions.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit


class FailureKind(StrEnum):
    """How the client treats a failed call."""

    TRANSIENT = "transient"
    """5xx, timeouts, dropped connections: retried with backoff."""
    RATE_LIMITED = "rate-limited"
    """429: paced and retried; it says nothing about the endpoint's health."""
    UNREACHABLE = "unreachable"
    """Nothing answers at the address (refused, unknown host): retried briefly, then fatal."""
    ENDPOINT = "endpoint"
    """The endpoint cannot serve this run at all (key, provider, URL, model): fatal at once."""
    FORMAT = "format"
    """The server rejected the structured-output request: try the next response format."""
    REQUEST = "request"
    """The server refused the request (a 400 that is not about the format): the case fails;
    the same refusal on every first call trips the breaker."""
    REFUSED = "refused"
    """This case's content was refused (too long for the context window, content policy):
    the case fails and says nothing about the endpoint."""


# LiteLLM/OpenAI class names that settle the kind whatever the status says.
REQUEST_CLASSES = frozenset({"ContextWindowExceededError", "ContentPolicyViolationError"})
TIMEOUT_CLASSES = frozenset({"Timeout", "APITimeoutError", "TimeoutError"})
CREDENTIALS = re.compile(r"missing credentials|api_key client option must be set|no api key", re.I)
PROVIDER = re.compile(r"LLM Provider NOT provided", re.I)
MODEL_MISSING = re.compile(
    r"model .{0,80}(not found|does not exist)|unknown model|no such model", re.I
)
FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|grammar", re.I)


def cause_chain(error: BaseException) -> list[BaseException]:
    """The error and everything it was raised from (LiteLLM wraps openai wraps httpx wraps
    aiohttp wraps the OS error), without looping.
    """
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def class_names(error: BaseException) -> set[str]:
    """The names of the error's classes (LiteLLM's and OpenAI's share names)."""
    return {cls.__name__ for cls in type(error).__mro__}


def unreachable(error: BaseException) -> bool:
    """Nothing answered at the address: the connection was refused or the host unknown."""
    return any(isinstance(e, ConnectionRefusedError | socket.gaierror) for e in cause_chain(error))


# Where the exceptions of a call to a provider come from; anything else raised during a call
# is a bug of ours, and must surface as one (a crash), not as "the judge cannot be used".
PROVIDER_MODULES = ("litellm", "openai", "httpx", "httpcore", "aiohttp")


def from_provider(error: BaseException) -> bool:
    """Whether a call's error came from the provider or the way to it (LiteLLM, its HTTP
    clients, the network, a timeout), rather than from judge's own code.
    """
    if isinstance(error, OSError | TimeoutError):
        return True
    return type(error).__module__.split(".")[0] in PROVIDER_MODULES


def classify(error: BaseException, *, sent_format: bool) -> FailureKind:
    """The kind of a failed call; `sent_format` says whether it carried a response_format."""
    names = class_names(error)
    status = getattr(error, "status_code", None)
    message = str(getattr(error, "message", "") or error)
    if unreachable(error):
        return FailureKind.UNREACHABLE
    if names & TIMEOUT_CLASSES or isinstance(error, asyncio.TimeoutError):
        return FailureKind.TRANSIENT
    if status == 429 or "RateLimitError" in names:
        return FailureKind.RATE_LIMITED
    if names & REQUEST_CLASSES:
        return FailureKind.REFUSED
    if CREDENTIALS.search(message) or PROVIDER.search(message):
        return FailureKind.ENDPOINT
    if sent_format and format_rejected(status, names, message):
        return FailureKind.FORMAT
    if status in (401, 403, 404) or MODEL_MISSING.search(message):
        return FailureKind.ENDPOINT
    if status is not None and status >= 500 or "APIConnectionError" in names:
        return FailureKind.TRANSIENT
    if status is not None and status < 400:
        # A reply that said 200 but did not arrive whole: LiteLLM's own HTTP handler
        # (route.py) reports a truncated body as "HTTP 200 APIError: Unable to get json
        # response", where the openai SDK reports a dropped connection.
        return FailureKind.TRANSIENT
    return FailureKind.REQUEST


def format_rejected(status: int | None, names: set[str], message: str) -> bool:
    """Whether a failure of a call that carried a response_format is the server refusing
    that format. A 400/422 is taken as one whatever it says (the next format is one cheap
    probe, and an error that is not about the format comes back on every format); a 500
    only when it names the format, as llama.cpp's request validation does.
    """
    if "UnsupportedParamsError" in names:
        return True
    if status in (400, 422):
        return not PROVIDER.search(message) and not MODEL_MISSING.search(message)
    return status == 500 and bool(FORMAT_WORDS.search(message))


@dataclass(frozen=True)
class Endpoint:
    """Where a judge is reached, for the hints that name it."""

    model: str
    api_base: str | None


def likely_fix(kind: FailureKind, status: int | None, message: str, endpoint: Endpoint) -> str:
    """The most likely fix for an endpoint that cannot serve the run, in one line."""
    base = endpoint.api_base
    provider = endpoint.model.split("/", 1)[0] if "/" in endpoint.model else ""
    if kind is FailureKind.UNREACHABLE:
        where = base or f"the {provider or 'provider'} API"
        return f"nothing answers at {where}: start the server, or check --api-base"
    if CREDENTIALS.search(message):
        key = f"{provider.upper()}_API_KEY" if provider else "the provider's API key"
        return f"set {key}, or pass --api-base URL for a keyless OpenAI-compatible server"
    if PROVIDER.search(message):
        return (
            f"LiteLLM does not know the provider of {endpoint.model!r}: write it as "
            "provider/model (e.g. openai/gpt-4o-mini); for an OpenAI-compatible server use "
            "--model openai/NAME --api-base URL"
        )
    if status in (401, 403):
        return "the key was refused: check the API key and that it may use this model"
    if base and status == 404 and not urlsplit(base).path.rstrip("/").endswith("/v1"):
        return "check --api-base; OpenAI-compatible servers usually end in /v1"
    if base:
        return f"check the model name {endpoint.model!r} and --api-base {base}"
    return f"check the model name {endpoint.model!r}"


# Things that look like credentials, in case a provider echoes one we were not told about.
CREDENTIAL = re.compile(
    r"(sk-[A-Za-z0-9_\-]{8,}|Bearer\s+[A-Za-z0-9._\-]{8,}|key=[A-Za-z0-9_\-]{8,})"
)
# LiteLLM's own additions to a provider's message: its class-name prefixes, retry notes and
# help banners.
LITELLM_NOISE = (
    re.compile(r"\blitellm\.(\w+Error):\s*"),
    re.compile(r"\s*LiteLLM Retried:.*$", re.S),
    re.compile(r"\s*(Give Feedback / Get Help|Received Model Group|Learn more:).*$", re.S),
)
MAX_ERROR_CHARS = 2000
# The provider that carries an OpenAI-compatible server's calls (route.py) names itself in
# each message (at its start, or inside LiteLLM's own words), though the user wrote
# openai/NAME.
ROUTE_PREFIX = "Hosted_vllmException - "


def server_words(text: str) -> str:
    """The message without the route's provider name, and an OpenAI-style error body
    (`{"error": {"message": ...}}`, which LiteLLM's own HTTP handler passes on whole) as its
    message.
    """
    text = text.replace(ROUTE_PREFIX, "")
    if not text.startswith("{"):
        return text
    try:
        body = json.loads(text)
    except ValueError:
        return text
    inner = body.get("error") if isinstance(body, dict) else None
    message = inner.get("message") if isinstance(inner, dict) else None
    return message if isinstance(message, str) and message else text


def scrub(text: str, secrets: list[str]) -> str:
    """The text with every known secret and anything key-shaped masked: LiteLLM exceptions
    can echo request headers, and error messages end up in results.jsonl and logs.
    """
    for secret in secrets:
        text = text.replace(secret, "***")
    return CREDENTIAL.sub("***", text)


def describe(error: BaseException, secrets: list[str] | None = None) -> str:
    """A call error on one line: `HTTP 500 InternalServerError: <the server's words in
    full>`, without secrets or LiteLLM's banners. A server's own message is kept whole
    (llama.cpp's "1 validation error for … Input should be 'text' or 'json_object'" spans
    lines, and its first line alone says nothing).
    """
    status = getattr(error, "status_code", None)
    if unreachable(error):
        # LiteLLM says "HTTP 500 ... Connection error." for a refused connection: no server
        # answered at all, so no status; the OS's words name the address.
        root = cause_chain(error)[-1]
        return scrub(f"cannot connect ({type(root).__name__}: {root})", secrets or [])
    name = type(error).__name__
    text = str(getattr(error, "message", "") or error)
    for pattern in LITELLM_NOISE:
        text = pattern.sub("", text)
    text = " ".join(text.split())
    if name and text.startswith(f"{name}: "):
        text = text[len(name) + 2 :]
    text = " ".join(server_words(text).split())
    text = f"{name}: {text}" if text else name
    if len(text) > MAX_ERROR_CHARS:
        text = text[:MAX_ERROR_CHARS] + " …"
    return scrub(f"HTTP {status} {text}" if status else text, secrets or [])
