"""The HTTP side of the simulated Files and Batch APIs: OpenAI's routes, request checks and
error bodies, over the `ServerState`'s file store and batches.

- ``POST /v1/files`` (multipart ``purpose`` and ``file``), ``GET /v1/files/{id}`` and
  ``GET /v1/files/{id}/content`` (the raw bytes);
- ``POST /v1/batches``, ``GET /v1/batches`` (newest first), ``GET /v1/batches/{id}`` (which
  moves the batch one step: `judgecli.simulator.batches`) and
  ``POST /v1/batches/{id}/cancel``.

Each batch line is answered as the same request sent online (`ServerState.plan_line`, then
`Replier.completion`) and recorded with its batch's id and its ``custom_id``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from aiohttp import web

from judgecli.simulator.batch_input import BatchLine, read_batch_input
from judgecli.simulator.batches import Batch, BatchRequest, LineResult
from judgecli.simulator.config import Fault
from judgecli.simulator.files import UPLOAD_PURPOSES
from judgecli.simulator.state import Action, ServerState
from judgecli.simulator.wire import api_error, error_body

ENDPOINT = "/v1/chat/completions"
"""The one endpoint the simulator batches."""
COMPLETION_WINDOW = "24h"
"""The one completion window OpenAI offers."""
_LIST_LIMIT = 20
"""Batches a list returns unless ``limit`` says otherwise, as OpenAI's default."""


