"""The simulator's OpenAI wire format: parse a chat-completion request, build the reply
and error bodies (with usage counts), cut a reply short, format ``Retry-After``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from typing import Any

from judgecli.simulator.styles import StyledReply

# Words of four letters or more carry content (what the simulator reads of a text).
WORD = re.compile(r"[a-z0-9']+")


def message_text(message: Any) -> str:
    """Return the text of one chat message, whether its content is a string or a part list.

    A list with images (judge's prompt of a case that shows them) reads as its parts in
    order with each image as `image_text` of its URL, so a field's text comes back as the
    case gave it; a list of text parts only is its texts joined by newlines.
    """
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [p for p in content if isinstance(p, dict)]
    if not any(p.get("type") == "image_url" for p in parts):
        texts = [p.get("text", "") for p in parts]
        return "\n".join(t for t in texts if isinstance(t, str))
    return "".join(
        image_text(image_url(p)) if p.get("type") == "image_url" else str(p.get("text", ""))
        for p in parts
    )


def image_url(part: dict[str, Any]) -> str:
    """The URL of an image part (`{"image_url": {"url": ...}}`, or the URL as a string)."""
    value = part.get("image_url")
    url = value.get("url") if isinstance(value, dict) else value
    return url if isinstance(url, str) else ""


def image_text(url: str) -> str:
    """How the simulator reads an image it is shown: `[image:` the first 12 hex digits of
    the sha256 of its URL (a data URL holds its bytes) `]`, so one image reads the same in
    every prompt and a truth file can name it (truth.py).
    """
    return f"[image:{hashlib.sha256(url.encode()).hexdigest()[:12]}]"


def content_words(text: str) -> set[str]:
    """The words of a text that carry content (lower-case, four letters or more)."""
    return {w for w in WORD.findall(text.lower()) if len(w) >= 4}


# About four characters per token, as OpenAI's rule of thumb.
CHARS_PER_TOKEN = 4


def _tokens(chars: int) -> int:
    return max(1, math.ceil(chars / CHARS_PER_TOKEN))  # never zero


def within_max_tokens(body: dict[str, Any], reply: StyledReply) -> StyledReply:
    """``reply`` cut at the request's ``max_tokens`` (reasoning first, then content) with
    ``finish_reason: "length"``, as a real server stops generating; whole when it fits.
    """
    limit = body.get("max_tokens")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        return reply
    room = CHARS_PER_TOKEN * limit
    reasoning = reply.reasoning or ""
    if len(reasoning) + len(reply.content) <= room:
        return reply
    return StyledReply(
        reply.content[: max(0, room - len(reasoning))],
        reasoning=None if reply.reasoning is None else reasoning[:room],
        finish_reason="length",
    )


def completion_body(
    body: dict[str, Any],
    reply: StyledReply,
    number: int,
    logprobs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Wrap ``reply`` in an OpenAI chat completion object with estimated usage.

    Its reasoning, if any, goes in ``message.reasoning_content`` as vLLM's reasoning parsers
    put it, and counts as completion tokens, as reasoning models bill it. ``logprobs`` (the
    content's tokens, `judgecli.simulator.logprobs`) goes in ``choices[0].logprobs``.
    """
    prompt_chars = sum(len(message_text(m)) for m in body.get("messages") or [])
    generated = len(reply.content) + len(reply.reasoning or "")
    prompt_tokens, completion_tokens = _tokens(prompt_chars), _tokens(generated)
    message = {"role": "assistant", "content": reply.content}
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": reply.finish_reason}
    if logprobs is not None:
        choice["logprobs"] = logprobs
    return {
        "id": f"chatcmpl-sim-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", ""),
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def truncated_body(completion: dict[str, Any]) -> bytes:
    """Return the first half of ``completion`` serialized: never valid JSON, as a response
    cut off by a provider or a proxy.
    """
    # ASCII-only (json.dumps escapes the rest), so any cut is a whole number of characters;
    # a strict prefix of a JSON object lacks its closing brace, so it never parses.
    raw = json.dumps(completion).encode("ascii")
    return raw[: len(raw) // 2]


def retry_after_header(seconds: float) -> str:
    """Format a ``Retry-After`` value like "1", "0.5" or "0.05"."""
    rounded = round(seconds, 3)
    return str(int(rounded)) if rounded == int(rounded) else repr(rounded)


def error_body(status: int, message: str | None = None) -> str:
    """Return an OpenAI-shaped JSON error for ``status``."""
    if status == 429:
        error = {
            "message": message or "simulated rate limit",
            "type": "rate_limit_error",
            "code": "rate_limit_exceeded",
        }
    elif status >= 500:
        error = {"message": message or "simulated server error", "type": "server_error"}
    else:
        error = {"message": message or f"simulated HTTP {status}", "type": "invalid_request_error"}
    return json.dumps({"error": error})


def api_error(
    message: str,
    kind: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> str:
    """Return an OpenAI error body with all four fields, as the API sends them."""
    return json.dumps({"error": {"message": message, "type": kind, "param": param, "code": code}})


def parse_request(raw: bytes) -> tuple[dict[str, Any], str | None]:
    """Return the chat completion request body and, when the simulator rejects it, why."""
    try:
        body = json.loads(raw)
    except ValueError:
        return {}, "request body is not valid JSON"
    if not isinstance(body, dict):
        return {}, "request body must be a JSON object"
    return body, request_problem(body)


def request_problem(body: dict[str, Any]) -> str | None:
    """Why the simulator rejects a parsed chat completion request, or None: online with a
    400, in a batch input file by failing the batch.
    """
    if body.get("stream"):
        return "the simulator does not stream; send stream: false"
    if not isinstance(body.get("messages"), list):
        return "messages must be a list"
    return None
