"""The cases table of report.html: one row per case, expandable to the case's text (input,
answers, reference, context) and every judgement (model, order, verdict, reasoning, escaped
raw reply), filtered by the page's inline script. Calibrate runs add the human labels and a
filter for the cases where the judge disagrees with them; runs with --repeats add whether
each case's K verdicts agree (and a filter on it), their spread, each repeat's verdict, and
the judgements grouped by repeat.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgecli.report.cells import NA, fmt, money
from judgecli.report.escape import HTML, escaped
from judgecli.report.stability import repeat_text, repeats_text, spread_text
from judgecli.result import CaseResult, CaseStatus, Judgement, Order, natural_key
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.run import RunSummary
from judgecli.verdict import Position, Verdict

MAX_ROWS = 5000
"""Cases listed in the table (all are in results.jsonl): more make a slow page."""
RAW_LIMIT = 2000
"""Characters of a raw reply shown; the rest is in results.jsonl."""
CASE_LIMIT = 2000
"""Characters of each field of a case's text shown (an answer can be a whole document)."""
CASE_FIELDS = {
    "input": "input",
    "output": "output",
    "output_old": "OLD output",
    "output_new": "NEW output",
    "reference": "reference",
    "context": "context",
}
"""The fields of CaseResult.case in the order a reader checks a verdict, and their labels."""


def esc(text: object) -> str:
    """Text or attribute value, escaped as html.escape(quote=True) escapes it."""
    return escaped(str(text), HTML)


def verdict_text(r: CaseResult) -> str:
    """The case's aggregated verdict in a word or number."""
    if r.status is CaseStatus.FAILED:
        return "—"
    if r.winner is not None:
        return r.winner.value
    bits = [] if r.score is None else [f"{r.score:g}" if r.score.is_integer() else fmt(r.score)]
    bits += [] if r.choice is None else [r.choice]
    if not bits and r.consistent is not None:
        return "dropped"
    return " ".join(bits) or NA


def capped(text: str, limit: int = CASE_LIMIT) -> str:
    """The first `limit` characters, saying how many more there are."""
    more = len(text) - limit
    return text if more <= 0 else f"{text[:limit]}… ({more:,} more characters in results.jsonl)"


def case_text_html(r: CaseResult) -> str:
    """What the judge was shown (CaseResult.case), field by field, escaped and capped;
    nothing for runs made before results held it.
    """
    order = [k for k in CASE_FIELDS if k in r.case] + sorted(r.case.keys() - CASE_FIELDS.keys())
    return "".join(
        f"{FIELD_HEADS.get(k) or field_head(k)}{esc(capped(r.case[k]))}</pre></div>" for k in order
    )


def field_head(label: str) -> str:
    """The markup that opens one field of a case's text, up to its `<pre>`."""
    return f'<div class="case-field"><h5>{esc(label)}</h5><pre>'


FIELD_HEADS = {k: field_head(label) for k, label in CASE_FIELDS.items()}
"""field_head of each of CASE_FIELDS, made once rather than for every row."""


def label_text(labels: Sequence[str | float] | None) -> str:
    """Human labels as the table shows them: "3, 4", "pass"."""
    return ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in labels or [])


def yes_no(flag: bool | None) -> str:
    """A filter key for an optional flag."""
    return "" if flag is None else ("yes" if flag else "no")


def judgement_html(j: Judgement) -> str:
    """One judge call: who, what it cost, its verdict and reasoning, and the raw reply."""
    parts = [f'<div class="judgement"><p class="muted">{esc(call_facts(j))}</p>']
    if (v := j.verdict) is not None:
        said = esc(verdict_words(v, j.order))
        parts.append(f"<p><strong>{said}</strong></p><p>{esc(v.reasoning)}</p>")
        if v.feedback:
            parts.append(f"<p><em>{esc(v.feedback)}</em></p>")
    if j.error:
        parts.append(f'<p class="failed">{esc(j.error)}</p>')
    if j.raw is not None:
        more = len(j.raw) - RAW_LIMIT
        cut = f"\n… {more:,} more characters in results.jsonl" if more > 0 else ""
        parts.append(f"<pre>{esc(j.raw[:RAW_LIMIT] + cut)}</pre>")
    parts.append("</div>")
    return "".join(parts)


def call_facts(j: Judgement) -> str:
    """Who made a call and what it took: `m · 120 in / 40 out tokens · $0.0010 · 0.52 s`."""
    facts = [j.model]
    if j.order:
        facts.append(f"order {j.order.value}")
    facts += [
        f"{j.prompt_tokens:,} in / {j.completion_tokens:,} out tokens",
        money(j.cost_usd),
        f"{j.latency_s:.2f} s",
        f"{j.attempts} attempt(s)",
    ]
    if j.cached:
        facts.append("cached")
    if j.repeat is not None:
        facts.append(f"repeat {j.repeat}")
    return " · ".join(facts)


