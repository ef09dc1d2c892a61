"""`judge probe`'s reports: which bias and how large (each probe's flip rate with its
interval, read against its floor), examples of verdicts that moved, and the gate; as
report.md, report.html and results.junit.xml (one testcase per probe). Pure: text out.
"""

from __future__ import annotations

from judgecli.grading.perturb import Probe
from judgecli.report.escape import esc
from judgecli.report.html import page, warnings_section
from judgecli.report.junit_xml import Ending, JunitCase, Outcome, junit_document
from judgecli.summary.probe import ProbeResult, ProbeSummary

WHAT = {
    Probe.POSITION: "the two answers swapped",
    Probe.LENGTH: "the losing answer padded with filler that adds no content",
    Probe.VERBOSITY: "the losing answer restated at about twice its length",
    Probe.SELF: "the judge's own family wrote one answer (read against the other judges)",
}
"""What each probe changed, in the reports' words."""

TEMPLATES = (
    "The perturbations are deterministic templates (no model writes them): the same pairs "
    "get the same rewrites on every run. Length and verbosity compare verdicts judged in "
    "both orders, so position bias does not move them."
)


def percent(value: float | None) -> str:
    """0.125 → 12.5%; None → n/a."""
    return "n/a" if value is None else f"{value:.1%}"


def reading(p: ProbeResult) -> str:
    """What the interval says against the floor: biased, not biased, or too few pairs."""
    low, high = p.flip_rate_ci
    if low is None or high is None:
        return f"not probed: {p.note}" if p.note else "not measured (no pair probed)"
    if low > p.floor:
        return f"BIASED: the flip rate is above the {percent(p.floor)} floor"
    if high <= p.floor:
        return f"no bias above the {percent(p.floor)} floor"
    return f"cannot tell at n = {p.n}: the interval straddles the {percent(p.floor)} floor"


def headline(p: ProbeResult) -> str:
    """One line per probe: `position: 12 of 40 verdicts moved (30.0% [18.1%, 45.4%]) ...`."""
    low, high = p.flip_rate_ci
    interval = "" if low is None or high is None else f" [{percent(low)}, {percent(high)}]"
    return (
        f"{p.name.value}: {p.flips} of {p.n} verdicts moved ({percent(p.flip_rate)}{interval})"
        f" — {reading(p)}"
    )


def finding(s: ProbeSummary) -> str:
    """Which bias and how large, in one sentence."""
    biased = [p for p in s.probes if p.flip_rate_ci[0] is not None and p.flip_rate_ci[0] > p.floor]
    if biased:
        said = "; ".join(
            f"{p.name.value} ({percent(p.flip_rate)} of verdicts moved, at least "
            f"{percent(p.flip_rate_ci[0])})"
            for p in sorted(biased, key=lambda p: -(p.flip_rate or 0))
        )
        return f"Biased: {said}."
    open_ = [p.name.value for p in s.probes if "cannot tell" in reading(p)]
    unprobed = [p.name.value for p in s.probes if p.n == 0]
    tail = f" Not probed: {', '.join(unprobed)}." if unprobed else ""
    if open_:
        return (
            f"No bias shown above the floors; {', '.join(open_)} cannot be told apart from "
            f"the floor with these pairs (see the intervals).{tail}"
        )
    return f"No bias above the floors.{tail}"


def gate_line(s: ProbeSummary) -> str | None:
    """The gate's verdict in words, or None without one."""
    if s.gate is None:
        return None
    if not s.gate.decided:
        return f"Gate: UNDECIDED — {s.gate.undecided}"
    said = ", ".join(
        f"{c.probe.value} {percent(c.value)} {'≤' if c.passed else '>'} {percent(c.threshold)}"
        for c in s.gate.checks
    )
    return f"Gate: {'PASS' if s.gate.passed else 'FAIL'} ({said}, on {s.gate.checks[0].on.value})"


