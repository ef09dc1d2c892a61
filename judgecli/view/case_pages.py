"""A case's pages: the whole case as the run judged it (its text, images, every judgement in
both orders with its raw reply, repeats, items, tool calls, steps, each rater's label), and
the labelling page, which shows the case blind: no verdict, no judge, and a pairwise case's
answers as A and B in this rater's order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from judgecli.report.checklist import items_html
from judgecli.report.escape import esc
from judgecli.report.html_calls import judgements_html, repeats_html
from judgecli.report.html_cases import capped, case_fields_html, case_text_html, verdict_text
from judgecli.report.images import SHOWABLE
from judgecli.report.tool_calls import case_calls_html
from judgecli.result import CaseResult
from judgecli.view.assets import LABEL_SCRIPT, START_SCRIPT
from judgecli.view.labelling import NextCase, Scheme
from judgecli.view.pages import run_url, shell
from judgecli.view.runs import RunEntry

OUTPUTS = ("output_old", "output_new")
NO_TEXT = '<p class="muted">results.jsonl holds no text of this case</p>'
PAIR_KEYS = ("a", "b", "t")
"""The keys of A, B and tie."""


def steps_html(r: CaseResult) -> str:
    """An agent's graded steps (tool, verdict) or conversation turns, as a table."""
    rows = r.steps if r.steps is not None else r.turns
    if not rows:
        return ""
    keys = [
        k
        for k in ("step", "turn", "tool", "message", "score", "choice", "passed")
        if any(k in s for s in rows)
    ]
    head = "".join(f"<th>{k}</th>" for k in keys)
    body = "".join(
        "<tr>"
        + "".join(f"<td>{esc('' if s.get(k) is None else s.get(k))}</td>" for k in keys)
        + "</tr>"
        for s in rows
    )
    what = "steps" if r.steps is not None else "turns"
    return (
        f'<section class="card"><h3>{what} ({len(rows)})</h3><table class="numbers">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></section>"
    )


def labels_html(labels: Mapping[str, Mapping[str, Any]]) -> str:
    """Each rater's label of the case, with its note."""
    if not labels:
        return '<p class="muted">No rater has labelled this case.</p>'
    rows = "".join(
        f"<tr><td>{esc(rater)}</td><td>{esc(line.get('label'))}</td><td>"
        f"{esc(line.get('note') or '')}</td>"
        f"<td class='muted'>{esc(line.get('at') or '')}</td></tr>"
        for rater, line in sorted(labels.items())
    )
    return (
        f'<table id="case-labels"><thead><tr><th>rater</th><th>label</th><th>note</th>'
        f"<th>at</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def case_page(
    entry: RunEntry, r: CaseResult, labels: Mapping[str, Mapping[str, Any]], *, token: str
) -> str:
    """The whole case, as report.html's case view shows it, and its labels."""
    error = f'<p class="failed">{esc(r.error)}</p>' if r.error else ""
    facts = f"status {r.status.value} · verdict {verdict_text(r)}" + (
        f" · category {r.category}" if r.category else ""
    )
    if r.consistent is not None:
        facts += " · orders agree" if r.consistent else " · orders disagree"
    body = [
        (
            f'<h1><a href="{esc(run_url(entry.name))}">{esc(entry.name)}</a> · <code>'
            f"{esc(r.id)}</code></h1>"
        ),
        f'<p class="headline">{esc(facts)}</p>{error}',
        (
            f'<p><a href="{esc(run_url(entry.name, "/label", id=r.id))}">Label this case '
            f"(blind) →</a></p>"
        ),
        f"<section><h2>The case</h2>{case_text_html(r) or NO_TEXT}</section>",
        steps_html(r),
        case_calls_html(r),
        items_html(r),
        f"<section><h2>Judgements</h2>{repeats_html(r)}{''.join(judgements_html(r))}</section>",
        f"<section><h2>Labels</h2>{labels_html(labels)}</section>",
    ]
    return shell(f"{r.id} · {entry.name}", body, token=token)


def blind_image(url: str | None) -> str:
    """An answer's image without its caption (which names the answer's field)."""
    if url is None or not SHOWABLE.match(url):
        return '<p class="muted">an image not shown here</p>'
    return f'<img src="{esc(url)}" alt="an image of this answer" loading="lazy">'


def blind_body(r: CaseResult, slot: str) -> str:
    """A pairwise case for labelling: the shared fields, then the two answers as A and B,
    NEW's answer in `slot`.
    """
    shared = {k: v for k, v in r.case.items() if k not in OUTPUTS}
    first, second = ("output_new", "output_old") if slot == "A" else ("output_old", "output_new")
    answers = []
    for letter, key in (("A", first), ("B", second)):
        images = "".join(blind_image(i.url) for i in r.images or [] if i.field == key)
        text = esc(capped(r.case.get(key, "")))
        answers.append(
            f'<div class="answer" id="answer-{letter.lower()}"><h3>Answer {letter}</h3><pre>'
            f"{text}</pre>"
            f'<div class="case-images">{images}</div></div>'
        )
    others = "".join(
        f"<figure>{blind_image(i.url)}</figure>" for i in r.images or [] if i.field not in OUTPUTS
    )
    return (
        case_fields_html(shared)
        + (f'<div class="case-images">{others}</div>' if others else "")
        + f'<div class="grid2">{"".join(answers)}</div>'
    )


