"""report.html: one self-contained page (inline CSS, SVG and script; nothing is fetched)
with report.md's numbers, charts of them, and a searchable table of cases. The numbers come
from `markdown` (`headline`, `gate_note`, `sections`) and the charts from `figures`, so the
page and report.md never disagree. Everything from a user or a judge is escaped: a raw reply
may contain `<script>`.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from judgecli.report import svg
from judgecli.report.cells import Section, heading
from judgecli.report.checklist import items_html
from judgecli.report.decision import VERDICT_CLASS
from judgecli.report.escape import esc
from judgecli.report.figures import command_figures, stability_figures
from judgecli.report.html_cases import case_table, case_text_html, verdict_text
from judgecli.report.images import THUMBNAIL_CSS
from judgecli.report.markdown import gate_note, headline, sections, spec_words, title_of
from judgecli.report.tool_calls import NO_JUDGE, case_calls_html
from judgecli.result import CaseResult, CaseStatus
from judgecli.summary.run import RunSummary
from judgecli.summary.score import ScoreSummary

WORST = 10

PAGE_CSS = """
@media screen and (prefers-color-scheme:dark){:root{color-scheme:dark}}*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px}h1{font-size:1.5em;margin:0 0 .4em}
h2{font-size:1.2em;margin:1.6em 0 .6em;border-bottom:1px solid var(--grid);padding-bottom:.2em}
h3,h4{font-size:1em;margin:0 0 .5em}
code,pre{font:12.5px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.headline{font-size:1.1em;font-weight:600;padding:.7em 1em;border-radius:6px;
border-left:6px solid var(--accent);background:var(--panel)}
.headline.pass{border-left-color:var(--good)}.headline.fail{border-left-color:var(--bad)}
.headline.incomplete,.headline.undecided{border-left-color:var(--warn)}
.meta,figcaption,.muted,summary{color:var(--muted)}
.note{border-left:3px solid var(--warn);padding-left:.8em}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,460px),1fr));gap:16px}
figure,.card{margin:0;padding:12px;background:var(--panel);border:1px solid var(--grid);
border-radius:6px;break-inside:avoid;overflow-x:auto}figcaption{font-size:.9em;margin-top:.4em}
table{border-collapse:collapse;width:100%}
th,td{padding:4px 8px;border-bottom:1px solid var(--grid);text-align:left;vertical-align:top}
.numbers td+td,.numbers th+th{text-align:right;font-variant-numeric:tabular-nums;
white-space:nowrap}.numbers td:first-child{white-space:pre-wrap}
.numbers td.text{text-align:left;white-space:normal}.card.wide{grid-column:1/-1}
.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:.5em 0}
input,select{font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--grid);
border-radius:4px;padding:4px 6px}input[type=search]{flex:1 1 260px}
.failed{color:var(--bad);font-weight:600}#cases tr.case td{border-bottom:none}
#cases tr.more td{padding:0 8px 4px}summary{cursor:pointer;font-size:.85em}
.judgement{border-left:3px solid var(--grid);padding:4px 10px;margin:8px 0}
.judgement p{margin:.3em 0}.case-field h5{font-size:.85em;margin:.6em 0 .2em;color:var(--muted)}
.disagrees{color:var(--bad);font-weight:600}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--bg);border:1px solid var(--grid);
padding:8px;border-radius:4px;max-height:24em;overflow:auto}[hidden]{display:none!important}
@media print{body{font-size:11px}main{max-width:none;
padding:0}.filters,#cases tr.more{display:none}figure,.card,tr{break-inside:avoid}}
"""

# Plain script, no user data inside it: rows are filtered by their text and data-* keys.
SCRIPT = """
(() => {
  const table = document.getElementById("cases");
  if (!table) return;
  const rows = Array.from(table.tBodies);
  let texts = null; // read on the first search: 5,000 rows' text is slow to gather on load
  const search = document.getElementById("case-search");
  const selects = Array.from(document.querySelectorAll("select[data-key]"));
  function apply() {
    const q = search.value.trim().toLowerCase();
    if (q && !texts) texts = rows.map((r) => r.textContent.toLowerCase());
    let shown = 0;
    rows.forEach((row, i) => {
      row.hidden = !((!q || texts[i].includes(q)) &&
        selects.every((s) => !s.value || row.dataset[s.dataset.key] === s.value));
      shown += row.hidden ? 0 : 1;
    });
    document.getElementById("case-count").textContent = `${shown} of ${rows.length} shown`;
  }
  search.addEventListener("input", apply);
  selects.forEach((s) => s.addEventListener("change", apply));
  document.getElementById("case-filters").hidden = false;
  apply();
})();
"""


def render_html(summary: RunSummary, results: Sequence[CaseResult]) -> str:
    """The whole page for a run: headline, charts, every table of report.md, the worst
    cases (score), warnings, and the filterable table of cases.
    """
    s = summary
    figures = command_figures(s, results) + stability_figures(s)
    body = [header(s), cards("Charts", figures) if figures else ""]
    body.append(cards("Numbers", [table(sec) for sec in sections(s)]))
    if isinstance(s, ScoreSummary):
        body.append(worst_cases(results))
    body += [warnings_section(s.warnings), case_table(s, results)]
    return page(title_of(s), body, script=SCRIPT)


def page(title: str, body: Sequence[str], *, script: str = "") -> str:
    """One self-contained page (inline CSS and script, nothing fetched) around its sections."""
    tail = f"<script>{script}</script>" if script else ""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{svg.CHART_CSS}{PAGE_CSS}{THUMBNAIL_CSS}</style></head>"
        f"<body><main>{''.join(body)}</main>{tail}</body></html>\n"
    )


def warnings_section(warnings: Sequence[str]) -> str:
    """The run's warnings as a list; nothing without any."""
    if not warnings:
        return ""
    items = "".join(f"<li>{esc(w)}</li>" for w in warnings)
    return f"<section><h2>Warnings</h2><ul>{items}</ul></section>"


def header(s: RunSummary) -> str:
    """Title, the headline (PASS/FAIL/UNDECIDED/INCOMPLETE coloured), judges, and the gate
    note.
    """
    state = "" if s.gate is None else VERDICT_CLASS[s.gate.outcome]
    if s.incomplete is not None:
        state = "incomplete"
    judges = ", ".join(f"<code>{esc(m)}</code>" for m in s.models) or esc(NO_JUDGE)
    note = f'<p class="note">{esc(n)}</p>' if (n := gate_note(s)) else ""
    return (
        f'<header><h1>{esc(title_of(s))}</h1><p class="headline {state}">{esc(headline(s))}'
        f'</p><p class="meta">Judges: {judges} · rubric <code>{esc(s.rubric_hash)}</code>'
        f"{spec_words(s.spec, lambda text: f'<code>{esc(text)}</code>')}</p>"
        f"{note}</header>"
    )


def cards(title: str, items: Sequence[str]) -> str:
    """A titled grid of figures or tables."""
    return f'<section><h2>{esc(title)}</h2><div class="cards">{"".join(items)}</div></section>'


def table(sec: Section) -> str:
    """One of report.md's tables, cell for cell."""
    head = "".join(f"<th>{esc(h)}</th>" for h in sec.header)
    rows = "".join(
        "<tr>"
        + "".join(
            f'<td class="text">{esc(c)}</td>' if len(c) > 40 else f"<td>{esc(c)}</td>" for c in row
        )
        + "</tr>"
        for row in sec.rows
    )
    note = f'<p class="muted">{esc(sec.note)}</p>' if sec.note else ""
    # A table whose columns need more room than half the page gets the whole width.
    columns = zip(sec.header, *sec.rows, strict=False)
    need = sum(max(len(c) for c in column) + 3 for column in columns)
    return (
        f'<section class="card{" wide" if need > 66 else ""}"><h3>'
        f'{esc(heading(sec.title))}</h3><table class="numbers">'
        f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>{note}</section>"
    )


def worst_cases(results: Sequence[CaseResult]) -> str:
    """The lowest-scored (or failed-the-bar) cases, with the judges' reasoning and, behind
    a <details>, the case's text.
    """
    graded = (
        r
        for r in results
        if r.status is CaseStatus.OK and (r.score is not None or r.passed is False)
    )
    # nsmallest is sorted(...)[:WORST] without sorting every case to keep ten.
    worst = heapq.nsmallest(
        WORST,
        graded,
        key=lambda r: (r.score is None, r.score or 0.0, r.passed is not False, r.id),
    )
    if not worst:
        return ""
    items = []
    for r in worst:
        notes = items_html(r) or "".join(
            f"<p><code>{esc(j.model)}</code> {esc(j.verdict.reasoning)} "
            f"<em>{esc(j.verdict.feedback or '')}</em></p>"
            for j in r.judgements
            if j.verdict is not None
        )
        notes += case_calls_html(r)
        title = " · ".join([r.id, verdict_text(r), r.category or ""]).strip(" ·")
        text = (
            f"<details><summary>the case</summary>{case_text_html(r)}</details>" if r.case else ""
        )
        items.append(f'<div class="card"><h4>{esc(title)}</h4>{notes}{text}</div>')
    return cards(f"Lowest-scored cases ({len(items)})", items)