def render_probe_markdown(s: ProbeSummary) -> str:
    """report.md."""
    lines = [
        f"# judge probe: {s.rubric} judged by {', '.join(s.models)}",
        "",
        f"{s.n_cases} pairs judged as given; {s.n_failed} judgements failed.",
        "",
        f"**{finding(s)}**",
        "",
    ]
    if s.incomplete:
        lines += [f"**Incomplete:** {s.incomplete}", ""]
    if line := gate_line(s):
        lines += [f"**{line}**", ""]
    lines += ["| probe | what changed | flips | n | flip rate | 95% CI | floor | reading |"]
    lines += ["|---|---|---|---|---|---|---|---|"]
    for p in s.probes:
        low, high = p.flip_rate_ci
        lines.append(
            f"| {p.name.value} | {WHAT[p.name]} | {p.flips} | {p.n} | {percent(p.flip_rate)} "
            f"| [{percent(low)}, {percent(high)}] | {percent(p.floor)} | {reading(p)} |"
        )
    lines += ["", TEMPLATES, ""]
    if s.sizing is not None:
        z = s.sizing
        lines += [
            f"Sized for power {z.power} to detect a flip rate {z.effect} above each floor "
            f"(one-sided α = {z.alpha}): up to {z.n_pairs} pairs probed per probe "
            + "("
            + ", ".join(f"{p.name.value} {p.n_needed}" for p in s.probes)
            + ").",
            "",
        ]
    for p in s.probes:
        if not p.examples:
            continue
        lines += [f"## {p.name.value}: verdicts that moved", ""]
        lines += ["| id | before | after | changed |", "|---|---|---|---|"]
        lines += [
            f"| {e.id} | {e.before.value} | {e.after.value if e.after else 'dropped'} "
            f"| {e.changed} |"
            for e in p.examples
        ]
        lines.append("")
    if s.warnings:
        lines += ["## Warnings", "", *[f"- {w}" for w in s.warnings], ""]
    return "\n".join(lines)


def render_probe_html(s: ProbeSummary) -> str:
    """report.html: the same tables as report.md."""
    rows = "".join(
        f"<tr><td>{esc(p.name.value)}</td><td>{esc(WHAT[p.name])}</td><td>{p.flips}</td>"
        f"<td>{p.n}</td><td>{esc(percent(p.flip_rate))}</td>"
        f"<td>[{esc(percent(p.flip_rate_ci[0]))}, {esc(percent(p.flip_rate_ci[1]))}]</td>"
        f"<td>{esc(percent(p.floor))}</td><td>{esc(reading(p))}</td></tr>"
        for p in s.probes
    )
    body = [
        f"<h1>judge probe: {esc(s.rubric)} judged by {esc(', '.join(s.models))}</h1>",
        f"<p>{s.n_cases} pairs judged as given; {s.n_failed} judgements failed.</p>",
        f"<p><strong>{esc(finding(s))}</strong></p>",
    ]
    if s.incomplete:
        body.append(f"<p><strong>Incomplete:</strong> {esc(s.incomplete)}</p>")
    if line := gate_line(s):
        body.append(f"<p><strong>{esc(line)}</strong></p>")
    body.append(
        "<section><h2>Probes</h2><table><thead><tr><th>probe</th><th>what changed</th>"
        "<th>flips</th><th>n</th><th>flip rate</th><th>95% CI</th><th>floor</th>"
        f"<th>reading</th></tr></thead><tbody>{rows}</tbody></table>"
        f"<p>{esc(TEMPLATES)}</p></section>"
    )
    for p in s.probes:
        if p.examples:
            cells = "".join(
                f"<tr><td>{esc(e.id)}</td><td>{esc(e.before.value)}</td>"
                f"<td>{esc(e.after.value if e.after else 'dropped')}</td>"
                f"<td>{esc(e.changed)}</td></tr>"
                for e in p.examples
            )
            body.append(
                f"<section><h2>{esc(p.name.value)}: verdicts that moved</h2><table><thead>"
                "<tr><th>id</th><th>before</th><th>after</th><th>changed</th></tr></thead>"
                f"<tbody>{cells}</tbody></table></section>"
            )
    body.append(warnings_section(s.warnings))
    return page(f"judge probe: {s.rubric}", body)


def render_probe_junit(s: ProbeSummary) -> str:
    """results.junit.xml: one testcase per probe, failed when its ceiling failed."""
    checks = {c.probe: c for c in s.gate.checks} if s.gate is not None else {}
    cases = []
    for p in s.probes:
        check = checks.get(p.name)
        ending = Ending(out=headline(p))
        if check is not None and not check.passed:
            ending = Ending(
                Outcome.FAILURE,
                message=f"flip rate {percent(check.value)} above {percent(check.threshold)}",
                kind="bias",
                text=headline(p),
            )
        cases.append(JunitCase(f"judge.probe.{s.rubric}", p.name.value, 0.0, ending))
    return junit_document([(f"probe {s.rubric}", cases)])
