"""Chat requests for the simulator tests, and a stdlib HTTP client that returns what a
client sees: status, headers (names lower-cased) and the decoded JSON body."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from judgecli.simulator.schema import SCHEMA_MARKER

QUESTION = "How do vaccines train the immune system to recognise a virus?"
ANSWER = (
    "Vaccines show the immune system a harmless piece or weakened form of a virus, so it "
    "learns to recognise the virus and makes antibodies and memory cells for later."
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
}
JSON_SCHEMA_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "verdict", "schema": SCHEMA, "strict": True},
}


def request(
    *,
    model: str = "sim",
    response_format: dict[str, Any] | None = None,
    schema_in_prompt: bool = True,
    answer: str = ANSWER,
) -> dict[str, Any]:
    """A pointwise judge request, as judgecli sends one: the schema in the system message
    (unless ``schema_in_prompt`` is False) and, optionally, a response_format."""
    system = "You are a strict grader."
    if schema_in_prompt:
        system += f"\n{SCHEMA_MARKER}\n```json\n{json.dumps(SCHEMA, indent=2)}\n```"
    user = f"<input>\n{QUESTION}\n</input>\n<output>\n{answer}\n</output>"
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }
    if response_format is not None:
        body["response_format"] = response_format
    return body


def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
    """POST ``body`` to the chat endpoint; status, lower-cased headers and the JSON reply."""
    data = json.dumps(body).encode()
    http_request = urllib.request.Request(
        f"{url}/v1/chat/completions", data=data, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(http_request, timeout=10) as reply:
            return reply.status, _lower(reply.headers), json.loads(reply.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, _lower(error.headers), json.loads(error.read())


def message_of(url: str, body: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The reply's message and finish_reason; fails the test unless the status is 200."""
    status, _, reply = post(url, body)
    assert status == 200, reply
    choice = reply["choices"][0]
    return choice["message"], choice["finish_reason"]


def _lower(headers: Any) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}
