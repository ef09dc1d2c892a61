"""report.html: one self-contained page (inline CSS, SVG and script; nothing is fetched)
with report.md's numbers, charts of them, and a searchable table of cases. The numbers come
from report.py (`headline`, `gate_note`, `sections`, `fmt*`), so the page and report.md never
disagree. Everything from a user or a judge is escaped: a raw reply may contain `<script>`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from judgecli.report import charts, svg
from judgecli.report.cells import NA, Section, fmt, fmt_ci, fmt_pct
from judgecli.report.html_cases import case_table, case_text_html, esc, verdict_text
from judgecli.report.markdown import gate_note, headline, sections, title_of
from judgecli.report.svg import Bar
from judgecli.result import CaseResult, CaseStatus
from judgecli.stats.intervals import Interval, too_few
from judgecli.summary.run import RunSummary

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
.headline.incomplete{border-left-color:var(--warn)}
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
    if s.command == "calibrate":
        figures = calibrate_figures(s)
    else:
        figures = (pairwise_figures if s.command == "pairwise" else score_figures)(s, results)
    body = [header(s), cards("Charts", figures) if figures else ""]
    body.append(cards("Numbers", [table(sec) for sec in sections(s)]))
    if s.command == "score":
        body.append(worst_cases(results))
    if s.warnings:
        items = "".join(f"<li>{esc(w)}</li>" for w in s.warnings)
        body.append(f"<section><h2>Warnings</h2><ul>{items}</ul></section>")
    body.append(case_table(s, results))
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title_of(s))}</title><style>{svg.CHART_CSS}{PAGE_CSS}</style></head>"
        f"<body><main>{''.join(body)}</main><script>{SCRIPT}</script></body></html>\n"
    )


def header(s: RunSummary) -> str:
    """Title, the headline (PASS/FAIL/INCOMPLETE coloured), judges, and the gate note."""
    state = "" if s.gate is None else ("pass" if s.gate["passed"] else "fail")
    if s.incomplete is not None:
        state = "incomplete"
    judges = ", ".join(f"<code>{esc(m)}</code>" for m in s.models)
    note = f'<p class="note">{esc(n)}</p>' if (n := gate_note(s)) else ""
    return (f'<header><h1>{esc(title_of(s))}</h1><p class="headline {state}">{esc(headline(s))}'
            f'</p><p class="meta">Judges: {judges} · rubric <code>{esc(s.rubric_hash)}</code></p>'
            f"{note}</header>")  # fmt: skip


def cards(title: str, items: Sequence[str]) -> str:
    """A titled grid of figures or tables."""
    return f'<section><h2>{esc(title)}</h2><div class="cards">{"".join(items)}</div></section>'


def figure(chart: str, caption: str) -> str:
    """A chart with its caption."""
    return f"<figure>{chart}<figcaption>{esc(caption)}</figcaption></figure>"


def table(sec: Section) -> str:
    """One of report.md's tables, cell for cell."""
    head = "".join(f"<th>{esc(h)}</th>" for h in sec.header)
    rows = "".join("<tr>" + "".join(f'<td class="text">{esc(c)}</td>' if len(c) > 40 else
                                    f"<td>{esc(c)}</td>" for c in row) + "</tr>"
                   for row in sec.rows)  # fmt: skip
    # A table whose columns need more room than half the page gets the whole width.
    columns = zip(sec.header, *sec.rows, strict=False)
    need = sum(max(len(c) for c in column) + 3 for column in columns)
    return (f'<section class="card{" wide" if need > 66 else ""}"><h3>'
            f'{esc(sec.title.capitalize())}</h3><table class="numbers">'
            f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></section>")  # fmt: skip


def bar(
    label: str, value: float | None, ci: Interval | None, *, pct: bool, n: int | None = None
) -> Bar:
    """A chart row labelled exactly as the report prints the value and its interval; a group
    of `n` < TOO_FEW cases is drawn (interval and all) but marked too few to tell.
    """
    low, high = ci if ci is not None else (None, None)
    text = (fmt_pct if pct else fmt)(value)
    if (interval := fmt_ci(ci, pct=pct)) != NA:
        text += f" {interval}"
    return Bar(label, value, low, high, text=text, too_few=n is not None and too_few(n))


def category_bars(s: RunSummary, field: str, *, pct: bool) -> list[Bar]:
    """One row per category: its `field` (pass_rate, mean, win_rate) and `field`_ci."""
    return [bar(f"{name} (n={c.n})", getattr(c, field), getattr(c, f"{field}_ci"), pct=pct,
                n=c.n)
            for name, c in s.by_category.items() if getattr(c, field) is not None]  # fmt: skip


def scale_of(counts: dict[str, int] | None) -> tuple[float, float] | None:
    """The score scale, from the distribution's bins ("1".."4" or "0.00–0.20".."0.80–1.00")."""
    keys = list(counts or {})
    try:
        return (float(keys[0].split("–")[0]), float(keys[-1].split("–")[-1])) if keys else None
    except ValueError:
        return None


def score_figures(s: RunSummary, results: Sequence[CaseResult]) -> list[str]:
    """Score distribution (overall, per criterion), choices, pass rate, category means."""
    out = []
    scale = scale_of(s.distribution)
    if s.distribution:
        chart = svg.histogram(s.distribution, title="score distribution")
        out.append(figure(chart, f"Scores of the {s.n_ok} graded cases; mean {fmt(s.mean)} "
                                 f"{fmt_ci(s.mean_ci)}."))  # fmt: skip
    ok = [r for r in results if r.status is CaseStatus.OK]
    for name, c in s.criteria.items():
        values = [r.criteria[name] for r in ok if name in r.criteria]
        if values:
            counts = {f"{v:g}": n for v, n in sorted(Counter(values).items())}
            chart = svg.histogram(counts, title=f"{name}: score distribution")
            out.append(figure(chart, f"{name}: mean {fmt(c.mean)} {fmt_ci(c.mean_ci)}."))
    if s.choices:
        bars = [Bar(choice, float(n), text=str(n)) for choice, n in s.choices.items()]
        out.append(figure(svg.bar_chart(bars, title="choices"), "Cases per verdict."))
    if s.pass_rate is not None:
        rows = [bar("all cases", s.pass_rate, s.pass_rate_ci, pct=True),
                *category_bars(s, "pass_rate", pct=True)]  # fmt: skip
        chart = svg.bar_chart(rows, title="pass rate", domain=(0.0, 1.0), tick_format=svg.percent)
        out.append(
            figure(chart, "Pass rate with its 95% Wilson interval, overall and by category.")
        )
    if (means := category_bars(s, "mean", pct=False)) and s.mean is not None:
        top = max(b.high if b.high is not None else b.value or 0.0 for b in means)
        chart = charts.forest_plot(
            [bar("all cases", s.mean, s.mean_ci, pct=False, n=s.n_ok), *means],
            title="mean score by category", reference=s.mean,
            reference_label=f"mean {fmt(s.mean)}", domain=scale or (0.0, max(top, 1.0)),
            tick_format=svg.general,
        )  # fmt: skip
        out.append(figure(chart, "Mean score per category with its 95% t interval; the "
                                 "dashed line is the overall mean. Grey: fewer than 10 cases, "
                                 "or no spread in the scores (no interval), so no "
                                 "verdict."))  # fmt: skip
    return out


def gate_line(s: RunSummary) -> tuple[float, str]:
    """The win-rate bar the gate checks, else 50% (no preference)."""
    for check in (s.gate or {}).get("checks", []):
        if check["metric"] == "win_rate":
            return float(check["threshold"]), f"gate {float(check['threshold']):.0%}"
    return 0.5, "50%"


def pairwise_figures(s: RunSummary, results: Sequence[CaseResult]) -> list[str]:
    """Wins/ties/losses, win rate by category and judge against the gate, biases, length."""
    stack = charts.stacked_bar([
        charts.Segment("NEW wins", s.wins or 0, "new"),
        charts.Segment("ties", s.ties or 0, "tie"),
        charts.Segment("OLD wins", s.losses or 0, "old"),
    ], title="wins, ties and losses of NEW")  # fmt: skip
    left_out = f"; {s.dropped} dropped as inconsistent" if s.dropped else ""
    left_out += f"; {s.n_failed} failed" if s.n_failed else ""
    out = [figure(stack, f"Decided cases from NEW's side{left_out}.")]
    threshold, label = gate_line(s)
    decided = (s.wins or 0) + (s.losses or 0) + (s.ties or 0)
    rows = [bar("all cases", s.win_rate, s.win_rate_ci, pct=True, n=decided),
            *category_bars(s, "win_rate", pct=True)]  # fmt: skip
    chart = charts.forest_plot(
        rows, title="win rate of NEW", reference=threshold, reference_label=label
    )
    out.append(figure(chart, "Win rate of NEW (ties count half) with its 95% interval: "
                             "bootstrap for all cases, Wilson per category; dashed: "
                             f"{label}. Green: the whole interval is above it, red: below, "
                             "amber: not yet distinguishable, grey: fewer than 10 cases "
                             "(too few to tell)."))  # fmt: skip
    if s.judges:
        rows = [bar(m, j.win_rate, j.win_rate_ci, pct=True, n=j.wins + j.losses + j.ties)
                for m, j in s.judges.items()]  # fmt: skip
        chart = charts.forest_plot(rows, title="win rate by judge", reference=threshold,
                                reference_label=label)  # fmt: skip
        out.append(figure(chart, "Each judge of the panel on its own."))
    biases = [bar("position consistency", s.consistency, s.consistency_ci, pct=True),
              bar("first-position (A) preference", s.first_position_rate, None,
                  pct=True)]  # fmt: skip
    if s.length is not None:
        biases.append(bar("longer answer wins", s.length.longer_wins_rate, None, pct=True))
    chart = svg.bar_chart(biases, title="judge biases", domain=(0.0, 1.0), reference=0.5,
                          reference_label="50%", tick_format=svg.percent)  # fmt: skip
    out.append(figure(chart, "Consistency: share of pairs whose two orders agreed. At 50% "
                             "the judge has no preference for position A or the longer "
                             "answer."))  # fmt: skip
    points = [(float(r.lengths["new"] - r.lengths["old"]), r.winner.value) for r in results
              if r.winner is not None and {"old", "new"} <= r.lengths.keys()]  # fmt: skip
    if points:
        chart = charts.scatter(points, title="length difference by verdict",
                                   lanes=[("new", "NEW won"), ("tie", "tie"), ("old", "OLD won")],
                                   x_label="characters of NEW − characters of OLD")  # fmt: skip
        longer = fmt_pct(s.length.longer_wins_rate if s.length else None)
        out.append(figure(chart, f"One dot per case. The longer answer won {longer} of the "
                                 "decided cases whose lengths differ."))  # fmt: skip
    return out


def calibrate_figures(s: RunSummary) -> list[str]:
    """Confusion matrix, reliability diagram, F1 per class."""
    extra: dict[str, Any] = s.model_extra or {}
    out = []
    if confusion := extra.get("confusion"):
        labels = [str(label) for label in confusion["labels"]]
        chart = charts.heat_map(labels, labels, confusion["matrix"], title="confusion matrix",
                                    row_title="human", column_title="judge")  # fmt: skip
        out.append(figure(chart, f"Rows: human label, columns: judge verdict, over {s.n_labels} "
                                 f"(case, label) pairs; the diagonal (outlined) is agreement, "
                                 f"accuracy {fmt_pct(s.accuracy)}."))  # fmt: skip
    if reliability := extra.get("reliability"):
        chart = charts.reliability_diagram(reliability, title="reliability diagram")
        out.append(figure(chart, f"Accuracy per bin of stated confidence (count above each "
                                 f"bin); on the dashed diagonal the judge is calibrated. ECE "
                                 f"{fmt(extra.get('ece'), 3)}, Brier "
                                 f"{fmt(extra.get('brier'), 3)}."))  # fmt: skip
    if per_class := extra.get("per_class"):
        bars = [Bar(str(k), c["f1"], text=fmt(c["f1"])) for k, c in per_class.items()]
        chart = svg.bar_chart(bars, title="F1 per class", domain=(0.0, 1.0))
        out.append(figure(chart, f"Macro F1 {fmt(extra.get('macro_f1'))}."))
    return out


def worst_cases(results: Sequence[CaseResult]) -> str:
    """The lowest-scored (or failed-the-bar) cases, with the judges' reasoning and, behind
    a <details>, the case's text.
    """
    ok = [r for r in results if r.status is CaseStatus.OK]
    graded = [r for r in ok if r.score is not None or r.passed is False]
    graded.sort(key=lambda r: (r.score is None, r.score or 0.0, r.passed is not False, r.id))
    if not graded:
        return ""
    items = []
    for r in graded[:WORST]:
        notes = "".join(f"<p><code>{esc(j.model)}</code> {esc(j.verdict.reasoning)} "
                        f"<em>{esc(j.verdict.feedback or '')}</em></p>"
                        for j in r.judgements if j.verdict is not None)  # fmt: skip
        title = " · ".join([r.id, verdict_text(r), r.category or ""]).strip(" ·")
        text = (f"<details><summary>the case</summary>{case_text_html(r)}</details>"
                if r.case else "")  # fmt: skip
        items.append(f'<div class="card"><h4>{esc(title)}</h4>{notes}{text}</div>')
    return cards(f"Lowest-scored cases ({len(items)})", items)
