"""OpenTelemetry traces as cases: an OTLP JSON export of spans that follow the GenAI
semantic conventions, read into one case per trace whose `messages` are the agent's run
(docs/agents.md, "OpenTelemetry traces").

A file named `*.otel.json` or `*.otlp.json` (also `.jsonl`) is read this way: one OTLP JSON
document (`{"resourceSpans": [...]}`, the protobuf JSON mapping an OTLP/HTTP exporter
sends), or one document a line, as the OpenTelemetry Collector's file exporter writes.
The spans are grouped by `traceId`, and each trace that holds GenAI spans is one case
(`otel_runs.trace_run` builds its run); a trace without any `gen_ai.*` attribute (a web
server's own spans in the same export) is no case. A row's number is the trace's, in the
order of first appearance; messages name the file's line (one document a line) and the
trace.

The whole file is read before the first case (a trace's spans may be anywhere in it); the
cases are kept (copies.py) to be read back by `judge pairwise` and `judge arena`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judgecli.errors import DatasetError
from judgecli.inputs.copies import CopiedSource
from judgecli.inputs.jsonl import open_input
from judgecli.inputs.otel_runs import TraceError, trace_fields
from judgecli.inputs.otel_spans import OTLP_SHAPE, Trace, document_spans
from judgecli.inputs.rows import Format


class OtelSource(CopiedSource):
    """An OTLP JSON export of GenAI spans, one case per trace (module docstring)."""

    format = Format.OTEL
    unit = "trace"

    def __init__(self, path: Path, *, seekable: bool = False) -> None:
        super().__init__(path, str(path), seekable=seekable)
        self._where: dict[int, tuple[int | None, str]] = {}

    def error(self, number: int | None, problem: str, *, hint: str | None = None) -> DatasetError:
        """A DatasetError naming the file, the line and the trace (`t.otel.json:3: trace
        4bf92f35...: ...`).
        """
        if number is None or number not in self._where:
            return DatasetError(self.name, None, problem, hint=hint)
        line, trace_id = self._where[number]
        return DatasetError(self.name, line, f"trace {trace_id}: {problem}", hint=hint)

    def traces(self) -> list[Trace]:
        """The file's spans, grouped by trace in the order of first appearance."""
        with open_input(self.path, "rb") as handle:
            data = handle.read()
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            line = data[: err.start].count(b"\n") + 1
            raise DatasetError(
                self.name, line, "not UTF-8", hint="save the file as UTF-8"
            ) from None
        traces: dict[str, Trace] = {}
        for line, document in self.documents(text):
            try:
                for span in document_spans(document, line):
                    traces.setdefault(span.trace_id, Trace(span.trace_id)).spans.append(span)
            except ValueError as err:
                raise DatasetError(
                    self.name, line, str(err), hint=f"an OTLP JSON export of traces is {OTLP_SHAPE}"
                ) from None
        return list(traces.values())

    def documents(self, text: str) -> list[tuple[int | None, Any]]:
        """The file's OTLP JSON documents: the whole file, or one a line."""
        hint = (
            "an OTLP JSON export is one JSON document, or one document a line (the "
            "Collector's file exporter)"
        )
        if not text.strip():
            return []
        try:
            whole_file = json.loads(text)
            # A file of one line (one document a line, once) names its line too.
            return [(1 if len(text.strip().splitlines()) == 1 else None, whole_file)]
        except json.JSONDecodeError as whole:
            # "Extra data" after a whole first document: one document a line.
            if whole.msg != "Extra data":
                raise DatasetError(
                    self.name,
                    whole.lineno,
                    f"not JSON ({whole.msg}, column {whole.colno})",
                    hint=hint,
                ) from None
        found: list[tuple[int | None, Any]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                found.append((number, json.loads(line)))
            except json.JSONDecodeError as err:
                raise DatasetError(
                    self.name, number, f"not JSON ({err.msg}, column {err.colno})", hint=hint
                ) from None
        return found

    def read_rows(self) -> Iterator[tuple[int, dict[str, Any]]]:  # noqa: D102
        number = 0
        for trace in self.traces():
            if not any(span.genai for span in trace.spans):
                continue
            number += 1
            self._where[number] = (trace.line, trace.trace_id)
            try:
                fields = trace_fields(trace)
            except TraceError as err:
                raise self.error(number, err.problem, hint=err.hint) from None
            yield number, fields
