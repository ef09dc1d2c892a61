"""report.html: report.md's numbers, self-contained, escaped, well-formed, and usable at size."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html import escape
from html.parser import HTMLParser

import pytest

from judgecli.deciding.gate import GateSpec, evaluate_gate
from judgecli.inputs.labels import Label, LabelSpace
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.report.cells import fmt_ci, fmt_pct, heading
from judgecli.report.html import render_html
from judgecli.report.html_cases import MAX_ROWS, esc
from judgecli.report.markdown import gate_note, headline, sections
from judgecli.result import CaseResult, CaseStatus, Judgement, Order, Winner
from judgecli.rubric import RubricKind
from judgecli.summary.calibrate import summarize_calibration
from judgecli.summary.pairwise import summarize_pairwise
from judgecli.summary.score import summarize_score
from judgecli.verdict import Position, Verdict

XSS = "<script>alert(1)</script>"

POINTWISE = parse_rubric(
    "name: tiny\nkind: pointwise\nscale: {min: 1, max: 4}\npass_at: 3\n"
    "prompt:\n  user: '{input} {output}'\n",
    source="tiny.yaml",
)
CRITERIA = parse_rubric(
    "name: crit\nkind: pointwise\nscale: {min: 1, max: 5}\npass_at: 3\ncriteria:\n"
    "  - {name: accuracy, weight: 3}\n  - {name: clarity, weight: 1}\n"
    "prompt:\n  user: '{input} {output}'\n",
    source="crit.yaml",
)
PAIRWISE = parse_rubric(
    "name: pw\nkind: pairwise\nprompt:\n  user: '{input} {output_a} {output_b}'\n", source="pw"
)


def judgement(verdict=None, *, raw=None, order=None, model="m", error=None):
    reply = raw if raw is not None else json.dumps(verdict.model_dump(exclude_none=True))
    return Judgement(
        model=model,
        order=order,
        raw=reply,
        verdict=verdict,
        error=error,
        prompt_tokens=100,
        completion_tokens=20,
        cost_usd=0.0015,
        latency_s=0.4,
        attempts=1,
    )


def scored(i, score, category, *, raw=None, criteria=None, case=None):
    verdict = Verdict(
        reasoning=f"reasoning of q-{i}",
        score=score,
        criteria=criteria or {},
        feedback=f"feedback of q-{i}",
    )
    text = (
        case if case is not None else {"input": f"question of q-{i}", "output": f"answer of q-{i}"}
    )
    return CaseResult(
        id=f"q-{i}",
        status=CaseStatus.OK,
        category=category,
        score=score,
        criteria=criteria or {},
        passed=score >= 3,
        case=text,
        judgements=[judgement(verdict, raw=raw)],
        rubric_hash="h",
    )


FAILED = CaseResult(
    id="q-bad",
    status=CaseStatus.FAILED,
    error="reply is not JSON",
    judgements=[judgement(raw=XSS, error="reply is not JSON")],
    rubric_hash="h",
)
SCORES = [4, 1, 3, 2, 4, 3, 1, 4]
SCORE_RESULTS = [
    scored(i, float(s), "math" if i % 2 else "<b>prose</b>", raw=XSS if i == 1 else None)
    for i, s in enumerate(SCORES)
] + [FAILED]


def score_summary():
    return summarize_score(SCORE_RESULTS, rubric=POINTWISE, models=["m"])


def criteria_results():
    return [
        scored(i, 0.75 * a + 0.25 * c, "x", criteria={"accuracy": a, "clarity": c})
        for i, (a, c) in enumerate([(5.0, 3.0), (2.0, 4.0), (4.0, 4.0)])
    ]


def pair(i, winner, slots, *, category, models=("m",), lengths=(100, 300)):
    judgements = [
        judgement(
            Verdict(reasoning=f"why {i}", winner=Position(s), confidence=0.7),
            order=o,
            model=m,
            raw=XSS if i == 0 else None,
        )
        for m in models
        for o, s in zip((Order.OLD_NEW, Order.NEW_OLD), slots, strict=True)
    ]
    consistent = winner is not Winner.TIE or slots == ("tie", "tie")
    return CaseResult(
        id=f"p-{i}",
        status=CaseStatus.OK,
        category=category,
        winner=winner,
        consistent=consistent,
        judge_winners=dict.fromkeys(models, winner),
        lengths={"old": lengths[0], "new": lengths[1]},
        judgements=judgements,
        rubric_hash="h",
    )


def pairwise_results(models=("m",)):
    wins = [
        pair(i, Winner.NEW, ("B", "A"), category="a" if i % 2 else "b", models=models)
        for i in range(6)
    ]
    losses = [pair(6, Winner.OLD, ("A", "B"), category="a", models=models, lengths=(300, 90))]
    ties = [pair(7, Winner.TIE, ("A", "A"), category="b", models=models)]
    return wins + losses + ties


def pairwise_summary(models=("m",), min_win_rate=0.6):
    s = summarize_pairwise(
        pairwise_results(models), rubric=PAIRWISE, models=list(models), flip=True, flip_policy="tie"
    )
    s.gate = evaluate_gate(s, GateSpec(min_win_rate=min_win_rate))
    assert s.gate is not None
    return s


def calibrate_results():
    scores = [(1, 0.9), (2, 0.6), (3, 0.8), (4, 0.95), (4, 0.7), (2, 0.55)]
    return [
        CaseResult(
            id=f"c-{i}",
            status=CaseStatus.OK,
            score=float(s),
            rubric_hash="h",
            judgements=[
                judgement(
                    Verdict(reasoning="r", score=float(s), confidence=c),
                    raw=XSS if i == 0 else None,
                )
            ],
        )
        for i, (s, c) in enumerate(scores)
    ]


def calibrate_summary():
    results = calibrate_results()
    labels = [
        Label(id=f"c-{i}", value=float(v), annotator="r1", line=i)
        for i, v in enumerate([1, 2, 3, 3, 4, 1])
    ]
    labels += [
        Label(id=f"c-{i}", value=float(v), annotator="r2", line=10 + i)
        for i, v in enumerate([1, 3, 3, 4])
    ]
    space = LabelSpace(kind=RubricKind.POINTWISE, scale=(1, 4))
    return summarize_calibration(results, labels, space), results


def pages():
    """(summary, results) of each kind of run."""
    calibrate, calibrate_rows = calibrate_summary()
    crit = criteria_results()
    return {
        "score": (score_summary(), SCORE_RESULTS),
        "criteria": (summarize_score(crit, rubric=CRITERIA, models=["m"]), crit),
        "pairwise": (pairwise_summary(), pairwise_results()),
        "panel": (pairwise_summary(("m", "n")), pairwise_results(("m", "n"))),
        "calibrate": (calibrate, calibrate_rows),
    }


KINDS = ["score", "criteria", "pairwise", "panel", "calibrate"]


@pytest.fixture(scope="module")
def rendered():
    return {kind: (s, render_html(s, rows)) for kind, (s, rows) in pages().items()}


class TagChecker(HTMLParser):
    """Every opened element is closed in order; counts the <script> elements."""

    VOID = frozenset({"meta", "input", "br", "hr", "img", "link", "wbr", "col", "source"})

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.scripts = [], [], 0

    def handle_starttag(self, tag, attrs):
        self.scripts += tag == "script"
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
        else:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")


@pytest.mark.parametrize("kind", KINDS)
def test_page_shows_the_headline_and_every_number_of_report_md(rendered, kind):
    summary, page = rendered[kind]
    assert escape(headline(summary)) in page
    if note := gate_note(summary):
        assert escape(note) in page
    for section in sections(summary):
        assert escape(heading(section.title)) in page
        for row in section.rows:
            for cell in row:
                assert escape(cell) in page, (section.title, cell)


@pytest.mark.parametrize("kind", KINDS)
def test_page_is_self_contained(rendered, kind):
    _, page = rendered[kind]
    assert "http://" not in page
    assert "https://" not in page
    assert not re.search(r"\b(src|href|xlink:href)\s*=", page)
    assert "url(" not in page
    assert "@import" not in page


@pytest.mark.parametrize("kind", KINDS)
def test_page_parses_as_balanced_html_with_only_its_own_script(rendered, kind):
    _, page = rendered[kind]
    checker = TagChecker()
    checker.feed(page)
    checker.close()
    assert checker.errors == []
    assert checker.stack == []
    assert checker.scripts == 1
    assert page.startswith("<!doctype html>")


@pytest.mark.parametrize("kind", ["score", "pairwise", "calibrate"])
def test_a_raw_reply_with_markup_is_shown_escaped(rendered, kind):
    _, page = rendered[kind]
    assert XSS not in page
    assert escape(XSS) in page


def test_user_text_in_categories_is_escaped(rendered):
    _, page = rendered["score"]
    assert "<b>prose</b>" not in page
    assert "&lt;b&gt;prose&lt;/b&gt;" in page


def test_score_page_draws_distribution_pass_rate_and_category_means(rendered):
    summary, page = rendered["score"]
    assert 'class="chart histogram"' in page
    overall = f"{fmt_pct(summary.pass_rate)} {fmt_ci(summary.pass_rate_ci, pct=True)}"
    assert f'class="value">{overall}</text>' in page
    assert 'class="chart forest"' in page  # mean by category against the overall mean
    assert f"mean {summary.mean:.2f}" in page


def test_score_page_lists_the_worst_cases_lowest_score_first(rendered):
    _, page = rendered["score"]
    worst = page[page.index("Lowest-scored cases") : page.index("Cases (")]
    assert worst.index("q-1 · 1") < worst.index("q-6 · 1") < worst.index("q-3 · 2")
    assert "reasoning of q-1" in worst
    assert "feedback of q-1" in worst


def test_criteria_get_a_histogram_each(rendered):
    _, page = rendered["criteria"]
    assert "accuracy: score distribution" in page
    assert "clarity: score distribution" in page


def test_pairwise_page_draws_the_gate_line_and_offers_winner_and_consistency_filters(rendered):
    summary, page = rendered["pairwise"]
    assert page.count('class="ref-label">gate 60%</text>') == 1
    assert 'class="chart stacked"' in page
    assert 'class="chart scatter"' in page
    assert 'data-key="winner"' in page
    assert 'data-key="consistent"' in page
    assert page.count('data-winner="new"') == summary.wins
    assert page.count('data-consistent="no"') == 1
    assert headline(summary).startswith("PASS")  # 6.5 of 8 = 81.2% against 60%
    assert 'class="headline pass"' in page


def test_pairwise_without_a_gate_draws_the_no_preference_line():
    summary = pairwise_summary()
    summary.gate = None
    page = render_html(summary, pairwise_results())
    assert 'class="ref-label">50%</text>' in page
    assert "gate " not in page


def test_panel_page_shows_each_judge_and_their_agreement(rendered):
    _, page = rendered["panel"]
    assert "win rate by judge" in page
    assert "Inter-judge agreement" in page
    assert "Fleiss" in page


def test_calibrate_page_draws_confusion_and_reliability_beside_human_agreement(rendered):
    summary, page = rendered["calibrate"]
    assert 'class="chart heatmap"' in page
    assert 'class="chart reliability"' in page
    assert summary.reliability
    for b in summary.reliability:
        assert f">{b.count}</text>" in page
    assert "human–human" in page
    assert "judge–human" in page


def test_a_failed_case_shows_its_error_and_is_filterable(rendered):
    _, page = rendered["score"]
    assert 'data-status="failed"' in page
    assert "reply is not JSON" in page
    assert '<option value="failed">' in page


def test_a_big_run_lists_the_first_rows_and_says_so():
    rows = [scored(i, 3.0, "x") for i in range(MAX_ROWS + 7)]
    page = render_html(score_summary(), rows)
    assert page.count("<tbody data-status") == MAX_ROWS
    assert f"Showing the first {MAX_ROWS:,} of {MAX_ROWS + 7:,} cases" in page
    assert f"q-{MAX_ROWS - 1}<" in page
    assert f"q-{MAX_ROWS}<" not in page


def test_a_long_raw_reply_is_cut_with_a_note():
    long = scored(0, 3.0, "x", raw="y" * 5000)
    page = render_html(score_summary(), [long])
    assert "y" * 2000 in page
    assert "y" * 2001 not in page
    assert "3,000 more characters in results.jsonl" in page


def test_rendering_is_deterministic():
    summary = score_summary()
    assert render_html(summary, SCORE_RESULTS) == render_html(summary, SCORE_RESULTS)


def test_a_pairwise_judgement_names_the_answer_in_the_slot_it_picked(rendered):
    _, page = rendered["pairwise"]
    assert "winner B (new), confidence 0.7" in page  # old-new order: B is NEW
    assert "winner A (new), confidence 0.7" in page  # new-old order: A is NEW


# Regression (review 2026-11-23, finding 7): the report never showed the question or the
# answers, so no verdict could be checked from it.
def test_a_case_row_shows_what_the_judge_was_shown_escaped_behind_details():
    answer = f"Boil it.{XSS}"
    row = scored(
        0,
        1.0,
        "x",
        case={
            "input": "How do I cook an egg?",
            "output": answer,
            "reference": "Boil 7 minutes.",
            "context": "Eggs & pans",
        },
    )
    page = render_html(score_summary(), [row])
    cases = page[page.index("<h2>Cases (") :]
    assert "<summary>the case and 1 judgement</summary>" in cases
    for label, text in [
        ("input", "How do I cook an egg?"),
        ("output", answer),
        ("reference", "Boil 7 minutes."),
        ("context", "Eggs & pans"),
    ]:
        assert f"<h5>{label}</h5><pre>{escape(text)}</pre>" in cases
    assert (
        cases.index("<h5>input</h5>")
        < cases.index("<h5>output</h5>")
        < cases.index("<h5>reference</h5>")
        < cases.index("<h5>context</h5>")
    )
    assert XSS not in page
    checker = TagChecker()
    checker.feed(page)
    assert checker.scripts == 1  # the page's own: the answer's <script> is text


def test_the_lowest_scored_cards_carry_the_case_text_collapsed(rendered):
    _, page = rendered["score"]
    worst = page[page.index("Lowest-scored cases") : page.index("<h2>Cases (")]
    assert "<details><summary>the case</summary>" in worst
    assert "<pre>question of q-1</pre>" in worst
    assert "<pre>answer of q-1</pre>" in worst


def test_a_long_answer_is_capped_saying_how_much_is_left_out():
    page = render_html(score_summary(), [scored(0, 3.0, "x", case={"output": "z" * 2600})])
    assert "z" * 2000 + "… (600 more characters in results.jsonl)" in page
    assert "z" * 2001 not in page


def test_a_pairwise_case_shows_the_old_and_the_new_answer():
    row = pair(0, Winner.NEW, ("B", "A"), category="a").model_copy(
        update={
            "case": {"input": "q?", "output_old": "the old answer", "output_new": "the new answer"}
        }
    )
    page = render_html(pairwise_summary(), [row])
    assert "<h5>OLD output</h5><pre>the old answer</pre>" in page
    assert "<h5>NEW output</h5><pre>the new answer</pre>" in page


def test_a_result_without_case_text_shows_no_case_section():
    # Runs made before results.jsonl held the case's text.
    row = scored(0, 3.0, "x", case={})
    page = render_html(score_summary(), [row])
    assert "<summary>1 judgement</summary>" in page
    assert 'class="case-field"' not in page
    assert "<summary>the case</summary>" not in page


def labelled(i, score, human, agrees):
    return scored(i, score, "x").model_copy(update={"human_labels": human, "agrees": agrees})


# Regression (review 2026-11-23, finding 8): the calibrate cases table had no human label
# and no way to list the disagreements.
def test_calibrate_cases_show_the_human_labels_and_filter_on_disagreement():
    summary, _ = calibrate_summary()
    rows = [
        labelled(0, 3.0, [3.0], True),
        labelled(1, 1.0, [4.0, 3.0], False),
        labelled(2, 2.0, ["pass"], None),
    ]
    page = render_html(summary, rows)
    head = page[page.index('<table id="cases">') :]
    assert "<th>verdict</th><th>human</th>" in head
    assert '<td>1</td><td><span class="disagrees">4, 3</span></td>' in page
    assert "<td>3</td><td>3</td>" in page
    assert "<td>2</td><td>pass</td>" in page
    assert [page.count(f'data-agrees="{v}"') for v in ("yes", "no", "")] == [1, 1, 1]
    assert 'data-key="agrees"' in page
    assert '<option value="no">disagrees with the humans</option>' in page


def test_runs_without_labels_have_no_human_column_or_agreement_filter(rendered):
    _, page = rendered["score"]
    assert "<th>human</th>" not in page
    assert 'data-key="agrees"' not in page


def test_an_incomplete_run_says_so_at_the_top_instead_of_pass_or_fail():
    summary = pairwise_summary()
    summary.gate = None
    summary.incomplete = "the judge could not grade 24 of 30 cases"
    page = render_html(summary, pairwise_results())
    top = page[: page.index("</header>")]
    assert '<p class="headline incomplete">INCOMPLETE — the judge could not grade 24 of 30 ' in top
    assert "PASS" not in top
    assert "FAIL" not in top


def test_small_categories_are_too_few_to_tell_in_tables_and_grey_in_charts(rendered):
    summary, page = rendered["pairwise"]  # categories of 4 cases each
    assert page.count("<td>too few to tell</td>") == len(summary.by_category)
    forest = page[page.index('aria-label="win rate of NEW"') :]
    forest = forest[: forest.index("</svg>")]
    classes = re.findall(r'<circle class="(point[^"]*)"', forest)
    # "all cases" (8 decided) and both categories: none is coloured above or below.
    assert classes == ["point few"] * 3
    assert "too few cases to tell" in forest


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("""<a href="x" title='y'>&amp;</a>""", id="markup-quotes-entities"),
        pytest.param("🎉 \x00\x1b[0m\ttab", id="non-bmp-and-control"),
        pytest.param("", id="empty"),
        pytest.param(3.5, id="number"),
        pytest.param(Winner.NEW, id="str-enum"),
    ],
)
def test_esc_escapes_as_html_escape_does(value):
    assert esc(value) == escape(str(value), quote=True)


def test_the_reports_load_no_xml_or_html_library_and_no_chart_a_score_run_lacks():
    # saxutils imports urllib.request and http.client (~6 ms), ElementTree and html.entities
    # ~2 ms each: the reports write their markup themselves. The pairwise and calibrate
    # charts are imported when drawn.
    code = (
        "import sys, judgecli.report.html, judgecli.report.junit\n"
        "print(' '.join(m for m in ('xml.sax.saxutils', 'xml.etree.ElementTree', "
        "'html.entities', 'judgecli.report.charts') if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.split() == []
