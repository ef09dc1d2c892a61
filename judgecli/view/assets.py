"""The viewer's style and scripts, as Python strings so they ship inside the package (no
build step, no CDN, nothing fetched: the pages work offline). The style is report.html's
(report.html.PAGE_CSS, svg.CHART_CSS, the thumbnails') plus the viewer's own; the scripts
are small and plain, and hold no user data (they read it from the page's data-* attributes
and the JSON API).
"""

from __future__ import annotations

from judgecli.report.html import PAGE_CSS
from judgecli.report.images import THUMBNAIL_CSS
from judgecli.report.svg import CHART_CSS

VIEW_CSS = """
nav.top{display:flex;gap:16px;align-items:baseline;margin-bottom:12px}nav.top a{color:var(--accent)}
a{color:var(--accent)}.pill{display:inline-block;padding:0 6px;border-radius:9px;font-size:.85em;
background:var(--panel);border:1px solid var(--grid);margin-right:4px}
.problem{color:var(--bad)}.pass{color:var(--good)}.fail{color:var(--bad)}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,420px),1fr));gap:16px}
.answer{border:2px solid var(--grid);border-radius:6px;padding:8px}
.answer h3{margin:0 0 .3em}.labelbar{position:sticky;top:0;background:var(--bg);padding:8px 0;
border-bottom:1px solid var(--grid);z-index:2}
.labelbar button{font:inherit;padding:6px 12px;margin:2px;border-radius:4px;cursor:pointer;
border:1px solid var(--grid);background:var(--panel);color:var(--fg)}
.labelbar button.chosen{background:var(--accent);color:var(--bg);border-color:var(--accent)}
kbd{font:11px ui-monospace,monospace;border:1px solid var(--grid);border-radius:3px;padding:0 3px}
textarea{font:inherit;width:100%;min-height:3em;color:var(--fg);background:var(--bg);
border:1px solid var(--grid);border-radius:4px}#status{min-height:1.4em}
.filters label{white-space:nowrap}
"""
STYLE = CHART_CSS + PAGE_CSS + THUMBNAIL_CSS + VIEW_CSS
"""Every page's style."""

# The cases page: a filter change submits its form (the server filters), and the rater's
# name is remembered in this browser for the labelling links.
CASES_SCRIPT = """
(() => {
  const form = document.getElementById("case-filters");
  if (form) form.querySelectorAll("input[type=checkbox],select").forEach((el) =>
    el.addEventListener("change", () => form.submit()));
})();
"""

# The labelling page. The rater's name lives in localStorage (asked for once); each label is
# POSTed at once with the page's write token; undo re-posts the label a case had before
# (kept in sessionStorage, so it survives the move to the next case and a reload).
LABEL_SCRIPT = """
(() => {
  const main = document.querySelector("main");
  const d = main.dataset;
  const token = document.querySelector('meta[name="judge-token"]').content;
  const options = JSON.parse(d.options);
  const status = document.getElementById("status");
  const note = document.getElementById("note");
  const api = `/api/runs/${encodeURIComponent(d.run)}`;
  const plan = {strategy: d.strategy, budget: Number(d.budget)};
  const say = (text) => { status.textContent = text; };
  const undoKey = `judge-undo:${d.run}:${d.rater}`;
  const undos = () => JSON.parse(sessionStorage.getItem(undoKey) || "[]");

  function here(id) {
    const q = new URLSearchParams({id, rater: d.rater, strategy: d.strategy, budget: d.budget});
    return `/runs/${encodeURIComponent(d.run)}/label?${q}`;
  }
  async function post(id, label, text) {
    const body = {id, label, rater: d.rater, note: text || undefined, ...plan};
    const reply = await fetch(`${api}/labels`, {method: "POST",
      headers: {"Content-Type": "application/json", "X-Judge-Token": token},
      body: JSON.stringify(body)});
    const data = await reply.json();
    if (!reply.ok) throw new Error(data.error || reply.statusText);
    return data;
  }
  function show(label) {
    document.querySelectorAll("button[data-label]").forEach((b) =>
      b.classList.toggle("chosen", label !== null && b.dataset.label === String(label)));
    d.current = label === null ? "" : String(label);
  }
  async function label(value) {
    const before = d.current === "" ? null : d.current;
    try {
      await post(d.id, value, note.value);
    } catch (err) { say(`not saved: ${err.message}`); return; }
    sessionStorage.setItem(undoKey, JSON.stringify([...undos(), {id: d.id, label: before}]));
    show(value);
    say(`saved ${value} for ${d.id}`);
    await agreement();
    if (d.advance === "yes") await next();
  }
  async function undo() {
    const stack = undos();
    const last = stack.pop();
    if (!last) { say("nothing to undo"); return; }
    try { await post(last.id, last.label, ""); }
    catch (err) { say(`undo failed: ${err.message}`); return; }
    sessionStorage.setItem(undoKey, JSON.stringify(stack));
    if (last.id !== d.id) { location.href = here(last.id); return; }
    show(last.label);
    say(`undone: ${d.id} is ${last.label === null ? "unlabelled" : last.label} again`);
    await agreement();
  }
  async function next() {
    const q = new URLSearchParams({rater: d.rater, ...plan});
    const reply = await fetch(`${api}/next?${q}`);
    const data = await reply.json();
    if (!reply.ok) { say(data.error); return; }
    if (data.id === null) {
      say(`all ${data.planned} planned cases are labelled: thank you`);
      return;
    }
    location.href = here(data.id);
  }
  async function agreement() {
    const reply = await fetch(`${api}/agreement`);
    if (!reply.ok) return;
    const data = await reply.json();
    const rows = data.pairs.map((p) =>
      `<tr><td>${esc(p.a)}</td><td>${esc(p.b)}</td><td>${p.n}</td>` +
      `<td>${p.agreement === null ? "—" : (100 * p.agreement).toFixed(0) + "%"}</td>` +
      `<td>${p.kappa === null ? "—" : p.kappa.toFixed(2)}</td></tr>`).join("");
    document.getElementById("agreement").innerHTML = rows ||
      '<tr><td colspan="5" class="muted">no labels yet</td></tr>';
  }
  function esc(text) {
    const el = document.createElement("span"); el.textContent = text; return el.innerHTML;
  }
  document.querySelectorAll("button[data-label]").forEach((b) =>
    b.addEventListener("click", () => label(b.dataset.label)));
  document.getElementById("undo").addEventListener("click", undo);
  document.getElementById("next").addEventListener("click", next);
  document.getElementById("save-note").addEventListener("click", () =>
    d.current === "" ? say("label the case first: a note is saved with its label")
      : label(d.current));
  document.addEventListener("keydown", (e) => {
    if (e.target.closest("textarea,input,select") || e.ctrlKey || e.metaKey || e.altKey) return;
    const key = e.key.toLowerCase();
    const pick = options.find((o, i) => o.key === key);
    if (pick) { e.preventDefault(); label(pick.value); }
    else if (key === "u" || key === "z") { e.preventDefault(); undo(); }
    else if (key === "n" || key === "arrowright") { e.preventDefault(); next(); }
    else if (key === "/") { e.preventDefault(); note.focus(); }
  });
  show(d.current === "" ? null : d.current);
  agreement();
})();
"""

# The start of labelling: the rater's name, remembered in this browser, then the next case.
START_SCRIPT = """
(() => {
  const form = document.getElementById("rater-form");
  const input = form.querySelector("input[name=rater]");
  if (!input.value) input.value = localStorage.getItem("judge-rater") || "";
  form.addEventListener("submit", () => localStorage.setItem("judge-rater", input.value));
})();
"""