def verdict_words(v: Verdict, order: Order | None) -> str:
    """A verdict's numbers and names in a line: `score 4, confidence 0.8, accuracy 4`."""
    said = [] if v.score is None else [f"score {v.score:g}"]
    if v.choice is not None:
        said.append(f"choice {v.choice}")
    if v.winner is not None:
        said.append(f"winner {WINNER_WORDS[order, v.winner]}")
    if v.confidence is not None:
        said.append(f"confidence {v.confidence:g}")
    said += [f"{name} {val:g}" for name, val in v.criteria.items()]
    return ", ".join(said) or "verdict"


def slot_words(order: Order | None, winner: Position) -> str:
    """`A (old)`: the slot a pairwise judge picked, and which answer sat there in its order."""
    slot = dict(zip("AB", order.value.split("-"), strict=True)).get(winner.value) if order else None
    return f"{winner.value} ({slot})" if slot else winner.value


WINNER_WORDS = {(order, w): slot_words(order, w) for order in (None, *Order) for w in Position}
"""slot_words of every order and slot, worked out once rather than for every judgement."""


def stability_cell(r: CaseResult) -> str:
    """Whether a case's K verdicts agree: "stable", "unstable" (marked) or "—"."""
    if r.stable is None:
        return "—"
    return "stable" if r.stable else '<span class="disagrees">unstable</span>'


def repeats_html(r: CaseResult) -> str:
    """Each repeat's verdict, in repeat order, and whether they agree."""
    if not r.repeats:
        return ""
    agree = {True: "they agree", False: "they disagree", None: ""}[r.stable]
    spread = "" if r.spread is None else f" ({spread_text(r)})"
    said = f'<span class="disagrees">{agree}</span>' if r.stable is False else agree
    return (
        f"<p><strong>{len(r.repeats)} repeats: {esc(repeats_text(r.repeats))}</strong>"
        f"{' — ' + said if said else ''}{esc(spread)}</p>"
    )


def judgements_html(r: CaseResult) -> list[str]:
    """Every judge call of the case, as the run made them; with --repeats, grouped by
    repeat under that repeat's verdict (numbered as results.jsonl's `repeat`).
    """
    calls = r.judgements
    # A cascade's screen calls come first, as in all_judgements; their repeats are the
    # screen's, not the verdicts listed, so each says its repeat in its own line.
    out = [judgement_html(j) for j in r.screen.judgements] if r.screen else []
    if all(j.repeat is None for j in calls):
        return out + [judgement_html(j) for j in calls]
    verdicts = {v.repeat: v for v in r.repeats or []}
    out += [judgement_html(j) for j in calls if j.repeat is None]
    for k in sorted({j.repeat for j in calls if j.repeat is not None}):
        said = repeat_text(verdicts[k]) if k in verdicts else "no verdict"
        out.append(f"<h5>repeat {k}: {esc(said)}</h5>")
        out += [judgement_html(j) for j in calls if j.repeat == k]
    return out


def case_row(r: CaseResult, *, pairwise: bool, labelled: bool, repeated: bool, columns: int) -> str:
    """A case's tbody: a summary row, then its text and judgements behind a <details>."""
    calls = r.all_judgements
    cost = sum(j.cost_usd for j in calls)
    tokens = sum(j.prompt_tokens + j.completion_tokens for j in calls)
    consistent, passed = yes_no(r.consistent), yes_no(r.passed)
    flag = consistent if pairwise else passed
    winner = r.winner.value if r.winner is not None else "none"
    status = r.status.value
    cells = [
        f"<code>{esc(r.id)}</code>",
        f'<span class="{status}">{status}</span>',
        esc(verdict_text(r)),
    ]
    if labelled:
        human = esc(label_text(r.human_labels)) or "—"
        cells.append(f'<span class="disagrees">{human}</span>' if r.agrees is False else human)
    cells.append(flag or "—")
    if repeated:
        cells += [stability_cell(r), esc(spread_text(r))]
    cells += [esc(r.category or ""), f"{tokens:,}", money(cost)]
    extra = [f'<p class="failed">{esc(r.error)}</p>'] if r.error else []
    if r.agrees is False:
        extra.append('<p class="disagrees">the judge disagrees with the human label</p>')
    extra.append(case_text_html(r))
    if r.lengths:
        extra.append(
            f'<p class="muted">answer lengths: old {r.lengths.get("old", NA)}, '
            f"new {r.lengths.get('new', NA)} characters</p>"
        )
    if r.tier is not None:
        said = (
            ""
            if r.screen is None
            else (
                "; the screen failed"
                if r.screen.status is CaseStatus.FAILED
                else f"; the screen said {esc(verdict_text(r.screen))}"
            )
        )
        extra.append(f'<p class="muted">decided by the {r.tier.value} judge{said}</p>')
    extra.append(repeats_html(r))
    extra += judgements_html(r)
    n = len(calls)
    what = f"{n} judgement{'' if n == 1 else 's'}"
    if r.repeats:
        what += f" in {len(r.repeats)} repeats"
    row = "</td><td>".join(cells)
    stable = f' data-stable="{yes_no(r.stable)}"' if repeated else ""
    return (
        f'<tbody data-status="{status}" data-winner="{winner}" '
        f'data-consistent="{consistent}" data-passed="{passed}" '
        f'data-agrees="{yes_no(r.agrees)}"{stable}><tr class="case"><td>{row}</td></tr>'
        f'<tr class="more"><td colspan="{columns}"><details><summary>'
        f"{'the case and ' + what if r.case else what}</summary>{''.join(extra)}</details>"
        "</td></tr></tbody>"
    )


