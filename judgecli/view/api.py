"""The viewer's JSON API (docs/view.md, "JSON API"): what its pages use, so a script can
browse and label too. Stable: `GET /api/runs` (objects with `name`) and `POST
/api/runs/{name}/labels` with `{"id", "label", "rater"}` and the `X-Judge-Token` header.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from judgecli.commands.drift.files import read_audited_run
from judgecli.commands.drift.measure import measure_drift
from judgecli.errors import InputError
from judgecli.report.markdown import headline
from judgecli.store.labels import append_label, check_rater
from judgecli.summary.run import summary_json
from judgecli.view.cases import CaseFilter, case_row, flags_of
from judgecli.view.labelling import agreement, new_line, next_case, shown_value, stored_value
from judgecli.view.runs import RunEntry
from judgecli.view.state import BadRequest, ViewState

NOTE_LIMIT = 4000
"""Characters of a note kept."""


def run_json(entry: RunEntry, labels: dict[str, int]) -> dict[str, Any]:
    """A run as `GET /api/runs` lists it."""
    s = entry.summary
    base: dict[str, Any] = {"name": entry.name, "path": str(entry.path), "started": entry.started}
    if s is None:
        return base | {"problem": entry.problem}
    return base | {
        "command": s.command.value,
        "rubric": s.rubric,
        "models": s.models,
        "n_cases": s.n_cases,
        "headline": headline(s),
        "gate": None if s.gate is None else s.gate.outcome.value,
        "cost_usd": s.usage.cost_usd,
        "labels": labels,
    }


def rater_of(value: Any) -> str:
    """A rater's name from a request (BadRequest when it is not a safe file name)."""
    if not isinstance(value, str):
        raise BadRequest("a label needs a rater (a name)", hint='e.g. "rater": "alice"')
    try:
        return check_rater(value)
    except InputError as err:
        raise BadRequest(err.message, hint=err.hint) from None


