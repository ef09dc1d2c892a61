"""report.html's charts of each command's numbers, each in a <figure> with its caption.
Values and intervals are labelled exactly as the report's tables print them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import assert_never

from judgecli.report import forest, svg
from judgecli.report.bars import bar_chart, histogram
from judgecli.report.cells import NA, fmt, fmt_ci, fmt_pct
from judgecli.report.decision import calls_legend
from judgecli.report.escape import esc
from judgecli.report.svg import Bar
from judgecli.result import CaseResult, CaseStatus
from judgecli.stats.intervals import Interval, too_few
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.facts import CategoryCalls
from judgecli.summary.gate_records import GateMetric
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.refine import RefineSummary
from judgecli.summary.run import RunSummary
from judgecli.summary.score import ScoreNumbers, ScoreSummary


def command_figures(s: RunSummary, results: Sequence[CaseResult]) -> list[str]:
    """The charts of the run's command (refine's are score's: its final answers)."""
    match s:
        case ScoreSummary() | RefineSummary():
            return score_figures(s, results)
        case PairwiseSummary():
            return pairwise_figures(s, results)
        case CalibrateSummary():
            return calibrate_figures(s)
        case _:
            assert_never(s)


def figure(chart: str, caption: str) -> str:
    """A chart with its caption."""
    return f"<figure>{chart}<figcaption>{esc(caption)}</figcaption></figure>"


def bar(
    label: str,
    value: float | None,
    ci: Interval | None,
    *,
    pct: bool,
    n: int | None = None,
    call: str | None = None,
) -> Bar:
    """A chart row labelled exactly as the report prints the value and its interval; a group
    of `n` < TOO_FEW cases is drawn (interval and all) but marked too few to tell; `call` is
    a category's mark from its adjusted test (Bar.call).
    """
    low, high = ci if ci is not None else (None, None)
    text = (fmt_pct if pct else fmt)(value)
    if (interval := fmt_ci(ci, pct=pct)) != NA:
        text += f" {interval}"
    return Bar(label, value, low, high, text=text, too_few=n is not None and too_few(n), call=call)


def category_bars(
    s: ScoreNumbers | PairwiseSummary, field: str, *, pct: bool, marked: bool = False
) -> list[Bar]:
    """One row per category: its `field` (pass_rate, mean, win_rate) and `field`_ci; with
    `marked`, each coloured by its multiplicity-adjusted mark.
    """
    return [
        bar(
            f"{name} (n={c.n})",
            getattr(c, field),
            getattr(c, f"{field}_ci"),
            pct=pct,
            n=c.n,
            call=c.mark if marked else None,
        )
        for name, c in s.by_category.items()
        if getattr(c, field) is not None
    ]


def marks_caption(calls: CategoryCalls | None, *, pct: bool) -> str:
    """How the categories' colours were decided (the legend's words for them)."""
    if calls is None:
        return ""
    return f" Category colours: {calls_legend(calls, pct=pct)}."


def scale_of(counts: dict[str, int] | None) -> tuple[float, float] | None:
    """The score scale, from the distribution's bins ("1".."4" or "0.00–0.20".."0.80–1.00")."""
    keys = list(counts or {})
    try:
        return (float(keys[0].split("–")[0]), float(keys[-1].split("–")[-1])) if keys else None
    except ValueError:
        return None