def select(key: str, label: str, options: Sequence[tuple[str, str]]) -> str:
    """A filter on one data-* key of the case rows."""
    opts = "".join(f'<option value="{v}">{esc(text)}</option>' for v, text in options)
    return f'<select data-key="{key}" aria-label="{esc(label)}">{opts}</select>'


def case_table(s: RunSummary, results: Sequence[CaseResult]) -> str:
    """Every case (up to MAX_ROWS), filterable by text, status, winner and consistency, for
    calibrate runs by agreement with the human labels, and for runs with --repeats by
    whether the K verdicts agree.
    """
    pairwise = isinstance(s, PairwiseSummary) or any(r.consistent is not None for r in results)
    labelled = isinstance(s, CalibrateSummary) or any(r.human_labels is not None for r in results)
    repeated = s.self_consistency is not None or any(r.repeats is not None for r in results)
    flag = "consistent" if pairwise else "passed"
    header = [
        "id",
        "status",
        "verdict",
        *(["human"] if labelled else []),
        flag,
        *(["stability", "spread"] if repeated else []),
        "category",
        "tokens",
        "cost",
    ]
    filters = [
        '<input type="search" id="case-search" placeholder="search ids, categories, case '
        'text, reasoning, raw replies" aria-label="search cases">',
        select("status", "status", [("", "any status"), ("ok", "ok"), ("failed", "failed")]),
    ]
    if pairwise:
        filters.append(
            select(
                "winner",
                "winner",
                [
                    ("", "any winner"),
                    ("new", "NEW won"),
                    ("old", "OLD won"),
                    ("tie", "tie"),
                    ("none", "no verdict"),
                ],
            )
        )
        filters.append(
            select(
                "consistent",
                "consistency",
                [("", "any consistency"), ("yes", "consistent"), ("no", "position-flipped")],
            )
        )
    else:
        filters.append(
            select(
                "passed", "passed", [("", "passed or not"), ("yes", "passed"), ("no", "not passed")]
            )
        )
    if labelled:
        filters.append(
            select(
                "agrees",
                "agreement with the humans",
                [
                    ("", "agrees or not"),
                    ("yes", "agrees with the humans"),
                    ("no", "disagrees with the humans"),
                ],
            )
        )
    if repeated:
        filters.append(
            select(
                "stable",
                "stability across repeats",
                [
                    ("", "stable or not"),
                    ("yes", "stable: the repeats agree"),
                    ("no", "unstable: the repeats disagree"),
                ],
            )
        )
    # results.jsonl is in the order cases finished; people look cases up by id.
    shown = sorted(results, key=lambda r: natural_key(r.id))[:MAX_ROWS]
    note = (
        (
            f'<p class="note">Showing the first {len(shown):,} of {len(results):,} cases; '
            "every case is in results.jsonl.</p>"
        )
        if len(results) > len(shown)
        else ""
    )
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join(
        case_row(r, pairwise=pairwise, labelled=labelled, repeated=repeated, columns=len(header))
        for r in shown
    )
    return (
        f"<section><h2>Cases ({len(results):,})</h2>{note}"
        f'<div class="filters" id="case-filters" hidden>{"".join(filters)}'
        '<span id="case-count" class="muted"></span></div>'
        f'<table id="cases"><thead><tr>{head}</tr></thead>{body}</table></section>'
    )
