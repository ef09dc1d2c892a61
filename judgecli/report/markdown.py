"""Reports: RunSummary → report.md text and rich tables. Returns text and renderables;
writes nothing, prints nothing.

Both renderings are built from the same `Section`s, so the terminal and the CI page never
disagree about a number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import assert_never

from rich.table import Table

from judgecli.report.calibrate import calibrate_line, calibrate_sections
from judgecli.report.cascade import cascade_sections
from judgecli.report.cells import (
    NA,
    Section,
    count_of,
    fmt,
    fmt_ci,
    fmt_pct,
    group_ci,
    heading,
    money,
    reason_for,
    rich_table,
)
from judgecli.report.checklist import checklist_rows, items_section, tag_section
from judgecli.report.decision import (
    calls_legend,
    decision_sections,
    gate_verdict,
    mark_cell,
    sequential_note,
    undecided_note,
)
from judgecli.report.pairwise import pairwise_sections
from judgecli.report.refine import refine_line, refine_sections
from judgecli.report.stability import stability_sections
from judgecli.report.tool_calls import NO_JUDGE, tool_call_sections, tool_calls_line
from judgecli.report.weighted import weighted_pass_rate
from judgecli.result import CaseResult
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.facts import SpecRun, Usage
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.refine import RefineSummary
from judgecli.summary.run import RunSummary
from judgecli.summary.score import ScoreSummary


def batch_calls(usage: Usage) -> str:
    """`, 54 by batch` when a provider batch answered calls (--batch), else nothing."""
    return f", {usage.batched} by batch" if usage.batched else ""


def title_of(s: RunSummary) -> str:
    """The report's title: command, rubric and its version."""
    return f"judge {s.command}: {s.rubric} (v{s.rubric_version})"


def headline(s: RunSummary) -> str:
    """One line: the verdict a CI page shows first. A run the judge could not finish says
    INCOMPLETE instead of PASS or FAIL: its numbers, if any, describe only what was graded.
    """
    line = numbers_line(s)
    if s.incomplete is not None:
        graded = f" On the {count_of(s.n_ok, 'case')} graded: {line}." if s.n_ok else ""
        return f"INCOMPLETE — {s.incomplete}; no verdict.{graded}"
    return line if s.gate is None else gate_verdict(s.gate, line)


def pairwise_line(s: PairwiseSummary) -> str:
    """The win rate and the tally, or why there is no win rate."""
    if s.win_rate is None:
        why = "no case was graded" if not s.n_ok else "every graded case was dropped"
        return f"NEW vs OLD: no win rate ({why})"
    tally = ", ".join(
        [count_of(s.wins, "win"), count_of(s.losses, "loss", "losses"), count_of(s.ties, "tie")]
    )
    return (
        f"NEW vs OLD: win rate {fmt_pct(s.win_rate)} {fmt_ci(s.win_rate_ci, pct=True)} "
        f"(ties count half; {tally})"
    )


def numbers_line(s: RunSummary) -> str:
    """The run's headline numbers, without the gate's verdict."""
    match s:
        case ScoreSummary():
            return score_line(s)
        case PairwiseSummary():
            return pairwise_line(s)
        case CalibrateSummary():
            return calibrate_line(s)
        case RefineSummary():
            return refine_line(s)
        case _:
            assert_never(s)


def score_line(s: ScoreSummary) -> str:
    """Cases graded, the mean and the pass rate."""
    parts = [f"{s.n_ok} of {s.n_cases} cases graded"]
    if s.mean is not None:
        # No interval (one case, or every score equal) is left out, not shown as "n/a".
        interval = fmt_ci(s.mean_ci)
        parts.append(f"mean {fmt(s.mean)}" + ("" if interval == NA else f" {interval}"))
    if s.pass_rate is not None:
        parts.append(f"pass rate {fmt_pct(s.pass_rate)} {fmt_ci(s.pass_rate_ci, pct=True)}")
    if calls := tool_calls_line(s):
        parts.append(calls)
    if s.checklist_score is not None:
        interval = fmt_ci(s.checklist_score_ci, pct=True)
        shown = "" if interval == NA else f" {interval}"
        parts.append(f"checklist score {fmt_pct(s.checklist_score)}{shown}")
    return ", ".join(parts)


def gate_note(s: RunSummary) -> str | None:
    """An undecided gate: what to do. A sequential run: when it decided and what that
    saved. Else, when the point estimate passes but the interval does not: what it would
    take.
    """
    if said := undecided_note(s.gate):
        return said
    if s.sequential is not None:
        return sequential_note(s.sequential)
    if not isinstance(s, PairwiseSummary) or s.gate is None or s.gate.cases_needed is None:
        return None
    return (
        f"The point estimate clears the bar but the 95% interval does not: at the observed win "
        f"rate, about {s.gate.cases_needed} cases in all (now {s.wins} + {s.losses} + "
        f"{s.ties}) would put the lower bound above it."
    )