class Api:
    """The JSON handlers over one ViewState."""

    def __init__(self, state: ViewState) -> None:
        self.state = state

    def add_routes(self, app: web.Application) -> None:
        """Register every API route."""
        app.router.add_get("/api/runs", self.runs)
        app.router.add_get("/api/runs/{name}", self.run)
        app.router.add_get("/api/runs/{name}/cases", self.cases)
        app.router.add_get("/api/runs/{name}/case", self.case)
        app.router.add_get("/api/runs/{name}/labels", self.labels)
        app.router.add_post("/api/runs/{name}/labels", self.add_label)
        app.router.add_get("/api/runs/{name}/next", self.next)
        app.router.add_get("/api/runs/{name}/agreement", self.agreement)
        app.router.add_get("/api/compare", self.compare)

    async def runs(self, request: web.Request) -> web.Response:
        """Every served run, newest first; one that cannot be shown has a `problem`."""
        out = []
        for entry in self.state.runs.entries():
            counts = {r: len(v) for r, v in self.state.labels(entry).items()}
            out.append(run_json(entry, counts))
        return web.json_response(out)

    async def run(self, request: web.Request) -> web.Response:
        """A run's summary.json and how its cases are labelled."""
        entry = self.state.entry(request.match_info["name"])
        scheme = self.state.scheme(entry)
        assert entry.summary is not None
        return web.json_response(
            run_json(entry, {r: len(v) for r, v in self.state.labels(entry).items()})
            | {
                "summary": summary_json(entry.summary),
                "label_options": scheme.options,
                "label_note": scheme.note,
            }
        )

    async def cases(self, request: web.Request) -> web.Response:
        """The run's cases that pass the filters (`flag`, `category`, `q`)."""
        entry = self.state.entry(request.match_info["name"])
        try:
            chosen = CaseFilter.of(request.query, request.query.getall("flag", []))
        except ValueError as err:
            raise BadRequest(str(err)) from None
        labels = self.state.labels(entry)
        rows = []
        for r in self.state.results(entry):
            of_case = {rater: done[r.id]["label"] for rater, done in labels.items() if r.id in done}
            flags = flags_of(r, bool(of_case))
            if chosen.keeps(r, flags):
                rows.append(case_row(r, flags, of_case))
        return web.json_response(rows)

    async def case(self, request: web.Request) -> web.Response:
        """One case whole (its results.jsonl line) and each rater's label of it."""
        entry = self.state.entry(request.match_info["name"])
        r = self.state.case(entry, request.query.get("id", ""))
        labels = {
            rater: done[r.id] for rater, done in self.state.labels(entry).items() if r.id in done
        }
        return web.json_response(
            {"result": r.model_dump(mode="json", exclude_none=True), "labels": labels}
        )

    async def labels(self, request: web.Request) -> web.Response:
        """Standing labels by rater (one rater's with `rater`)."""
        entry = self.state.entry(request.match_info["name"])
        labels = self.state.labels(entry)
        if "rater" in request.query:
            labels = {k: v for k, v in labels.items() if k == rater_of(request.query["rater"])}
        return web.json_response(labels)

    async def add_label(self, request: web.Request) -> web.Response:
        """Store one label at once: `{"id", "label", "rater"}`, optionally `note`, and the
        plan (`strategy`, `budget`) the case came from. A pairwise label is A, B or tie as
        this rater saw the case (or old, new, tie). `"label": null` withdraws it.
        """
        entry = self.state.entry(request.match_info["name"])
        try:
            body = json.loads(await request.text())
        except ValueError:
            raise BadRequest("the body is not JSON", hint='send {"id", "label", "rater"}') from None
        if not isinstance(body, dict) or not isinstance(body.get("id"), str) or "label" not in body:
            raise BadRequest('a label is {"id": str, "label": ..., "rater": str}')
        rater = rater_of(body.get("rater"))
        r = self.state.case(entry, body["id"])
        scheme = self.state.scheme(entry)
        slot = self.state.slot(entry, rater, r.id)
        try:
            value = stored_value(scheme, body["label"], slot)
        except ValueError as err:
            raise BadRequest(str(err), hint=scheme.note) from None
        plan = None
        if body.get("strategy") or body.get("budget"):
            plan = self.state.plan(entry, body.get("strategy"), body.get("budget"))
        note = body.get("note")
        note = note[:NOTE_LIMIT] if isinstance(note, str) and note.strip() else None
        line = new_line(r.id, value, rater, note=note, plan=plan)
        path = append_label(entry.path, line)
        return web.json_response(
            {"stored": line, "file": str(path), "shown": shown_value(scheme, value, slot)}
        )

    async def next(self, request: web.Request) -> web.Response:
        """The case this rater should label next, by the plan (`strategy`, `budget`)."""
        entry = self.state.entry(request.match_info["name"])
        rater = rater_of(request.query.get("rater"))
        plan = self.state.plan(entry, request.query.get("strategy"), request.query.get("budget"))
        done = set(self.state.labels(entry).get(rater, {}))
        upcoming = next_case(entry, self.state.results(entry), done, plan)
        return web.json_response(
            vars(upcoming) | {"strategy": plan.strategy.value, "budget": plan.budget}
        )

    async def agreement(self, request: web.Request) -> web.Response:
        """Agreement between the raters, and of each with the judge, so far."""
        entry = self.state.entry(request.match_info["name"])
        results = self.state.results(entry)
        return web.json_response(
            agreement(self.state.scheme(entry), self.state.labels(entry), results)
        )

    async def compare(self, request: web.Request) -> web.Response:
        """Two runs' drift (`a`, `b`): `judge drift`'s summary and flips."""
        a = self.state.entry(request.query.get("a", ""))
        b = self.state.entry(request.query.get("b", ""))
        drift = measure_drift(read_audited_run(a.path), read_audited_run(b.path))
        return web.json_response(
            {
                "summary": drift.summary.model_dump(mode="json"),
                "flips": [f.model_dump(mode="json") for f in drift.flips],
            }
        )