def score_figures(s: ScoreNumbers, results: Sequence[CaseResult]) -> list[str]:
    """Score distribution (overall, per criterion), choices, pass rate, category means."""
    out = []
    scale = scale_of(s.distribution)
    if s.distribution:
        chart = histogram(s.distribution, title="score distribution")
        out.append(
            figure(
                chart,
                f"Scores of the {s.n_ok} graded cases; mean {fmt(s.mean)} {fmt_ci(s.mean_ci)}.",
            )
        )
    ok = [r for r in results if r.status is CaseStatus.OK]
    for name, c in s.criteria.items():
        values = [r.criteria[name] for r in ok if name in r.criteria]
        if values:
            counts = {f"{v:g}": n for v, n in sorted(Counter(values).items())}
            chart = histogram(counts, title=f"{name}: score distribution")
            out.append(figure(chart, f"{name}: mean {fmt(c.mean)} {fmt_ci(c.mean_ci)}."))
    if s.choices:
        bars = [Bar(choice, float(n), text=str(n)) for choice, n in s.choices.items()]
        out.append(figure(bar_chart(bars, title="choices"), "Cases per verdict."))
    if s.pass_rate is not None:
        rows = [
            bar("all cases", s.pass_rate, s.pass_rate_ci, pct=True),
            *category_bars(s, "pass_rate", pct=True),
        ]
        chart = bar_chart(rows, title="pass rate", domain=(0.0, 1.0), tick_format=svg.percent)
        out.append(
            figure(chart, "Pass rate with its 95% Wilson interval, overall and by category.")
        )
    calls = s.category_calls if isinstance(s, ScoreSummary) else None
    marked = calls is not None
    if (means := category_bars(s, "mean", pct=False, marked=marked)) and s.mean is not None:
        top = max(b.high if b.high is not None else b.value or 0.0 for b in means)
        chart = forest.forest_plot(
            [bar("all cases", s.mean, s.mean_ci, pct=False, n=s.n_ok), *means],
            title="mean score by category",
            reference=s.mean,
            reference_label=f"mean {fmt(s.mean)}",
            domain=scale or (0.0, max(top, 1.0)),
            tick_format=svg.general,
        )
        out.append(
            figure(
                chart,
                "Mean score per category with its 95% t interval; the "
                "dashed line is the overall mean. Grey: fewer than 10 cases, "
                "or no spread in the scores (no interval), so no "
                "verdict." + marks_caption(calls, pct=False),
            )
        )
    return out


def stability_figures(s: RunSummary) -> list[str]:
    """--repeats: the share of stable cases per category, with its 95% interval, against
    the stability gate's bar (else the share over all cases); needs 2 or more categories.
    """
    sc = s.self_consistency
    if sc is None or len(sc.by_category) < 2:
        return []
    bars = [
        bar(f"{name} (n={c.cases})", c.stability, c.stability_ci, pct=True, n=c.cases)
        for name, c in sc.by_category.items()
        if c.stability is not None
    ]
    checks = s.gate.checks if s.gate else []
    gate = next((c for c in checks if c.metric is GateMetric.STABILITY), None)
    reference = gate.threshold if gate is not None else s.stability
    label = line = None
    if gate is not None:
        label, line = f"gate {gate.threshold:.0%}", "the stability gate's bar"
    elif s.stability is not None:
        label, line = f"all {fmt_pct(s.stability)}", "the share over all cases"
    chart = bar_chart(
        bars,
        title="judge stability by category",
        domain=(0.0, 1.0),
        reference=reference,
        reference_label=label,
        tick_format=svg.percent,
    )
    dashed = f"; dashed: {line}" if line else ""
    return [
        figure(
            chart,
            f"Share of each category's cases on which the judge gave the same verdict in all "
            f"{sc.repeats} asks, with its 95% interval{dashed}.",
        )
    ]


def gate_line(s: RunSummary) -> tuple[float, str]:
    """The win-rate bar the gate checks, else 50% (no preference)."""
    for check in s.gate.checks if s.gate else []:
        if check.metric is GateMetric.WIN_RATE:
            return check.threshold, f"gate {check.threshold:.0%}"
    return 0.5, "50%"


