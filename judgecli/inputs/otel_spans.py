"""Spans as an OTLP JSON export writes them (the protobuf JSON mapping of
`ExportTraceServiceRequest`): documents of `resourceSpans`, each span's ids, times,
attributes (`AnyValue`s) and events read into a Span; the spans of one trace into a Trace.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

OTLP_SHAPE = '{"resourceSpans": [{"resource": {...}, "scopeSpans": [{"spans": [...]}]}]}'


@dataclass
class Span:
    """One span as the reader needs it: its ids, name, times, attributes and events."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start: int
    end: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status: dict[str, Any]
    resource: dict[str, Any]
    line: int | None
    """The file's line (one document a line), else None."""

    @property
    def shown(self) -> str:
        """The span as messages name it: `span 00f067aa0ba902b7 ("chat gpt-4o")`."""
        return f'span {self.span_id or "?"} ("{self.name}")'

    @property
    def genai(self) -> bool:
        """Whether the span has any GenAI attribute (or event)."""
        return any(key.startswith("gen_ai.") for key in self.attributes) or any(
            name.startswith("gen_ai.") for name, _ in self.events
        )


@dataclass
class Trace:
    """The spans of one trace, in the order read."""

    trace_id: str
    spans: list[Span] = field(default_factory=list)

    @property
    def line(self) -> int | None:
        """The line of its first span (one document a line)."""
        return self.spans[0].line if self.spans else None


def any_value(value: Any, where: str) -> Any:
    """An OTLP JSON `AnyValue` as a plain value (ints given as strings read as ints; an
    array or key-value list read whole); ValueError naming `where` for another shape.
    """
    if not isinstance(value, dict):
        raise ValueError(
            f"{where}: an attribute value must be an object such as "
            f'{{"stringValue": "..."}}, got {type(value).__name__}'
        )
    if not value:
        return None
    kind, inner = next(iter(value.items()))
    if kind == "stringValue" or kind == "boolValue" or kind == "doubleValue":
        return inner
    if kind == "intValue":
        return int(inner)
    if kind == "bytesValue":
        return base64.b64decode(inner).decode("utf-8", "replace")
    if kind == "arrayValue":
        return [any_value(v, where) for v in (inner or {}).get("values") or []]
    if kind == "kvlistValue":
        return attributes((inner or {}).get("values") or [], where)
    raise ValueError(f"{where}: unknown attribute value kind {kind!r}")


def attributes(values: Any, where: str) -> dict[str, Any]:
    """OTLP JSON key-value pairs (`[{"key": ..., "value": {...}}]`) as a dict."""
    if not isinstance(values, list):
        raise ValueError(f'{where}: attributes must be a list of {{"key", "value"}}')
    found: dict[str, Any] = {}
    for pair in values:
        if not isinstance(pair, dict) or not isinstance(pair.get("key"), str):
            raise ValueError(f'{where}: an attribute without a "key": {pair!r}')
        found[pair["key"]] = any_value(pair.get("value") or {}, f"{where} {pair['key']!r}")
    return found


def nanos(value: Any) -> int:
    """A `...UnixNano` time (a string or a number) as an int; 0 when absent."""
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def read_span(raw: Any, resource: dict[str, Any], line: int | None) -> Span:
    """One span of a document, or ValueError naming it."""
    if not isinstance(raw, dict):
        raise ValueError(f"a span must be an object, got {type(raw).__name__}")
    span_id = str(raw.get("spanId") or "")
    where = f'span {span_id or "?"} ("{raw.get("name", "")}")'
    trace_id = raw.get("traceId")
    if not isinstance(trace_id, str) or not trace_id:
        raise ValueError(f'{where} has no "traceId"')
    events = []
    for event in raw.get("events") or []:
        if not isinstance(event, dict):
            raise ValueError(f"{where}: an event must be an object")
        name = str(event.get("name") or "")
        events.append((name, attributes(event.get("attributes") or [], f"{where} event {name}")))
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=str(raw.get("parentSpanId") or ""),
        name=str(raw.get("name") or ""),
        start=nanos(raw.get("startTimeUnixNano")),
        end=nanos(raw.get("endTimeUnixNano")),
        attributes=attributes(raw.get("attributes") or [], where),
        events=events,
        status=status if isinstance(status := raw.get("status"), dict) else {},
        resource=resource,
        line=line,
    )


def document_spans(document: Any, line: int | None) -> Iterator[Span]:
    """Every span of one OTLP JSON document (`resourceSpans`, or the older
    `instrumentationLibrarySpans` inside them), or ValueError naming what is wrong.
    """
    if not isinstance(document, dict) or not isinstance(document.get("resourceSpans"), list):
        raise ValueError(f"not an OTLP JSON export of traces (expected {OTLP_SHAPE})")
    for resource_spans in document["resourceSpans"]:
        if not isinstance(resource_spans, dict):
            raise ValueError("each of resourceSpans must be an object")
        resource = attributes(
            (resource_spans.get("resource") or {}).get("attributes") or [], "resource"
        )
        scopes = resource_spans.get("scopeSpans") or resource_spans.get(
            "instrumentationLibrarySpans"
        )
        for scope in scopes or []:
            for raw in (scope or {}).get("spans") or []:
                yield read_span(raw, resource, line)
