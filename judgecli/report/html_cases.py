"""The cases table of report.html: one row per case, expandable to the case's text (input,
answers, reference, context) and every judgement (model, order, verdict, reasoning, escaped
raw reply), filtered by the page's inline script. Calibrate runs add the human labels and a
filter for the cases where the judge disagrees with them; runs with --repeats add whether
each case's K verdicts agree (and a filter on it), their spread, each repeat's verdict, and
the judgements grouped by repeat; arena runs list comparisons, with the two systems of each
and the winner by name (and a filter on it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from judgecli.report.cells import NA, fmt, money
from judgecli.report.checklist import items_html
from judgecli.report.escape import esc
from judgecli.report.html_calls import judgements_html, repeats_html, stability_cell
from judgecli.report.images import thumbnails_html
from judgecli.report.stability import spread_text
from judgecli.report.tool_calls import case_calls_html
from judgecli.result import CaseResult, CaseStatus, Winner, natural_key
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.run import RunSummary

MAX_ROWS = 5000
"""Cases listed in the table (all are in results.jsonl): more make a slow page."""
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


def case_text_html(r: CaseResult, pair: tuple[str, str] | None = None) -> str:
    """What the judge was shown (CaseResult.case), field by field, escaped and capped;
    nothing for runs made before results held it. `pair`: the names of the OLD and NEW
    answers' systems (an arena's), for their headings. The images it showed follow, as
    thumbnails (report.images).
    """
    return case_fields_html(r.case, pair) + thumbnails_html(r.images)


def case_fields_html(case: Mapping[str, str], pair: tuple[str, str] | None = None) -> str:
    """A case's text, field by field in the order a reader checks a verdict."""
    order = [k for k in CASE_FIELDS if k in case] + sorted(case.keys() - CASE_FIELDS.keys())
    heads = FIELD_HEADS
    if pair is not None:
        old, new = pair
        named = {"output_old": f"{old}'s output", "output_new": f"{new}'s output"}
        heads = FIELD_HEADS | {k: field_head(label) for k, label in named.items()}
    return "".join(
        f"{heads.get(k) or field_head(k)}{esc(capped(case[k]))}</pre></div>" for k in order
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


@dataclass(frozen=True)
class TableShape:
    """Which columns and filters the cases table has."""

    pairwise: bool
    labelled: bool = False
    repeated: bool = False
    systems: Mapping[str, tuple[str, str]] | None = None
    """Arena: each comparison's two systems by its id, (OLD's, NEW's); None elsewhere."""

    @classmethod
    def of(cls, s: RunSummary, results: Sequence[CaseResult]) -> TableShape:
        """The shape of a score, pairwise, calibrate or refine run's table."""
        return cls(
            pairwise=isinstance(s, PairwiseSummary)
            or any(r.consistent is not None for r in results),
            labelled=isinstance(s, CalibrateSummary)
            or any(r.human_labels is not None for r in results),
            repeated=s.self_consistency is not None or any(r.repeats is not None for r in results),
        )

    def pair(self, r: CaseResult) -> tuple[str, str]:
        """The names of a comparison's OLD and NEW answers: arena systems, else old/new."""
        return (self.systems or {}).get(r.id, ("old", "new"))

    def winner(self, r: CaseResult) -> str:
        """The winner as the table and its filter name it (an arena's by system)."""
        if r.winner is None:
            return "none"
        if self.systems is None or r.winner is Winner.TIE:
            return r.winner.value
        old, new = self.pair(r)
        return old if r.winner is Winner.OLD else new


def case_row(r: CaseResult, shape: TableShape, *, columns: int) -> str:
    """A case's tbody: a summary row, then its text and judgements behind a <details>."""
    calls = r.all_judgements
    cost = sum(j.cost_usd for j in calls)
    tokens = sum(j.prompt_tokens + j.completion_tokens for j in calls)
    consistent, passed = yes_no(r.consistent), yes_no(r.passed)
    flag = consistent if shape.pairwise else passed
    winner = shape.winner(r)
    status = r.status.value
    verdict = verdict_text(r)
    cells = [f"<code>{esc(r.id)}</code>"]
    if shape.systems is not None:
        cells.append(esc(" vs ".join(shape.pair(r))))
        verdict = winner if r.winner is not None else verdict
    cells += [f'<span class="{status}">{status}</span>', esc(verdict)]
    if shape.labelled:
        human = esc(label_text(r.human_labels)) or "—"
        cells.append(f'<span class="disagrees">{human}</span>' if r.agrees is False else human)
    cells.append(flag or "—")
    if shape.repeated:
        cells += [stability_cell(r), esc(spread_text(r))]
    cells += [esc(r.category or ""), f"{tokens:,}", money(cost)]
    extra = [f'<p class="failed">{esc(r.error)}</p>'] if r.error else []
    if r.agrees is False:
        extra.append('<p class="disagrees">the judge disagrees with the human label</p>')
    extra.append(case_text_html(r, shape.pair(r) if shape.systems is not None else None))
    extra.append(case_calls_html(r))
    extra.append(items_html(r))
    if r.lengths:
        old, new = shape.pair(r)
        extra.append(
            f'<p class="muted">answer lengths: {esc(old)} {r.lengths.get("old", NA)}, '
            f"{esc(new)} {r.lengths.get('new', NA)} characters</p>"
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
    if r.tool_calls is not None and r.tool_calls.decided:
        what = "the tool calls checked (no judge asked)"
    row = "</td><td>".join(cells)
    stable = f' data-stable="{yes_no(r.stable)}"' if shape.repeated else ""
    return (
        f'<tbody data-status="{status}" data-winner="{esc(winner)}" '
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
    return cases_section(results, TableShape.of(s, results))


def cases_section(results: Sequence[CaseResult], shape: TableShape) -> str:
    """The cases table of a given shape (an arena's: case_table for the other runs)."""
    pairwise, labelled, repeated = shape.pairwise, shape.labelled, shape.repeated
    flag = "consistent" if pairwise else "passed"
    header = [
        "id",
        *(["systems"] if shape.systems is not None else []),
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
        filters.append(select("winner", "winner", winner_options(shape)))
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
    body = "".join(case_row(r, shape, columns=len(header)) for r in shown)
    return (
        f"<section><h2>Cases ({len(results):,})</h2>{note}"
        f'<div class="filters" id="case-filters" hidden>{"".join(filters)}'
        '<span id="case-count" class="muted"></span></div>'
        f'<table id="cases"><thead><tr>{head}</tr></thead>{body}</table></section>'
    )


def winner_options(shape: TableShape) -> list[tuple[str, str]]:
    """The winner filter's options: NEW, OLD, tie; in an arena each system by name."""
    if shape.systems is None:
        named = [("new", "NEW won"), ("old", "OLD won")]
    else:
        names = dict.fromkeys(name for pair in shape.systems.values() for name in pair)
        named = [(esc(name), f"{name} won") for name in names]
    return [("", "any winner"), *named, ("tie", "tie"), ("none", "no verdict")]
