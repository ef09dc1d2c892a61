"""The verdict schema a judge request carries, and how to walk it: where the simulator finds
it (``response_format``, or the json fence judgecli writes into the prompt) and how it reads
pydantic-made nodes (``$ref``, single-branch ``anyOf``, nullable type lists).
"""

from __future__ import annotations

import json
import re
from typing import Any

from judgecli.simulator.wire import message_text

SCHEMA_MARKER = "Reply with a single JSON object that matches this JSON schema:"
"""The sentence before the json fence that holds the schema in judgecli's prompt."""

_SCHEMA_FENCE = re.compile(re.escape(SCHEMA_MARKER) + r"\s*```json\s*\n(.*?)\n\s*```", re.DOTALL)


def find_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """Return the verdict JSON schema from ``response_format`` or from the prompt's json fence.

    ``response_format`` holds it as ``{"type": "json_schema", "json_schema": {"schema": ...}}``
    (OpenAI) or as ``{"type": "json_object", "schema": ...}`` (llama-cpp-python's server).
    """
    response_format = body.get("response_format")
    if isinstance(response_format, dict):
        kind = response_format.get("type")
        if kind == "json_schema":
            schema = (response_format.get("json_schema") or {}).get("schema")
        else:
            schema = response_format.get("schema") if kind == "json_object" else None
        if isinstance(schema, dict):
            return schema
    messages = body.get("messages") or []
    # System messages first: that is where judgecli puts the schema; the rest is a fallback.
    ordered = sorted(
        messages, key=lambda m: not (isinstance(m, dict) and m.get("role") == "system")
    )
    for message in ordered:
        match = _SCHEMA_FENCE.search(message_text(message))
        if match:
            try:
                schema = json.loads(match.group(1))
            except ValueError:
                continue
            if isinstance(schema, dict):
                return schema
    return None


def resolve_node(node: Any, root: dict[str, Any]) -> dict[str, Any]:
    """Follow ``$ref`` and single-branch ``anyOf``/``allOf`` as pydantic-made schemas use them."""
    for _ in range(16):  # refs can chain; a bound keeps a cyclic schema from hanging a request
        if not isinstance(node, dict):
            return {}
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = root
            for key in ref[2:].split("/"):
                target = target.get(key, {}) if isinstance(target, dict) else {}
            node = target
            continue
        branches = node.get("anyOf") or node.get("oneOf") or node.get("allOf")
        if isinstance(branches, list) and branches and "type" not in node:
            non_null = [
                b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")
            ]
            node = non_null[0] if non_null else branches[0]
            continue
        return node
    return {}


def node_type(node: dict[str, Any]) -> str:
    """The node's JSON type: the first non-null of a type list, "object" for bare properties."""
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and "properties" in node:
        return "object"
    return kind if isinstance(kind, str) else ""


def numeric_enum(values: Any) -> bool:
    """Whether an enum lists numbers only (not bools, which JSON keeps apart)."""
    return (
        isinstance(values, list)
        and bool(values)
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    )
