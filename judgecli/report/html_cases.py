"""The cases table of report.html: one row per case, expandable to the case's text (input,
answers, reference, context) and every judgement (model, order, verdict, reasoning, escaped
raw reply), filtered by the page's inline script. Calibrate runs add the human labels and a
filter for the cases where the judge disagrees with them; runs with --repeats add whether
each case's K verdicts agree (and a filter on it), their spread, each repeat's verdict, and
the judgements grouped by repeat.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from judgecli.report.cells import NA, fmt, money
from judgecli.report.stability import repeat_text, repeats_text, spread_text
from judgecli.result import CaseResult, CaseStatus, Judgement, natural_key
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.run import RunSummary

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
    """Text or attribute value, escaped."""
    return escape(str(text), quote=True)


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
        f'<div class="case-field"><h5>{esc(CASE_FIELDS.get(k, k))}</h5>'
        f"<pre>{esc(capped(r.case[k]))}</pre></div>"
        for k in order
    )


def label_text(labels: Sequence[str | float] | None) -> str:
    """Human labels as the table shows them: "3, 4", "pass"."""
    return ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in labels or [])


def yes_no(flag: bool | None) -> str:
    """A filter key for an optional flag."""
    return "" if flag is None else ("yes" if flag else "no")


def judgement_html(j: Judgement) -> str:
    """One judge call: who, what it cost, its verdict and reasoning, and the raw reply."""
    facts = [
        j.model,
        *([f"order {j.order.value}"] if j.order else []),
        f"{j.prompt_tokens:,} in / {j.completion_tokens:,} out tokens",
        money(j.cost_usd),
        f"{j.latency_s:.2f} s",
        f"{j.attempts} attempt(s)",
        *(["cached"] if j.cached else []),
        *([f"repeat {j.repeat}"] if j.repeat is not None else []),
    ]
    parts = [f'<p class="muted">{esc(" · ".join(facts))}</p>']
    if (v := j.verdict) is not None:
        # A pairwise judge names a slot; say which answer sat there in this order.
        slots = dict(zip("AB", j.order.value.split("-"), strict=True)) if j.order else {}
        slot = slots.get(v.winner.value) if v.winner else None
        winner = v.winner and (f"{v.winner.value} ({slot})" if slot else v.winner.value)
        said = [
            f"{k} {val:g}" if isinstance(val, float) else f"{k} {val}"
            for k, val in (
                ("score", v.score),
                ("choice", v.choice),
                ("winner", winner),
                ("confidence", v.confidence),
            )
            if val is not None
        ]
        said += [f"{name} {val:g}" for name, val in v.criteria.items()]
        parts.append(f"<p><strong>{esc(', '.join(said) or 'verdict')}</strong></p>")
        parts.append(f"<p>{esc(v.reasoning)}</p>")
        if v.feedback:
            parts.append(f"<p><em>{esc(v.feedback)}</em></p>")
    if j.error:
        parts.append(f'<p class="failed">{esc(j.error)}</p>')
    if j.raw is not None:
        more = len(j.raw) - RAW_LIMIT
        cut = f"\n… {more:,} more characters in results.jsonl" if more > 0 else ""
        parts.append(f"<pre>{esc(j.raw[:RAW_LIMIT] + cut)}</pre>")
    return f'<div class="judgement">{"".join(parts)}</div>'


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
    cost = sum(j.cost_usd for j in r.all_judgements)
    tokens = sum(j.prompt_tokens + j.completion_tokens for j in r.all_judgements)
    flag = yes_no(r.consistent) if pairwise else yes_no(r.passed)
    winner = r.winner.value if r.winner is not None else "none"
    cells = [
        f"<code>{esc(r.id)}</code>",
        f'<span class="{r.status.value}">{r.status.value}</span>',
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
    n = len(r.all_judgements)
    what = f"{n} judgement{'' if n == 1 else 's'}"
    if r.repeats:
        what += f" in {len(r.repeats)} repeats"
    row = "".join(f"<td>{c}</td>" for c in cells)
    stable = f' data-stable="{yes_no(r.stable)}"' if repeated else ""
    return (
        f'<tbody data-status="{r.status.value}" data-winner="{winner}" '
        f'data-consistent="{yes_no(r.consistent)}" data-passed="{yes_no(r.passed)}" '
        f'data-agrees="{yes_no(r.agrees)}"{stable}><tr class="case">{row}</tr>'
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