def _error(status: int, message: str, param: str | None = None) -> web.Response:
    """An OpenAI-shaped error response."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    return web.Response(
        status=status, text=api_error(message, kind, param), content_type="application/json"
    )


class BatchApi:
    """The Files and Batch API handlers over one `ServerState`."""

    def __init__(self, state: ServerState) -> None:
        """Serve ``state``'s files and batches."""
        self.state = state

    def add_routes(self, app: web.Application) -> None:
        """Register the Files and Batch API routes on ``app``."""
        app.router.add_post("/v1/files", self.upload)
        app.router.add_get("/v1/files/{file_id}", self.file)
        app.router.add_get("/v1/files/{file_id}/content", self.content)
        app.router.add_post("/v1/batches", self.create)
        app.router.add_get("/v1/batches", self.listing)
        app.router.add_get("/v1/batches/{batch_id}", self.retrieve)
        app.router.add_post("/v1/batches/{batch_id}/cancel", self.cancel)

    async def upload(self, request: web.Request) -> web.Response:
        """``POST /v1/files``: store the multipart ``file`` for its ``purpose``."""
        try:
            form = await request.post()
        except ValueError:
            return _error(400, "The request body must be multipart/form-data.")
        purpose, upload = form.get("purpose"), form.get("file")
        if not isinstance(upload, web.FileField):
            return _error(400, "Missing required parameter: 'file'.", "file")
        if not isinstance(purpose, str) or not purpose:
            return _error(400, "Missing required parameter: 'purpose'.", "purpose")
        if purpose not in UPLOAD_PURPOSES:
            supported = ", ".join(sorted(UPLOAD_PURPOSES))
            message = f"Invalid value: '{purpose}'. Supported values are: {supported}."
            return _error(400, message, "purpose")
        stored = self.state.files.add(upload.filename, purpose, upload.file.read())
        return web.json_response(stored.as_object())

    async def file(self, request: web.Request) -> web.Response:
        """``GET /v1/files/{id}``: the file object."""
        stored = self.state.files.get(request.match_info["file_id"])
        if stored is None:
            return _no_such("File", request.match_info["file_id"])
        return web.json_response(stored.as_object())

    async def content(self, request: web.Request) -> web.Response:
        """``GET /v1/files/{id}/content``: the file's bytes, as stored."""
        stored = self.state.files.get(request.match_info["file_id"])
        if stored is None:
            return _no_such("File", request.match_info["file_id"])
        return web.Response(body=stored.content, content_type="application/octet-stream")

    async def create(self, request: web.Request) -> web.Response:
        """``POST /v1/batches``: start a batch over an uploaded input file."""
        try:
            body = json.loads(await request.read())
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return _error(400, "The request body must be a JSON object.")
        checked = self._batch_request(body, request)
        if isinstance(checked, web.Response):
            return checked
        stored = self.state.files.get(checked.input_file_id)
        if stored is None or stored.purpose != "batch":
            why = "does not exist" if stored is None else f"has purpose '{stored.purpose}'"
            message = (
                f"The input file {checked.input_file_id!r} {why}; "
                "upload it with purpose 'batch' first."
            )
            return _error(400, message, "input_file_id")
        lines, errors = read_batch_input(stored.content, checked.endpoint)
        return web.json_response(self.state.batches.create(checked, lines, errors, self.answer))

    def _batch_request(
        self, body: dict[str, Any], request: web.Request
    ) -> BatchRequest | web.Response:
        """The checked parameters of a batch creation, or the 400 refusing them."""
        file_id, endpoint = body.get("input_file_id"), body.get("endpoint")
        window, metadata = body.get("completion_window"), body.get("metadata")
        for name, value in (
            ("input_file_id", file_id),
            ("endpoint", endpoint),
            ("completion_window", window),
        ):
            if not isinstance(value, str) or not value:
                return _error(400, f"Missing required parameter: '{name}'.", name)
        if endpoint != ENDPOINT:
            message = f"Unsupported endpoint {endpoint!r}: the simulator batches only {ENDPOINT}."
            return _error(400, message, "endpoint")
        if window != COMPLETION_WINDOW:
            message = f"Invalid value: {window!r}. Supported values are: '{COMPLETION_WINDOW}'."
            return _error(400, message, "completion_window")
        if metadata is not None and not (
            isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())
        ):
            return _error(400, "metadata must be an object of strings.", "metadata")
        return BatchRequest(
            input_file_id=str(file_id),
            endpoint=ENDPOINT,
            completion_window=COMPLETION_WINDOW,
            metadata=metadata,
            headers={k.lower(): v for k, v in request.headers.items()},
        )

    async def retrieve(self, request: web.Request) -> web.Response:
        """``GET /v1/batches/{id}``: move the batch one step and return it."""
        batch_id = request.match_info["batch_id"]
        found = self.state.batches.retrieve(batch_id, self.answer)
        return _no_such("Batch", batch_id) if found is None else web.json_response(found)

    async def cancel(self, request: web.Request) -> web.Response:
        """``POST /v1/batches/{id}/cancel``: start cancelling (it ends at the next retrieve)."""
        batch_id = request.match_info["batch_id"]
        found, cancelling = self.state.batches.cancel(batch_id)
        if found is None:
            return _no_such("Batch", batch_id)
        if not cancelling:
            return _error(400, f"Cannot cancel a batch with status '{found['status']}'.")
        return web.json_response(found)

    async def listing(self, request: web.Request) -> web.Response:
        """``GET /v1/batches``: the batches, newest first, paged by ``limit`` and ``after``."""
        batches = self.state.batches.listing()
        after = request.query.get("after")
        if after is not None:
            ids = [batch["id"] for batch in batches]
            batches = batches[ids.index(after) + 1 :] if after in ids else []
        try:
            limit = int(request.query.get("limit", _LIST_LIMIT))
        except ValueError:
            return _error(400, "limit must be an integer.", "limit")
        page = batches[: max(limit, 0)]
        return web.json_response(
            {
                "object": "list",
                "data": page,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
                "has_more": len(batches) > len(page),
            }
        )

    def answer(self, batch: Batch, line: BatchLine, fail: bool) -> LineResult:
        """Answer one batch line as the same request sent online, and record it.

        Args:
            batch: The batch the line is in.
            line: The request.
            fail: Whether `SimulatorConfig.batch_fail_rate` picked this line to fail.
        """
        now = time.monotonic()
        judge = self.state.config.settings_for(str(line.body.get("model") or ""))
        if fail:
            text = error_body(500, "simulated batch line failure")
            action = Action(500, body=text, fault=Fault.ERROR)
        else:
            action = self.state.plan_line(line.body, judge)
        self.state.record(
            batch.request.headers,
            line.body,
            now,
            action,
            batch_id=batch.id,
            custom_id=line.custom_id,
        )
        if action.status != 200:
            return LineResult(
                action.status, _error_object(action.body or error_body(action.status))
            )
        return LineResult(200, self.state.replier.completion(line.body, judge, action.content))


def _error_object(text: str) -> dict[str, Any]:
    """An error body's JSON, as a batch line carries it (text becomes its message)."""
    try:
        found = json.loads(text)
    except ValueError:
        found = None
    return found if isinstance(found, dict) else json.loads(api_error(text, "server_error"))


def _no_such(kind: str, object_id: str) -> web.Response:
    """OpenAI's 404 for an unknown id."""
    return _error(404, f"No such {kind} object: {object_id}", "id")