def pairwise_figures(s: PairwiseSummary, results: Sequence[CaseResult]) -> list[str]:
    """Wins/ties/losses, win rate by category and judge against the gate, biases, length."""
    # Imported here: only pairwise and calibrate reports draw these (~1.5 ms to import).
    from judgecli.report import charts

    stack = charts.stacked_bar(
        [
            charts.Segment("NEW wins", s.wins, "new"),
            charts.Segment("ties", s.ties, "tie"),
            charts.Segment("OLD wins", s.losses, "old"),
        ],
        title="wins, ties and losses of NEW",
    )
    left_out = f"; {s.dropped} dropped as inconsistent" if s.dropped else ""
    left_out += f"; {s.n_failed} failed" if s.n_failed else ""
    out = [figure(stack, f"Decided cases from NEW's side{left_out}.")]
    threshold, label = gate_line(s)
    decided = s.wins + s.losses + s.ties
    rows = [
        bar("all cases", s.win_rate, s.win_rate_ci, pct=True, n=decided),
        *category_bars(s, "win_rate", pct=True, marked=s.category_calls is not None),
    ]
    chart = forest.forest_plot(
        rows, title="win rate of NEW", reference=threshold, reference_label=label
    )
    out.append(
        figure(
            chart,
            "Win rate of NEW (ties count half) with its 95% interval: "
            "bootstrap for all cases, Wilson per category; dashed: "
            f"{label}. Green: the whole interval is above it, red: below, "
            "amber: not yet distinguishable, grey: fewer than 10 cases "
            "(too few to tell)." + marks_caption(s.category_calls, pct=True),
        )
    )
    if s.judges:
        rows = [
            bar(m, j.win_rate, j.win_rate_ci, pct=True, n=j.wins + j.losses + j.ties)
            for m, j in s.judges.items()
        ]
        chart = forest.forest_plot(
            rows, title="win rate by judge", reference=threshold, reference_label=label
        )
        out.append(figure(chart, "Each judge of the panel on its own."))
    biases = [
        bar("position consistency", s.consistency, s.consistency_ci, pct=True),
        bar("first-position (A) preference", s.first_position_rate, None, pct=True),
    ]
    if s.length is not None:
        biases.append(bar("longer answer wins", s.length.longer_wins_rate, None, pct=True))
    chart = bar_chart(
        biases,
        title="judge biases",
        domain=(0.0, 1.0),
        reference=0.5,
        reference_label="50%",
        tick_format=svg.percent,
    )
    out.append(
        figure(
            chart,
            "Consistency: share of pairs whose two orders agreed. At 50% "
            "the judge has no preference for position A or the longer "
            "answer.",
        )
    )
    points = [
        (float(r.lengths["new"] - r.lengths["old"]), r.winner.value)
        for r in results
        if r.winner is not None and {"old", "new"} <= r.lengths.keys()
    ]
    if points:
        chart = charts.scatter(
            points,
            title="length difference by verdict",
            lanes=[("new", "NEW won"), ("tie", "tie"), ("old", "OLD won")],
            x_label="characters of NEW − characters of OLD",
        )
        longer = fmt_pct(s.length.longer_wins_rate if s.length else None)
        out.append(
            figure(
                chart,
                f"One dot per case. The longer answer won {longer} of the "
                "decided cases whose lengths differ.",
            )
        )
    return out


def calibrate_figures(s: CalibrateSummary) -> list[str]:
    """Confusion matrix, reliability diagram, F1 per class."""
    from judgecli.report import charts

    out = []
    if s.confusion is not None:
        labels = s.confusion.labels
        chart = charts.heat_map(
            labels,
            labels,
            s.confusion.matrix,
            title="confusion matrix",
            row_title="human",
            column_title="judge",
        )
        out.append(
            figure(
                chart,
                f"Rows: human label, columns: judge verdict, over {s.n_labels} (case, label) "
                f"pairs; the diagonal (outlined) is agreement, accuracy {fmt_pct(s.accuracy)}.",
            )
        )
    if s.reliability:
        chart = charts.reliability_diagram(s.reliability, title="reliability diagram")
        out.append(
            figure(
                chart,
                "Accuracy per bin of stated confidence (count above each bin); on the dashed "
                f"diagonal the judge is calibrated. ECE {fmt(s.ece, 3)}, Brier "
                f"{fmt(s.brier, 3)}.",
            )
        )
    if s.per_class:
        bars = [Bar(str(k), c.f1, text=fmt(c.f1)) for k, c in s.per_class.items()]
        chart = bar_chart(bars, title="F1 per class", domain=(0.0, 1.0))
        out.append(figure(chart, f"Macro F1 {fmt(s.macro_f1)}."))
    return out