def option_keys(scheme: Scheme) -> list[dict[str, str]]:
    """Each label button's value and keyboard key: a, b, t for A, B, tie; 1-9 (then 0) for
    the first ten points or choices; larger scales are labelled with the mouse.
    """
    if scheme.pairwise:
        return [{"value": v, "key": k} for v, k in zip(scheme.options, PAIR_KEYS, strict=True)]
    keys = [*"123456789", "0"]
    return [
        {"value": v, "key": keys[i] if i < len(keys) else ""} for i, v in enumerate(scheme.options)
    ]


def label_page(
    entry: RunEntry,
    r: CaseResult,
    scheme: Scheme,
    *,
    rater: str,
    slot: str,
    current: Any,
    note: str,
    upcoming: NextCase,
    strategy: str,
    budget: int,
    token: str,
) -> str:
    """One case to label: the case blind, the buttons and keys of the label, a note, undo,
    next, and the raters' agreement so far.
    """
    options = option_keys(scheme)
    buttons = "".join(
        f'<button type="button" data-label="{esc(o["value"])}">{esc(o["value"])}'
        + (f" <kbd>{esc(o['key'])}</kbd>" if o["key"] else "")
        + "</button>"
        for o in options
    )
    case = (
        blind_body(r, slot)
        if scheme.pairwise
        else case_fields_html(dict(r.case.items()))
        + "".join(f"<figure>{blind_image(i.url)}</figure>" for i in r.images or [])
    )
    question = "Which answer is better?" if scheme.pairwise else f"Your label ({scheme.note})"
    progress = (
        f"{upcoming.done} of {upcoming.planned} planned cases labelled by {rater}"
        if upcoming.planned
        else ""
    )
    why = f" · picked for: {upcoming.why}" if upcoming.id == r.id and upcoming.why else ""
    bar = (
        f'<div class="labelbar"><p><strong>{esc(question)}</strong> {buttons}'
        '<button type="button" id="undo">undo <kbd>u</kbd></button>'
        '<button type="button" id="next">next case <kbd>n</kbd></button></p>'
        f'<p class="muted">rater <strong>{esc(rater)}</strong> · plan {esc(strategy)}, '
        f"budget {budget} · "
        f"{esc(progress)}{esc(why)}</p>"
        f'<textarea id="note" placeholder="a note on this case (saved with its label; / to '
        f'type here)">'
        f'{esc(note)}</textarea><button type="button" id="save-note">save the note</button>'
        '<p id="status" role="status"></p></div>'
    )
    agreement = (
        '<section><h2>Agreement so far</h2><table class="numbers"><thead><tr><th>rater</th>'
        "<th>with</th>"
        '<th>cases</th><th>agree</th><th>κ</th></tr></thead><tbody id="agreement"></tbody></table>'
        '<p class="muted">Cohen\'s κ on the cases both labelled (quadratic-weighted on a scale); '
        '"judge" is the run\'s own verdict.</p></section>'
    )
    data = {
        "run": entry.name,
        "id": r.id,
        "rater": rater,
        "options": json.dumps(options),
        "current": "" if current is None else str(current),
        "strategy": strategy,
        "budget": str(budget),
        "advance": "yes",
    }
    body = [
        (
            f'<h1><a href="{esc(run_url(entry.name))}">{esc(entry.name)}</a> · label <code>'
            f"{esc(r.id)}</code></h1>"
        ),
        bar,
        f"<section><h2>The case</h2>{case}</section>",
        agreement,
    ]
    return shell(f"label {r.id} · {entry.name}", body, token=token, script=LABEL_SCRIPT, data=data)


def start_page(
    entry: RunEntry,
    *,
    strategies: list[str],
    strategy: str,
    budget: int,
    rater: str,
    case_id: str | None,
    token: str,
) -> str:
    """Who is labelling, and by which plan: then the case asked for (`case_id`), or the
    next case of that plan.
    """
    wanted = f'<input type="hidden" name="id" value="{esc(case_id)}">' if case_id else ""
    choices = "".join(
        f'<option value="{esc(s)}"{" selected" if s == strategy else ""}>{esc(s)}</option>'
        for s in strategies
    )
    form = (
        f'<form id="rater-form" method="get" action="{esc(run_url(entry.name, "/label"))}" '
        'class="filters">'
        f'<label>rater <input name="rater" value="{esc(rater)}" required '
        f'pattern="[A-Za-z0-9_.\\-]{{1,64}}" '
        'placeholder="your name"></label>'
        f'<label>plan <select name="strategy">{choices}</select></label>'
        f'<label>budget <input name="budget" type="number" min="1" value="{budget}"></label>'
        f'{wanted}<button type="submit">start labelling</button></form>'
    )
    text = (
        "<p>Each label is written at once to <code>labels/&lt;rater&gt;.jsonl</code> in the run's "
        "folder. The next case follows the plan: it picks the cases where the judge was "
        "least sure, "
        "with known inclusion probabilities, so that the corrected numbers stay unbiased.</p>"
    )
    return shell(
        f"label {entry.name}",
        [
            f'<h1><a href="{esc(run_url(entry.name))}">{esc(entry.name)}</a> · labelling</h1>',
            text,
            form,
        ],
        token=token,
        script=START_SCRIPT,
    )
