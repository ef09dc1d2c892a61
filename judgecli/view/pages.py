"""The viewer's pages, rendered on the server: the runs list, a run's cases (filters and
search are the query string, applied by the server, so the page and the API show the same
cases), and two runs side by side (a drift, as `judge drift` computes it). A case's own
pages are `case_pages`. Everything from a run is escaped: a raw reply may hold `<script>`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

from judgecli.report.cells import money
from judgecli.report.decision import VERDICT_CLASS
from judgecli.report.drift import drift_headline, drift_sections
from judgecli.report.escape import esc
from judgecli.report.html import header, table
from judgecli.report.markdown import headline
from judgecli.result import CaseResult
from judgecli.summary.drift import Drift
from judgecli.view.assets import CASES_SCRIPT, STYLE
from judgecli.view.cases import FLAG_WORDS, CaseFilter, Flag
from judgecli.view.runs import RunEntry

MAX_ROWS = 2000
"""Cases listed on one page (the API lists them all)."""


def shell(
    title: str,
    body: Sequence[str],
    *,
    token: str,
    script: str = "",
    data: Mapping[str, str] | None = None,
) -> str:
    """A whole page: the style, the write token in its meta tag, the body, the script."""
    attrs = "".join(f' data-{k}="{esc(v)}"' for k, v in (data or {}).items())
    tail = f"<script>{script}</script>" if script else ""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="judge-token" content="{esc(token)}"><link rel="icon" href="data:,">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body><main{attrs}>"
        '<nav class="top"><a href="/">all runs</a></nav>'
        f"{''.join(body)}</main>{tail}</body></html>\n"
    )


def run_url(name: str, page: str = "", **query: Any) -> str:
    """The URL of a run's page, its query encoded (None values left out)."""
    given = {k: v for k, v in query.items() if v is not None}
    return f"/runs/{quote(name, safe='')}{page}" + (
        f"?{urlencode(given, doseq=True)}" if given else ""
    )


def gate_cell(entry: RunEntry) -> str:
    """The gate's verdict, coloured; — without a gate."""
    s = entry.summary
    if s is None or s.gate is None:
        return "—"
    outcome = s.gate.outcome
    return f'<span class="{VERDICT_CLASS[outcome]}">{esc(outcome.value)}</span>'


def runs_page(
    entries: Sequence[RunEntry], raters: Mapping[str, Mapping[str, int]], *, token: str
) -> str:
    """Every served run: command, when, headline numbers with intervals, gate, judges,
    cost, labels so far; a run that cannot be shown says why in one line. Then a form to
    compare two runs.
    """
    rows = []
    for e in entries:
        link = f'<a href="{esc(run_url(e.name))}"><code>{esc(e.name)}</code></a>'
        if e.summary is None:
            rows.append(
                f'<tr><td>{link}</td><td colspan="6" class="problem">{esc(e.problem)}</td></tr>'
            )
            continue
        s = e.summary
        labelled = ", ".join(f"{esc(r)} {n}" for r, n in sorted(raters.get(e.name, {}).items()))
        cells = [
            link,
            (
                f"{esc(s.command.value)} · {esc(s.rubric)}<br><span class='muted'>"
                f"{esc(e.started)}</span>"
            ),
            esc(headline(s)),
            gate_cell(e),
            ", ".join(f"<code>{esc(m)}</code>" for m in s.models),
            esc(money(s.usage.cost_usd)),
            labelled or "—",
        ]
        rows.append("<tr><td>" + "</td><td>".join(cells) + "</td></tr>")
    head = "".join(
        f"<th>{h}</th>"
        for h in ("run", "command · when", "headline", "gate", "judges", "cost", "labels")
    )
    names = [e.name for e in entries if e.summary is not None]
    options = "".join(f'<option value="{esc(n)}">{esc(n)}</option>' for n in names)
    # B defaults to the second run listed: comparing a run with itself says nothing.
    second = "".join(
        f'<option value="{esc(n)}"{" selected" if i == 1 else ""}>{esc(n)}</option>'
        for i, n in enumerate(names)
    )
    compare = (
        '<section><h2>Compare two runs</h2><form action="/compare" method="get" class="filters">'
        f'<select name="a" aria-label="run A">{options}</select> → '
        f'<select name="b" aria-label="run B">{second}</select>'
        '<button type="submit">compare</button></form></section>'
        if len(names) > 1
        else ""
    )
    empty = (
        ""
        if entries
        else '<p class="note">No run here yet: new runs appear when this page is reloaded.</p>'
    )
    return shell(
        "judge view",
        [
            f"<h1>Runs ({len(entries)})</h1>{empty}",
            f'<table id="runs"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>",
            compare,
        ],
        token=token,
    )


