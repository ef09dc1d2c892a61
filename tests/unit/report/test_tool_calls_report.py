"""Issue 32: the tool-call check in the reports — report.md's table and headline, the HTML
case view (escaped), and JUnit: a case fails exactly when its verdict fails, with its
missed and extra calls in the text."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from judgecli.inputs.rubric_file import parse_rubric
from judgecli.report.html import render_html
from judgecli.report.junit import render_junit
from judgecli.report.markdown import render_markdown
from judgecli.result import CallCheck, CaseResult, CaseStatus, CheckedCall, Judgement
from judgecli.summary.score import summarize_score
from judgecli.verdict import Verdict

RUBRIC = parse_rubric(
    "name: tool-calls\nkind: binary\nchoices: [PASS, FAIL]\ntool_calls: {}\n", source="t"
)
SEARCH = CheckedCall(
    name="search", arguments={"q": "</code><script>x()</script>"}, call=0, message=1
)
BOOK = CheckedCall(name="book", arguments={"hotel": "H1"}, expected=1)


def decided(case_id: str, check: CallCheck) -> CaseResult:
    return CaseResult(
        id=case_id,
        status=CaseStatus.OK,
        choice="PASS" if check.passed else "FAIL",
        passed=check.passed,
        rubric_hash="h",
        tool_calls=check.model_copy(update={"decided": True}),
    )


PERFECT = decided("ok", CallCheck(matched=[SEARCH.model_copy(update={"expected": 0})]))
MISSED = decided("missed", CallCheck(missed=[BOOK], extra=[SEARCH]))
RESULTS = [PERFECT, MISSED]


def test_report_md_has_the_numbers_and_names_no_judge():
    text = render_markdown(summarize_score(RESULTS, rubric=RUBRIC, models=[]))
    assert "Judges: none (the rubric only checks tool calls)" in text
    assert "## Tool calls" in text
    # expected 2 (1 matched + 1 missed), made 2 (1 matched + 1 extra): all three are 50%.
    assert "| F1 | 50.0% |" in text
    assert "| matched / missed / extra | 1 / 1 / 1 |" in text
    assert "tool-call F1 50.0%" in text.splitlines()[2]


def test_the_html_case_view_lists_the_calls_escaped():
    page = render_html(summarize_score(RESULTS, rubric=RUBRIC, models=[]), RESULTS)
    assert "<script>x()" not in page
    assert "tool calls: 1 missed, 1 extra (decided by the check)" in page
    assert "book({&quot;hotel&quot;:&quot;H1&quot;})" in page
    # Indexes as the case's file and results.jsonl write them; the call counted from 1.
    assert "(call 1 in messages[1])" in page
    assert "(expected_tool_calls[1])" in page
    assert "(call 1 in messages[1], expected_tool_calls[0])" in page


def test_junit_fails_a_case_the_check_failed_and_passes_the_one_it_passed():
    xml = render_junit(summarize_score(RESULTS, rubric=RUBRIC, models=[]), RESULTS)
    cases = {c.get("name"): c for c in ET.fromstring(xml).iter("testcase")}
    failure = cases["missed"].find("failure")
    assert failure is not None
    assert failure.get("message") == "tool calls: 1 missed, 1 extra"
    assert failure.text.splitlines() == [
        "tool calls: 0 matched, 1 missed, 1 extra (the check decided this case)",
        'missed: book({"hotel":"H1"})',
        'extra: search({"q":"</code><script>x()</script>"})',
    ]
    assert cases["ok"].find("failure") is None
    assert "every expected call made, no other" in cases["ok"].find("system-out").text


def test_junit_follows_the_judges_verdict_when_the_judge_decided():
    # judge: all — the judge passed a case the check found an extra call in: it passes,
    # with the check's findings beside the verdict; the judge failing a perfect case fails it.
    said = Judgement(model="m", verdict=Verdict(reasoning="fine", choice="PASS"))
    judged = CaseResult(
        id="judged",
        status=CaseStatus.OK,
        choice="PASS",
        passed=True,
        rubric_hash="h",
        judgements=[said],
        tool_calls=CallCheck(extra=[SEARCH]),
    )
    refused = judged.model_copy(
        update={"id": "refused", "choice": "FAIL", "passed": False, "tool_calls": CallCheck()}
    )
    xml = render_junit(
        summarize_score([judged, refused], rubric=RUBRIC, models=["m"]), [judged, refused]
    )
    cases = {c.get("name"): c for c in ET.fromstring(xml).iter("testcase")}
    assert cases["judged"].find("failure") is None
    assert "(the judge decided this case)" in cases["judged"].find("system-out").text
    failure = cases["refused"].find("failure")
    assert failure is not None
    assert failure.get("message") == "choice FAIL"
