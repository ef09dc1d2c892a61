"""Reports: RunSummary → report.md text and rich tables. Returns text and renderables;
writes nothing, prints nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from judgecli.stats.summary import Interval, RunSummary

NA = "n/a"


def fmt(value: float | None, digits: int = 2) -> str:
    """A number for a report cell."""
    return NA if value is None else f"{value:.{digits}f}"


def fmt_pct(value: float | None) -> str:
    """A share as a percentage."""
    return NA if value is None else f"{value:.1%}"


def fmt_ci(ci: Interval | None, *, pct: bool = False) -> str:
    """A 95% interval as [lo, hi]."""
    if ci is None or ci[0] is None or ci[1] is None:
        return NA
    show = fmt_pct if pct else fmt
    return f"[{show(ci[0])}, {show(ci[1])}]"


def headline_rows(s: RunSummary) -> list[tuple[str, str, str]]:
    """(measure, value, 95% CI) rows of the overall result."""
    rows = [("cases", f"{s.n_ok} ok / {s.n_failed} failed of {s.n_cases}", "")]
    if s.mean is not None:
        rows.append(("mean score", fmt(s.mean), fmt_ci(s.mean_ci)))
    for name, c in s.criteria.items():
        rows.append((f"  {name}", fmt(c.mean), fmt_ci(c.mean_ci)))
    if s.pass_rate is not None:
        rows.append(("pass rate", fmt_pct(s.pass_rate), fmt_ci(s.pass_rate_ci, pct=True)))
    for choice, n in (s.choices or {}).items():
        rows.append((f"choice {choice}", str(n), ""))
    return rows


def usage_rows(s: RunSummary) -> list[tuple[str, str]]:
    """(measure, value) rows of what the run cost."""
    u = s.usage
    return [
        ("calls", f"{u.calls} ({u.retries} retries, {u.cached} cached)"),
        ("tokens", f"{u.prompt_tokens:,} in / {u.completion_tokens:,} out"),
        ("cost", f"${u.cost_usd:.4f}"),
        ("latency p50 / p95", f"{fmt(u.latency_p50_s)} s / {fmt(u.latency_p95_s)} s"),
    ]


def category_rows(s: RunSummary) -> list[tuple[str, str, str, str, str]]:
    """(category, n, mean [CI], pass rate [CI]) rows."""
    return [
        (name, str(c.n), fmt(c.mean), fmt_ci(c.mean_ci), f"{fmt_pct(c.pass_rate)} "
         f"{fmt_ci(c.pass_rate_ci, pct=True)}".strip())
        for name, c in s.by_category.items()
    ]  # fmt: skip


def md_table(header: list[str], rows: Sequence[tuple[str, ...]]) -> str:
    """A GitHub-flavoured markdown table; pipes in cells are escaped."""
    esc = [[cell.replace("|", "\\|") for cell in row] for row in rows]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in esc]
    return "\n".join(lines)


def render_markdown(s: RunSummary) -> str:
    """report.md: the headline first, then the tables a CI page shows."""
    parts = [
        f"# judge {s.command}: {s.rubric} (v{s.rubric_version})",
        f"Judges: {', '.join(f'`{m}`' for m in s.models)} · rubric `{s.rubric_hash}`",
        md_table(["measure", "value", "95% CI"], headline_rows(s)),
    ]
    if s.distribution:
        parts.append("## Score distribution\n\n" + md_table(
            ["score", "cases"], [(k, str(v)) for k, v in s.distribution.items()]
        ))  # fmt: skip
    if s.by_category:
        parts.append("## By category\n\n" + md_table(
            ["category", "n", "mean", "95% CI", "pass rate"], category_rows(s)
        ))  # fmt: skip
    parts.append("## Usage\n\n" + md_table(["measure", "value"], usage_rows(s)))
    if s.failures:
        shown = [(f.id, f.error[:200]) for f in s.failures]
        parts.append(f"## Failed cases ({s.n_failed})\n\n" + md_table(["id", "error"], shown))
    if s.warnings:
        parts.append("## Warnings\n\n" + "\n".join(f"- {w}" for w in s.warnings))
    return "\n\n".join(parts) + "\n"


def terminal_tables(s: RunSummary) -> list[Table]:
    """The tables printed to stderr at the end of a run."""
    head = Table(title=f"judge {s.command} · {s.rubric} · {', '.join(s.models)}")
    for name, justify in (("measure", "left"), ("value", "right"), ("95% CI", "right")):
        head.add_column(name, justify=justify)  # type: ignore[arg-type]
    for row in headline_rows(s):
        head.add_row(*row)
    tables = [head]
    if s.distribution:
        dist = Table(title="score distribution")
        dist.add_column("score")
        dist.add_column("cases", justify="right")
        dist.add_column("")
        top = max(s.distribution.values()) or 1
        for k, v in s.distribution.items():
            dist.add_row(k, str(v), "█" * round(20 * v / top))
        tables.append(dist)
    if s.by_category:
        cat = Table(title="by category")
        for name in ("category", "n", "mean", "95% CI", "pass rate"):
            cat.add_column(name, justify="left" if name == "category" else "right")
        for crow in category_rows(s):
            cat.add_row(*crow)
        tables.append(cat)
    use = Table(title="usage")
    use.add_column("measure")
    use.add_column("value", justify="right")
    for urow in usage_rows(s):
        use.add_row(*urow)
    tables.append(use)
    if s.failures:
        fail = Table(title=f"failed cases ({s.n_failed})")
        fail.add_column("id")
        fail.add_column("error")
        for f in s.failures[:10]:
            fail.add_row(f.id, f.error[:160])
        tables.append(fail)
    return tables