def filters_form(name: str, chosen: CaseFilter, categories: Sequence[str]) -> str:
    """The cases page's filters: a checkbox per flag, the category, the search box."""
    boxes = "".join(
        f'<label><input type="checkbox" name="flag" value="{f.value}"'
        f"{' checked' if f in chosen.flags else ''}> {esc(words)}</label>"
        for f, words in FLAG_WORDS.items()
    )
    cats = "".join(
        f'<option value="{esc(c)}"{" selected" if c == chosen.category else ""}>{esc(c)}</option>'
        for c in categories
    )
    category = (
        (
            f'<select name="category" aria-label="category"><option value="">any category'
            f"</option>{cats}</select>"
        )
        if categories
        else ""
    )
    return (
        f'<form id="case-filters" class="filters" method="get" action="{esc(run_url(name))}">'
        f'<input type="search" name="q" value="{esc(chosen.query)}" placeholder="search ids, text, '
        f'reasoning, raw replies" aria-label="search cases">{category}{boxes}'
        '<button type="submit">search</button></form>'
    )


def cases_page(
    entry: RunEntry,
    shown: Sequence[tuple[CaseResult, Sequence[str], Mapping[str, Any]]],
    total: int,
    chosen: CaseFilter,
    categories: Sequence[str],
    *,
    token: str,
) -> str:
    """A run's header (report.html's), the filters, and the cases that pass them: id,
    status, verdict, category, flags, steps, each rater's label; each links to the case.
    """
    assert entry.summary is not None
    rows = []
    for r, flags, labels in shown[:MAX_ROWS]:
        said = ", ".join(f"{esc(k)}: {esc(v)}" for k, v in sorted(labels.items()))
        pills = "".join(
            f'<span class="pill">{esc(f)}</span>'
            for f in flags
            if f not in ("labelled", "unlabelled")
        )
        cells = [
            f'<a href="{esc(run_url(entry.name, "/case", id=r.id))}"><code>{esc(r.id)}</code></a>',
            f'<span class="{r.status.value}">{r.status.value}</span>',
            esc(verdict_word(r)),
            esc(r.category or ""),
            pills,
            said or "—",
        ]
        rows.append(
            f'<tr class="case-row" data-id="{esc(r.id)}"><td>'
            + "</td><td>".join(cells)
            + "</td></tr>"
        )
    more = (
        f'<p class="note">Showing the first {MAX_ROWS:,}; narrow the filters to see the rest.</p>'
        if len(shown) > MAX_ROWS
        else ""
    )
    head = "".join(
        f"<th>{h}</th>" for h in ("id", "status", "verdict", "category", "flags", "labels")
    )
    start = (
        f'<p><a href="{esc(run_url(entry.name, "/label"))}">Label cases →</a> (blind, '
        f"one after another)</p>"
    )
    return shell(
        f"{entry.name} · judge view",
        [
            header(entry.summary),
            start,
            f"<section><h2>Cases</h2>{filters_form(entry.name, chosen, categories)}",
            f'<p class="muted" id="case-count">{len(shown):,} of {total:,} cases shown</p>{more}',
            (
                f'<table id="cases"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
                f"</table></section>"
            ),
        ],
        token=token,
        script=CASES_SCRIPT,
    )


def verdict_word(r: CaseResult) -> str:
    """The case's verdict in a word (as review sheets say it)."""
    from judgecli.inputs.review import verdict_of

    return verdict_of(r)


def compare_page(a: RunEntry, b: RunEntry, drift: Drift, *, token: str) -> str:
    """Two runs side by side: the drift's headline and tables (report.drift's), and each
    flipped case with links to it in both runs.
    """
    rows = []
    for flip in drift.flips:
        change = "n/a" if flip.change is None else f"{flip.change:+g}"
        rows.append(
            f'<tr class="flip"><td><code>{esc(flip.id)}</code></td>'
            f'<td><a href="{esc(run_url(a.name, "/case", id=flip.id))}">{esc(flip.a)}</a></td>'
            f'<td><a href="{esc(run_url(b.name, "/case", id=flip.id))}">{esc(flip.b)}</a></td>'
            f"<td>{esc(change)}</td></tr>"
        )
    # Its own table of flips follows, each linked to the case in both runs.
    sections = [table(sec) for sec in drift_sections(drift) if not sec.title.startswith("flipped")]
    flips = (
        f'<section><h2>Flipped cases ({len(drift.flips)})</h2><table id="flips"><thead><tr>'
        f"<th>id</th>"
        f"<th>{esc(a.name)}</th><th>{esc(b.name)}</th><th>change</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></section>"
    )
    return shell(
        f"{a.name} → {b.name} · judge view",
        [
            f"<h1>{esc(a.name)} → {esc(b.name)}</h1>",
            f'<p class="headline">{esc(drift_headline(drift.summary))}</p>',
            f'<section><div class="cards">{"".join(sections)}</div></section>',
            flips,
        ],
        token=token,
    )


def problem_page(message: str, *, token: str, status_line: str = "cannot show this") -> str:
    """One clear line instead of a page (never a stack trace)."""
    return shell(
        "judge view",
        [f"<h1>{esc(status_line)}</h1><p class='problem'>error: {esc(message)}</p>"],
        token=token,
    )


def flag_list(flags: set[Flag]) -> list[str]:
    """Flags in a stable order for a page."""
    return sorted(f.value for f in flags)
