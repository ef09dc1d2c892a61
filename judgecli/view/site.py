"""The handlers of the viewer's pages (pages and case_pages render them): the runs list, a
run's cases, a case, labelling, and two runs compared.
"""

from __future__ import annotations

from aiohttp import web

from judgecli.commands.drift.files import read_audited_run
from judgecli.commands.drift.measure import measure_drift
from judgecli.deciding.label_plan import LabelStrategy
from judgecli.view.api import rater_of
from judgecli.view.case_pages import case_page, label_page, start_page
from judgecli.view.cases import CaseFilter, categories, flags_of
from judgecli.view.labelling import DEFAULT_BUDGET, next_case, shown_value
from judgecli.view.pages import cases_page, compare_page, run_url, runs_page
from judgecli.view.state import DEFAULT_STRATEGY, BadRequest, ViewState


def html(text: str) -> web.Response:
    """A page, never cached (labels change it)."""
    return web.Response(text=text, content_type="text/html", headers={"Cache-Control": "no-store"})


class Site:
    """The page handlers over one ViewState."""

    def __init__(self, state: ViewState) -> None:
        self.state = state
        self.token = state.tokens.write

    def add_routes(self, app: web.Application) -> None:
        """Register every page."""
        app.router.add_get("/", self.runs)
        app.router.add_get("/runs/{name}", self.cases)
        app.router.add_get("/runs/{name}/case", self.case)
        app.router.add_get("/runs/{name}/label", self.label)
        app.router.add_get("/compare", self.compare)

    async def runs(self, request: web.Request) -> web.Response:
        """Every served run."""
        entries = self.state.runs.entries()
        raters = {e.name: {r: len(v) for r, v in self.state.labels(e).items()} for e in entries}
        return html(runs_page(entries, raters, token=self.token))

    async def cases(self, request: web.Request) -> web.Response:
        """A run's cases, filtered and searched as the query says."""
        entry = self.state.entry(request.match_info["name"])
        try:
            chosen = CaseFilter.of(request.query, request.query.getall("flag", []))
        except ValueError as err:
            raise BadRequest(str(err)) from None
        labels = self.state.labels(entry)
        results = self.state.results(entry)
        shown = []
        for r in results:
            of_case = {rater: done[r.id]["label"] for rater, done in labels.items() if r.id in done}
            flags = flags_of(r, bool(of_case))
            if chosen.keeps(r, flags):
                shown.append((r, sorted(f.value for f in flags), of_case))
        page = cases_page(entry, shown, len(results), chosen, categories(results), token=self.token)
        return html(page)

    async def case(self, request: web.Request) -> web.Response:
        """One case whole."""
        entry = self.state.entry(request.match_info["name"])
        r = self.state.case(entry, request.query.get("id", ""))
        labels = {
            rater: done[r.id] for rater, done in self.state.labels(entry).items() if r.id in done
        }
        return html(case_page(entry, r, labels, token=self.token))

    async def label(self, request: web.Request) -> web.StreamResponse:
        """Labelling: without a rater, who labels and by which plan; with one but no case,
        on to the plan's next case; with both, the case blind.
        """
        entry = self.state.entry(request.match_info["name"])
        query = request.query
        strategy = query.get("strategy") or DEFAULT_STRATEGY
        budget = query.get("budget") or str(DEFAULT_BUDGET)
        if not query.get("rater"):
            strategies = [s.value for s in LabelStrategy]
            page = start_page(
                entry,
                strategies=strategies,
                strategy=strategy,
                budget=int(budget) if budget.isdigit() else DEFAULT_BUDGET,
                rater="",
                case_id=query.get("id"),
                token=self.token,
            )
            return html(page)
        rater = rater_of(query["rater"])
        plan = self.state.plan(entry, strategy, budget)
        results = self.state.results(entry)
        done = self.state.labels(entry).get(rater, {})
        upcoming = next_case(entry, results, set(done), plan)
        case_id = query.get("id") or upcoming.id
        if case_id is None:
            raise BadRequest(
                f"{rater} has labelled every case of the plan ({upcoming.planned})",
                hint="raise the budget for more, or see the agreement on the cases page",
            )
        if not query.get("id"):
            target = run_url(
                entry.name,
                "/label",
                id=case_id,
                rater=rater,
                strategy=plan.strategy.value,
                budget=plan.budget,
            )
            raise web.HTTPFound(target)
        r = self.state.case(entry, case_id)
        scheme = self.state.scheme(entry)
        slot = self.state.slot(entry, rater, r.id)
        line = done.get(r.id, {})
        page = label_page(
            entry,
            r,
            scheme,
            rater=rater,
            slot=slot,
            current=shown_value(scheme, line.get("label"), slot),
            note=str(line.get("note") or ""),
            upcoming=upcoming,
            strategy=plan.strategy.value,
            budget=plan.budget,
            token=self.token,
        )
        return html(page)

    async def compare(self, request: web.Request) -> web.Response:
        """Two runs side by side, as `judge drift A B` compares them."""
        a = self.state.entry(request.query.get("a", ""))
        b = self.state.entry(request.query.get("b", ""))
        drift = measure_drift(read_audited_run(a.path), read_audited_run(b.path))
        return html(compare_page(a, b, drift, token=self.token))