def score_sections(s: ScoreSummary) -> list[Section]:
    """The tables of a `score` run."""
    rows = [("cases", f"{s.n_ok} ok / {s.n_failed} failed of {s.n_cases}", "")]
    if s.mean is not None:
        rows.append(
            ("mean score", fmt(s.mean), fmt_ci(s.mean_ci, why=reason_for(s.no_interval, "mean")))
        )
    rows += [
        (f"  {name}", fmt(c.mean), fmt_ci(c.mean_ci, why=reason_for(c.no_interval, "mean")))
        for name, c in s.criteria.items()
    ]
    if s.pass_rate is not None:
        rows.append(("pass rate", fmt_pct(s.pass_rate), fmt_ci(s.pass_rate_ci, pct=True)))
        rows += weighted_pass_rate(s)
    rows += [(f"choice {choice}", str(n), "") for choice, n in (s.choices or {}).items()]
    rows += checklist_rows(s)
    sections = [Section("result", ["measure", "value", "95% CI"], rows), *tag_section(s)]
    if s.distribution:
        top = max(s.distribution.values()) or 1
        sections.append(
            Section(
                "score distribution",
                ["score", "cases", ""],
                [(k, str(v), "█" * round(20 * v / top)) for k, v in s.distribution.items()],
            )
        )
    if s.by_category:
        header = ["category", "n", "mean", "95% CI", "pass rate", "95% CI"]
        calls = s.category_calls if isinstance(s, ScoreSummary) else None
        title = "by category"
        if calls is not None:
            header.append("mean vs rest")
            title += f" ({calls_legend(calls, pct=False)})"
        sections.append(
            Section(
                title,
                header,
                [
                    (
                        name,
                        str(c.n),
                        fmt(c.mean),
                        group_ci(c.mean_ci, c.n, why=reason_for(c.no_interval, "mean")),
                        fmt_pct(c.pass_rate),
                        group_ci(c.pass_rate_ci, c.n, pct=True),
                    )
                    + ((mark_cell(c.mark),) if calls is not None else ())
                    for name, c in s.by_category.items()
                ],
            )
        )
    return sections


def common_sections(s: RunSummary) -> list[Section]:
    """Usage and failures: every run has them."""
    u = s.usage
    sections = [
        Section(
            "usage",
            ["measure", "value"],
            [
                ("calls", f"{u.calls} ({u.retries} retries, {u.cached} cached{batch_calls(u)})"),
                ("tokens", f"{u.prompt_tokens:,} in / {u.completion_tokens:,} out"),
                ("cost", money(u.cost_usd)),
                (
                    "latency p50 / p95",
                    "n/a (no uncached call)"
                    if u.latency_p50_s is None
                    else f"{fmt(u.latency_p50_s)} s / {fmt(u.latency_p95_s)} s",
                ),
            ],
        )
    ]
    if s.failures:
        sections.append(
            Section(
                f"failed cases ({s.n_failed})",
                ["id", "error"],
                [(f.id, f.error[:200]) for f in s.failures],
            )
        )
    return sections


def sections(s: RunSummary) -> list[Section]:
    """Every table of the report, in order."""
    makers = [
        command_sections,
        tool_call_sections,
        stability_sections,
        decision_sections,
        cascade_sections,
    ]
    return [sec for make in makers for sec in make(s)] + common_sections(s)


def command_sections(s: RunSummary) -> list[Section]:
    """The tables of the run's command."""
    match s:
        case ScoreSummary():
            return score_sections(s)
        case PairwiseSummary():
            return pairwise_sections(s)
        case CalibrateSummary():
            return calibrate_sections(s)
        case RefineSummary():
            return refine_sections(s)
        case _:
            assert_never(s)


def md_table(header: list[str], rows: Sequence[tuple[str, ...]]) -> str:
    """A GitHub-flavoured markdown table; pipes in cells are escaped."""
    esc = [[cell.replace("|", "\\|").replace("\n", " ") for cell in row] for row in rows]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in esc]
    return "\n".join(lines)


def render_markdown(s: RunSummary, results: Sequence[CaseResult] = ()) -> str:
    """report.md: the headline first, then the tables a CI page shows (and, from the
    `results`, a checklist run's lowest-scored cases item by item).
    """
    return markdown_page(
        title_of(s),
        headline(s),
        judged_by(s.models, s.rubric_hash) + spec_words(s.spec),
        gate_note(s),
        [*sections(s), *items_section(results)],
        s.warnings,
    )


def spec_words(spec: SpecRun | None, code: Callable[[str], str] = lambda t: f"`{t}`") -> str:
    """` · spec judge.yaml sha256:...`: the evaluation spec the run is (judge run SPEC),
    and the one the run directory held before when it changed; "" for a run of no spec.
    """
    if spec is None:
        return ""
    text = f" · spec {code(spec.path)} {code(spec.hash)}"
    if spec.previous is not None:
        text += f" (changed: the run directory's previous spec was {code(spec.previous)})"
    return text


def judged_by(models: Sequence[str], rubric_hash: str) -> str:
    """The line under a report's headline: who judged, with which rubric (none for a
    rubric that only checks tool calls).
    """
    judges = ", ".join(f"`{m}`" for m in models) or NO_JUDGE
    return f"Judges: {judges} · rubric `{rubric_hash}`"


def markdown_page(
    title: str,
    headline: str,
    meta: str | None,
    note: str | None,
    tables: Sequence[Section],
    warnings: Sequence[str],
) -> str:
    """A report.md: title, headline, who judged, the gate's note, the tables (each with what
    it means under it), then the warnings.
    """
    parts = [f"# {title}", f"**{headline}**", *([meta] if meta else [])]
    if note:
        parts.append(f"> {note}")
    for sec in tables:
        means = f"\n\n{sec.note}" if sec.note else ""
        parts.append(f"## {heading(sec.title)}\n\n{md_table(sec.header, sec.rows)}{means}")
    if warnings:
        parts.append("## Warnings\n\n" + "\n".join(f"- {w}" for w in warnings))
    return "\n\n".join(parts) + "\n"


def terminal_tables(s: RunSummary) -> list[Table]:
    """The tables printed to stderr at the end of a run, laid out for 80 columns."""
    return [rich_table(sec) for sec in sections(s)]
