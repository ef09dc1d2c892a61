"""Reports of a run judged with --repeats K (issue 17 part 3): the "judge stability" section
of report.md and report.html, the stability of each case in the case table, the chart of
stability by category, and the JUnit note on a case whose K verdicts disagreed. A run
without repeats renders as before.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from html import escape
from typing import Any

import pytest
from rich.console import Console

from judgecli.report.cells import Section
from judgecli.report.html import render_html
from judgecli.report.junit import render_junit
from judgecli.report.markdown import headline, render_markdown, sections, terminal_tables
from judgecli.result import CaseResult, CaseStatus, Judgement, Order, RepeatVerdict, Winner
from judgecli.summary.facts import Usage
from judgecli.summary.gate_records import GateCheck, GateMetric, GateOn, GateResult
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.score import ScoreSummary
from judgecli.summary.stability import CategoryStability, SelfConsistency
from judgecli.verdict import Position, Verdict
from tests.unit.report.test_html import TagChecker

K = 3
XSS = "<script>alert(1)</script>"


def head(n_cases: int) -> dict[str, Any]:
    return {
        "rubric": "helpfulness",
        "rubric_version": 1,
        "rubric_hash": "h",
        "models": ["m"],
        "n_cases": n_cases,
        "n_ok": n_cases,
        "n_failed": 0,
        "usage": Usage(),
    }


CONSISTENCY = SelfConsistency(
    repeats=K,
    compared="score",
    stable=41,
    cases=50,
    fleiss_kappa=0.613,
    within_case_sd=0.4217,
    pass_k=0.7,
    pass_k_ci=(0.562, 0.809),
    pass_at_k=0.86,
    pass_at_k_ci=(0.738, 0.93),
    by_category={
        "math": CategoryStability(stable=27, cases=30, stability=0.9, stability_ci=(0.744, 0.965)),
        "prose": CategoryStability(stable=14, cases=20, stability=0.7, stability_ci=(0.481, 0.855)),
    },
    unstable=["q-2", "q-5", "q-7", "q-11", "q-13", "q-17", "q-19", "q-23", "q-29", "q-31", "q-37"],
)


def score_summary(**extra: Any) -> ScoreSummary:
    """A score run of 50 cases asked K = 3 times; `extra` overrides its fields."""
    fields = {
        "mean": 3.1,
        "mean_ci": (2.9, 3.3),
        "pass_rate": 0.78,
        "pass_rate_ci": (0.65, 0.87),
        "repeats": K,
        "stability": 0.82,
        "stability_ci": (0.692, 0.902),
        "self_consistency": CONSISTENCY,
    }
    return ScoreSummary(**head(50), **(fields | extra))


def judgement(score: float, repeat: int | None, *, raw: str | None = None) -> Judgement:
    verdict = Verdict(reasoning=f"reasoning of ask {repeat}", score=score)
    return Judgement(
        model="m",
        raw=raw if raw is not None else f'{{"score": {score:g}}}',
        verdict=verdict,
        repeat=repeat,
        attempts=1,
        latency_s=0.5,
    )


def repeated(
    case_id: str,
    scores: list[float],
    *,
    category: str = "math",
    raws: Sequence[str | None] | None = None,
) -> CaseResult:
    """A pointwise case asked len(scores) times: one judgement and one verdict per repeat."""
    replies = raws or [None] * len(scores)
    mean = sum(scores) / len(scores)
    spread = (sum((s - mean) ** 2 for s in scores) / (len(scores) - 1)) ** 0.5
    return CaseResult(
        id=case_id,
        status=CaseStatus.OK,
        category=category,
        score=mean,
        passed=mean >= 3,
        judgements=[
            judgement(s, k, raw=raw) for k, (s, raw) in enumerate(zip(scores, replies, strict=True))
        ],
        repeats=[RepeatVerdict(repeat=k, score=s, passed=s >= 3) for k, s in enumerate(scores)],
        stable=len(set(scores)) == 1,
        spread=spread,
        rubric_hash="h",
    )


REPLIES = [f"ask zero said 2 {XSS}", "ask one said <b>4</b>", "ask two said 3 & more"]
UNSTABLE = repeated("q-2", [2.0, 4.0, 3.0], raws=REPLIES)
STABLE = repeated("q-1", [4.0, 4.0, 4.0], category="prose")
RESULTS = [STABLE, UNSTABLE]


@pytest.fixture(scope="module")
def page() -> str:
    return render_html(score_summary(), RESULTS)


@pytest.fixture(scope="module")
def markdown() -> str:
    return render_markdown(score_summary())


# --- the "judge stability" section ----------------------------------------------------------

SECTION_ROWS = [
    ("repeats per case (K)", "3", ""),
    ("verdict compared", "score (integer scale)", ""),
    ("stable cases", "41 of 50 (82.0%)", "[69.2%, 90.2%]"),
    ("Fleiss' κ across repeats", "0.61", ""),
    ("mean within-case SD", "0.42", ""),
    ("pass^3 (passed all 3)", "70.0%", "[56.2%, 80.9%]"),
    ("pass@3 (passed at least once)", "86.0%", "[73.8%, 93.0%]"),
    (
        "unstable cases",
        "q-2, q-5, q-7, q-11, q-13, q-17, q-19, q-23, q-29, q-31 … (11 in all)",
        "",
    ),
]
SENTENCE = (
    "Asked each case 3 times, the judge gave the same score all 3 times on 41 of 50 cases; "
    "on the other 9 its verdict changed from one ask to the next, so a single run could have "
    "graded them differently. 70.0% of the cases passed in all 3 asks, 86.0% in at least one."
)
CATEGORY_ROWS = [
    ("math", "27 of 30", "90.0%", "[74.4%, 96.5%]"),
    ("prose", "14 of 20", "70.0%", "[48.1%, 85.5%]"),
]


def section(title: str) -> Section:
    return next(sec for sec in sections(score_summary()) if sec.title == title)


def test_the_stability_section_has_k_stable_cases_kappa_sd_pass_k_and_the_unstable_ids():
    sec = section("judge stability")
    assert list(sec.rows) == SECTION_ROWS
    assert sec.note == SENTENCE


def test_the_stability_section_comes_after_the_commands_own_tables():
    titles = [sec.title for sec in sections(score_summary())]
    assert titles.index("result") < titles.index("judge stability") < titles.index("usage")


def test_report_md_shows_the_stability_numbers_and_says_what_they_mean(markdown):
    assert "## Judge stability\n\n| measure | value | 95% CI |" in markdown
    for row in SECTION_ROWS:
        assert "| " + " | ".join(row) + " |" in markdown
    assert "| 95% CI |\n|---|---|---|\n| repeats per case (K) | 3 |  |" in markdown
    assert f"|  |\n\n{SENTENCE}\n\n## " in markdown  # under its table


def test_report_md_breaks_stability_down_by_category(markdown):
    assert (
        "## Judge stability by category\n\n| category | stable | stability | 95% CI |" in markdown
    )
    for row in CATEGORY_ROWS:
        assert "| " + " | ".join(row) + " |" in markdown


def test_report_html_shows_the_same_numbers_and_sentence(page):
    for row in [*SECTION_ROWS, *CATEGORY_ROWS]:
        for cell in row:
            assert escape(cell) in page, cell
    assert f'<p class="muted">{escape(SENTENCE)}</p>' in page
    assert "<h3>Judge stability</h3>" in page
    assert "<h3>Judge stability by category</h3>" in page


def test_the_terminal_prints_the_section_with_its_sentence():
    console = Console(width=80, record=True, file=io.StringIO())
    for table in terminal_tables(score_summary()):
        console.print(table)
    text = console.export_text()
    assert "judge stability" in text
    assert "41 of 50 (82.0%)" in text
    assert "[69.2%, 90.2%]" in text
    assert " ".join(text.split()).count("on 41 of 50 cases;") == 1  # the caption, wrapped


@pytest.mark.parametrize(
    ("change", "shown", "left_out"),
    [
        pytest.param(
            {"stable": 50, "unstable": [], "pass_k": None, "pass_at_k": None},
            ["all 3 times on 50 of 50 cases."],
            ["unstable cases", "pass^3", "pass@3", "on the other"],
            id="every-case-stable-no-pass-bar",
        ),
        pytest.param(
            {"compared": "choice", "within_case_sd": None, "by_category": {}},
            ["the same choice all 3 times", "| verdict compared | choice |"],
            ["within-case SD", "Judge stability by category"],
            id="binary-without-categories",
        ),
        pytest.param(
            {"compared": "winner", "fleiss_kappa": None},
            ["the same winner all 3 times", "| Fleiss' κ across repeats | n/a |"],
            [],
            id="pairwise-kappa-undefined",
        ),
    ],
)
def test_the_section_shows_only_what_the_run_measured(change, shown, left_out):
    consistency = CONSISTENCY.model_copy(update=change)
    text = render_markdown(score_summary(self_consistency=consistency))
    for words in shown:
        assert words in text
    for words in left_out:
        assert words not in text


def test_few_unstable_ids_are_listed_without_a_total():
    consistency = CONSISTENCY.model_copy(update={"stable": 48, "unstable": ["q-2", "q-9"]})
    text = render_markdown(score_summary(self_consistency=consistency))
    assert "| unstable cases | q-2, q-9 |  |" in text


def test_small_categories_are_too_few_to_tell():
    small = {"a": CategoryStability(stable=3, cases=4, stability=0.75, stability_ci=(0.3, 0.95))}
    consistency = CONSISTENCY.model_copy(update={"by_category": small})
    text = render_markdown(score_summary(self_consistency=consistency))
    assert "| a | 3 of 4 | 75.0% | too few to tell |" in text


# --- the case table -------------------------------------------------------------------------


def cases_of(page: str) -> str:
    return page[page.index("<h2>Cases (") :]


def tbody(page: str, case_id: str) -> str:
    bodies = re.findall(r"<tbody.*?</tbody>", cases_of(page), flags=re.S)
    return str(next(b for b in bodies if f"<code>{case_id}</code>" in b))


def test_each_case_row_shows_its_stability_and_spread(page):
    assert "<th>passed</th><th>stability</th><th>spread</th><th>category</th>" in page
    assert '<td><span class="disagrees">unstable</span></td><td>SD 1.00</td>' in tbody(page, "q-2")
    assert "<td>stable</td><td>SD 0.00</td>" in tbody(page, "q-1")


def test_the_cases_filter_on_stability(page):
    assert '<select data-key="stable" aria-label="stability across repeats">' in page
    assert '<option value="no">unstable: the repeats disagree</option>' in page
    assert 'data-stable="no"' in tbody(page, "q-2")
    assert 'data-stable="yes"' in tbody(page, "q-1")


def test_an_unstable_case_shows_its_k_verdicts_and_each_repeats_replies_escaped(page):
    row = tbody(page, "q-2")
    assert "<summary>3 judgements in 3 repeats</summary>" in row
    assert (
        "<p><strong>3 repeats: 2, not passed · 4, passed · 3, passed</strong> — "
        '<span class="disagrees">they disagree</span> (SD 1.00)</p>'
    ) in row
    headings = [row.index(f"<h5>repeat {k}: ") for k in range(K)]
    replies = [row.index(f"<pre>{escape(raw)}</pre>") for raw in REPLIES]
    assert headings[0] < replies[0] < headings[1] < replies[1] < headings[2] < replies[2]
    assert "<h5>repeat 0: 2, not passed</h5>" in row
    assert "reasoning of ask 1" in row
    assert XSS not in page
    checker = TagChecker()  # type: ignore[no-untyped-call]  # test_report_html's, untyped
    checker.feed(page)
    checker.close()
    assert (checker.errors, checker.stack, checker.scripts) == ([], [], 1)


def test_a_pairwise_case_shows_each_repeats_winner_and_the_share_that_differs():
    judgements = [
        Judgement(
            model="m",
            order=order,
            raw=f"reply {k} {order.value}",
            verdict=Verdict(reasoning="r", winner=Position.B),
            repeat=k,
        )
        for k in range(K)
        for order in (Order.OLD_NEW, Order.NEW_OLD)
    ]
    row = CaseResult(
        id="p-1",
        status=CaseStatus.OK,
        winner=Winner.NEW,
        consistent=False,
        judgements=judgements,
        repeats=[
            RepeatVerdict(repeat=0, winner=Winner.NEW),
            RepeatVerdict(repeat=1, winner=None),
            RepeatVerdict(repeat=2, winner=Winner.NEW),
        ],
        stable=False,
        spread=1 / 3,
        rubric_hash="h",
    )
    summary = PairwiseSummary(
        **head(1), wins=1, losses=0, ties=0, dropped=0, flip=True, flip_policy="tie"
    )
    page = render_html(summary, [row])
    body = tbody(page, "p-1")
    assert "<td>33.3% differ</td>" in body
    assert "3 repeats: new · no verdict · new" in body
    assert "<h5>repeat 1: no verdict</h5>" in body
    # Within a repeat, both orders as before: old-new, then new-old.
    assert body.index("reply 1 old-new") < body.index("reply 1 new-old") < body.index("repeat 2:")


# --- the chart of stability by category ----------------------------------------------------


def at(element: ET.Element, name: str) -> float:
    return float(element.get(name) or "nan")


def chart_of(page: str) -> ET.Element:
    start = page.rindex("<svg", 0, page.index('aria-label="judge stability by category"'))
    return ET.fromstring(page[start : page.index("</svg>", start) + len("</svg>")])


def test_the_chart_draws_one_bar_per_category_with_its_value_and_interval(page):
    root = chart_of(page)
    bars = [e for e in root.iter("rect") if e.get("class") == "bar"]
    assert [b.findtext("title") for b in bars] == [
        "math (n=30): 90.0% [74.4%, 96.5%]",
        "prose (n=20): 70.0% [48.1%, 85.5%]",
    ]
    # Bars start at 0%: their widths are in proportion to the values.
    assert len({b.get("x") for b in bars}) == 1
    assert at(bars[1], "width") / at(bars[0], "width") == pytest.approx(0.7 / 0.9, abs=1e-3)
    x0, unit = at(bars[0], "x"), at(bars[0], "width") / 0.9
    # Each whisker is three lines (the interval, then its two caps).
    whiskers = [e for e in root.iter("line") if e.get("class") == "ci"][::3]
    ends = [at(w, end) for w in whiskers for end in ("x1", "x2")]
    bounds = [0.744, 0.965, 0.481, 0.855]
    assert ends == pytest.approx([x0 + b * unit for b in bounds], abs=0.02)
    labels = [e.text for e in root.iter("text") if e.get("class") == "ref-label"]
    assert labels == ["all 82.0%"]
    assert "with its 95% interval; dashed: the share over all cases." in page


def test_the_chart_draws_the_stability_gate_when_there_is_one():
    check = GateCheck(
        metric=GateMetric.STABILITY,
        threshold=0.85,
        value=0.82,
        point=0.82,
        interval=(0.692, 0.902),
        on=GateOn.POINT,
        passed=False,
        minimum=True,
    )
    gate = GateResult(
        passed=False,
        metric=GateMetric.STABILITY,
        threshold=0.85,
        value=0.82,
        on=GateOn.POINT,
        checks=[check],
    )
    page = render_html(score_summary(gate=gate), RESULTS)
    labels = [e.text for e in chart_of(page).iter("text") if e.get("class") == "ref-label"]
    assert labels == ["gate 85%"]


def test_one_category_gets_no_chart():
    one = {"math": CONSISTENCY.by_category["math"]}
    summary = score_summary(self_consistency=CONSISTENCY.model_copy(update={"by_category": one}))
    assert "judge stability by category" not in render_html(summary, RESULTS)


# --- the gate and JUnit ----------------------------------------------------------------------


def gate_of(*checks: tuple[GateMetric, float, float, bool]) -> GateResult:
    made = [
        GateCheck(
            metric=metric,
            threshold=threshold,
            value=value,
            point=value,
            interval=None,
            on=GateOn.POINT,
            passed=passed,
            minimum=True,
        )
        for metric, threshold, value, passed in checks
    ]
    first = made[0]
    return GateResult(
        passed=all(c.passed for c in made),
        metric=first.metric,
        threshold=first.threshold,
        value=first.value,
        on=first.on,
        checks=made,
    )


def test_the_gate_names_stability_and_pass_k():
    gate = gate_of((GateMetric.STABILITY, 0.8, 0.82, True), (GateMetric.PASS_K, 0.75, 0.7, False))
    summary = score_summary(gate=gate)
    assert headline(summary).endswith(
        "Gate: stability ≥ 0.8 (point: 0.820 ok); pass^K ≥ 0.75 (point: 0.700 not met)."
    )
    root = ET.fromstring(render_junit(summary, RESULTS))
    failure = root.find(".//testcase[@name='gate']/failure")
    assert failure is not None
    assert failure.get("message") == "gate failed: pass^K 0.7 < 0.75 (point estimate)"
    assert "PASS stability 0.82 >= 0.8 (point estimate)" in (failure.text or "")


def junit_cases(results: list[CaseResult]) -> dict[str, ET.Element]:
    root = ET.fromstring(render_junit(score_summary(), results))
    return {c.get("name", ""): c for c in root.iter("testcase")}


def test_junit_notes_that_an_unstable_cases_verdicts_disagreed_without_changing_its_outcome():
    failing = repeated("q-3", [2.0, 2.0, 4.0])  # mean 2.67: not passed
    cases = junit_cases([STABLE, UNSTABLE, failing])
    passed = cases["q-2"]
    assert [c.tag for c in passed] == ["system-out"]
    out = passed.findtext("system-out") or ""
    assert out.startswith("score 3, passed\n\n")
    assert out.endswith(
        "unstable: the judge's 3 verdicts on this case disagreed (2, not passed · 4, passed "
        "· 3, passed; spread 1); the case's verdict is their aggregate"
    )
    failed = cases["q-3"]
    assert [c.tag for c in failed] == ["failure", "system-out"]
    assert "2, not passed · 2, not passed · 4, passed" in (failed.findtext("system-out") or "")
    assert "unstable" not in ET.tostring(cases["q-1"], "unicode")


# --- a run without repeats -------------------------------------------------------------------


def test_a_run_without_repeats_has_no_stability_anywhere():
    summary = score_summary(repeats=None, stability=None, stability_ci=None, self_consistency=None)
    plain = [
        r.model_copy(
            update={
                "repeats": None,
                "stable": None,
                "spread": None,
                "judgements": [j.model_copy(update={"repeat": None}) for j in r.judgements],
            }
        )
        for r in RESULTS
    ]
    page = render_html(summary, plain)
    # (The page's CSS has "repeat(" of its own: only what the page shows is checked.)
    for text in (
        render_markdown(summary),
        page[page.index("<main>") :],
        render_junit(summary, plain),
    ):
        assert "stabilit" not in text.lower()
        assert "repeats" not in text.lower()
        assert "repeat " not in text.lower()
    assert "data-stable" not in page
    assert "<th>spread</th>" not in page
    assert "<summary>3 judgements</summary>" in page
