"""One case's judge calls in report.html: each judgement's facts (model, order, tokens, cost,
latency), verdict, reasoning and escaped raw reply; with --repeats, grouped by repeat under
each repeat's verdict. Part of the cases table (html_cases).
"""

from __future__ import annotations

from judgecli.report.cells import money
from judgecli.report.escape import esc
from judgecli.report.stability import repeat_text, repeats_text, spread_text
from judgecli.result import CaseResult, Judgement, Order
from judgecli.verdict import Position, Verdict

RAW_LIMIT = 2000
"""Characters of a raw reply shown; the rest is in results.jsonl."""


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
