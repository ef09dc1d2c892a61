"""Which ``response_format`` types a simulated server accepts, and how it refuses the rest.

Real OpenAI-compatible servers differ here, and a judge client has to find out which
structured-output mode works: OpenAI and vLLM take ``json_schema``; llama-cpp-python's
server takes only ``text`` and ``json_object`` (with an optional ``schema``) and answers
``json_schema`` with HTTP 500 carrying its request-validation error; some servers and
proxies refuse any ``response_format`` with HTTP 400; others take it and ignore it.

A setting is written as a preset name or as accepted types joined by ``+``:

* ``all`` (the default): every type is accepted and enforced;
* ``llama-cpp``: ``text`` and ``json_object``; ``json_schema`` gets llama-cpp-python's 500;
* ``none``: any ``response_format`` gets 400 "response_format is not supported";
* ``ignored``: every type is accepted and none enforced (the model never sees it);
* e.g. ``json_object+text``: those types; others get OpenAI's 400 "Invalid value".

A request without ``response_format`` is always accepted. Enforced means grammar-constrained:
a ``json_schema`` or ``json_object`` reply is a bare JSON object whatever the judge's style.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from judgecli.simulator.wire import api_error


class FormatType(StrEnum):
    """A ``response_format.type`` a server may accept."""

    JSON_SCHEMA = "json_schema"
    JSON_OBJECT = "json_object"
    TEXT = "text"


class FormatRejection(StrEnum):
    """How a server answers a ``response_format`` type it does not accept."""

    INVALID_VALUE = "invalid-value"
    """HTTP 400 as OpenAI answers an unknown type: "Invalid value: 'x'. Supported values..."."""
    UNSUPPORTED = "unsupported"
    """HTTP 400 "response_format is not supported"."""
    LLAMA_CPP = "llama-cpp"
    """HTTP 500 with llama-cpp-python's pydantic request-validation error as the message."""


# llama-cpp-python turns the failed request validation into a 500 whose message is the
# pydantic error and where it was raised (llama_cpp/server/errors.py, RouteErrorHandler).
# Captured from llama-cpp-python 0.3.36's server (python -m tests.local_llm.measure_formats),
# its install path shortened.
LLAMA_CPP_MESSAGE = (
    "1 validation error: {{'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': {value!r}, "
    "'ctx': {{'expected': \"'text' or 'json_object'\"}}}}\n\n"
    'File "site-packages/llama_cpp/server/app.py", line 376, in create_chat_completion\n'
    "POST /v1/chat/completions"
)
UNSUPPORTED_MESSAGE = "response_format is not supported"

_JSON_TYPES = frozenset({FormatType.JSON_SCHEMA, FormatType.JSON_OBJECT})


class ResponseFormats(BaseModel):
    """The ``response_format`` types one simulated server accepts, and what it does with them."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    accepted: frozenset[FormatType] | None = None
    """The types accepted; None accepts any type, even unknown ones."""
    enforced: bool = True
    """Whether an accepted JSON type constrains the reply (a grammar) or is ignored."""
    rejection: FormatRejection = FormatRejection.INVALID_VALUE
    """How a type outside `accepted` is refused."""

    def __str__(self) -> str:
        preset = next((name for name, f in PRESETS.items() if f == self), None)
        if preset is not None:
            return preset
        return "+".join(sorted(self.accepted or ())) or "none"

    def refusal(self, body: dict[str, Any]) -> tuple[int, str] | None:
        """The status and JSON error body refusing ``body``'s ``response_format``, or None."""
        kind = requested_type(body)
        if kind is None or self.accepted is None or kind in self.accepted:
            return None
        if self.rejection is FormatRejection.LLAMA_CPP:
            return 500, api_error(LLAMA_CPP_MESSAGE.format(value=kind), "internal_server_error")
        if self.rejection is FormatRejection.UNSUPPORTED:
            return 400, api_error(UNSUPPORTED_MESSAGE, "invalid_request_error", "response_format")
        supported = _english_list([f"'{t}'" for t in sorted(self.accepted)])
        message = f"Invalid value: '{kind}'. Supported values are: {supported}."
        return 400, api_error(
            message, "invalid_request_error", "response_format.type", "invalid_value"
        )

    def constrains(self, body: dict[str, Any]) -> bool:
        """Whether ``body``'s ``response_format`` forces the reply to be a JSON object."""
        return self.enforced and requested_type(body) in _JSON_TYPES


PRESETS: dict[str, ResponseFormats] = {
    "all": ResponseFormats(),
    "llama-cpp": ResponseFormats(
        accepted=frozenset({FormatType.TEXT, FormatType.JSON_OBJECT}),
        rejection=FormatRejection.LLAMA_CPP,
    ),
    "none": ResponseFormats(accepted=frozenset(), rejection=FormatRejection.UNSUPPORTED),
    "ignored": ResponseFormats(enforced=False),
}
FORMATS_HINT = (
    f"a preset ({', '.join(PRESETS)}) or types joined by '+' "
    f"({', '.join(FormatType)}), e.g. json_object+text"
)


def parse_formats(text: str) -> ResponseFormats:
    """A preset name or ``type+type...`` → `ResponseFormats`; ValueError naming the bad part."""
    spec = text.strip()
    if spec in PRESETS:
        return PRESETS[spec]
    accepted: set[FormatType] = set()
    for part in (p.strip() for p in spec.split("+")):
        try:
            accepted.add(FormatType(part))
        except ValueError:
            raise ValueError(f"unknown response format {part!r}: use {FORMATS_HINT}") from None
    return ResponseFormats(accepted=frozenset(accepted))


def requested_type(body: dict[str, Any]) -> str | None:
    """The request's ``response_format.type`` ("" when malformed), None when it has none."""
    response_format = body.get("response_format")
    if response_format is None:
        return None
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    return kind if isinstance(kind, str) else ""


def _english_list(items: list[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return f"{', '.join(items[:-1])}, and {items[-1]}"
