from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from judgecli.deciding.gate import GateOn, GateResult, GateSpec, evaluate_gate
from judgecli.report.junit import junit_suites, render_junit
from judgecli.report.junit_xml import (
    Ending,
    JunitCase,
    Outcome,
    clean,
    counts,
    escape_attr,
    junit_document,
    seconds,
    text_element,
)
from judgecli.result import CaseResult, CaseStatus, Judgement, Order, Winner
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.facts import Usage
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.run import RunSummary
from judgecli.summary.score import ScoreSummary
from judgecli.verdict import Position, Verdict

# --- the JUnit shape CI tools expect -------------------------------------------------------
# xmlschema is not installed (and no dependency is added for one test), so this is
# jenkinsci/xunit-plugin's junit-10.xsd written out as data: for each element, the
# attributes it may have, those it must have, and the child elements it may contain.
SCHEMA: dict[str, tuple[set[str], set[str], set[str]]] = {
    "testsuites": ({"name", "time", "tests", "failures", "errors"}, set(), {"testsuite"}),
    "testsuite": (
        {
            "name",
            "tests",
            "failures",
            "errors",
            "group",
            "time",
            "skipped",
            "timestamp",
            "hostname",
            "id",
            "package",
            "file",
            "log",
            "url",
        },
        {"name", "tests", "failures", "errors"},
        {"testsuite", "properties", "testcase", "system-out", "system-err"},
    ),
    "properties": (set(), set(), {"property"}),
    "property": ({"name", "value"}, {"name", "value"}, set()),
    "testcase": (
        {"name", "time", "classname", "group"},
        {"name"},
        {
            "skipped",
            "error",
            "failure",
            "rerunFailure",
            "rerunError",
            "flakyFailure",
            "flakyError",
            "system-out",
            "system-err",
        },
    ),
    "failure": ({"type", "message"}, set(), set()),
    "error": ({"type", "message"}, set(), set()),
    "skipped": ({"type", "message"}, set(), set()),
    "system-out": (set(), set(), set()),
    "system-err": (set(), set(), set()),
}
# junit-10.xsd's SUREFIRE_TIME: digits (optionally in comma-grouped thousands) and a fraction.
SUREFIRE_TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?")
COUNTS = ("tests", "failures", "errors", "skipped")


def check_shape(element: ET.Element) -> None:
    """Assert that `element` and everything under it fit junit-10.xsd (see SCHEMA)."""
    assert element.tag in SCHEMA, f"<{element.tag}> is not a JUnit element"
    allowed, required, children = SCHEMA[element.tag]
    assert set(element.attrib) <= allowed, f"<{element.tag}> has {set(element.attrib) - allowed}"
    assert required <= set(element.attrib), (
        f"<{element.tag}> lacks {required - set(element.attrib)}"
    )
    for child in element:
        assert child.tag in children, f"<{child.tag}> inside <{element.tag}>"
        check_shape(child)
    if "time" in element.attrib:
        assert SUREFIRE_TIME.fullmatch(element.attrib["time"]), element.attrib["time"]
    for name in COUNTS:
        if name in element.attrib:
            assert element.attrib[name].isdigit(), (name, element.attrib[name])
    if element.tag == "testcase":  # one outcome per case (the xsd allows more; no reader wants it)
        assert len([c for c in element if c.tag in {"failure", "error", "skipped"}]) <= 1


# --- runs to render ------------------------------------------------------------------------


def summary(command: str = "score", rubric: str = "helpfulness", **kw) -> RunSummary:
    """An empty summary of `command`: no case was run, `kw` sets its numbers."""
    head = {
        "rubric": rubric,
        "rubric_version": 1,
        "rubric_hash": "h",
        "models": ["m"],
        "n_cases": 0,
        "n_ok": 0,
        "n_failed": 0,
        "usage": Usage(),
    }
    if command == "score":
        return ScoreSummary(**head, **kw)
    if command == "pairwise":
        nothing = {"wins": 0, "losses": 0, "ties": 0, "dropped": 0}
        return PairwiseSummary(**head, **nothing, flip=True, flip_policy="tie", **kw)
    assert command == "calibrate", command
    labels = {"n_labels": 0, "n_labelled_cases": 0, "n_labels_total": 0, "n_unmatched_labels": 0}
    return CalibrateSummary(**head, **labels, **kw)


def scored(case_id, score, passed, *, category=None, latencies=(0.5,), reasoning="because"):
    judgements = [
        Judgement(
            model=f"judge-{i}",
            verdict=Verdict(reasoning=f"{reasoning} {i}", score=score),
            latency_s=latency,
            attempts=1,
        )
        for i, latency in enumerate(latencies)
    ]
    return CaseResult(
        id=case_id,
        status=CaseStatus.OK,
        score=score,
        passed=passed,
        category=category,
        judgements=judgements,
        rubric_hash="h",
    )


def chosen(case_id, choice, passed):
    judgement = Judgement(model="m", verdict=Verdict(reasoning="it is not", choice=choice))
    return CaseResult(
        id=case_id,
        status=CaseStatus.OK,
        choice=choice,
        passed=passed,
        judgements=[judgement],
        rubric_hash="h",
    )


def compared(case_id, winner, slots=("B", "A"), *, consistent=True):
    """One judge; `slots` = the positions it picked in (old-new, new-old)."""
    judgements = [
        Judgement(
            model="m",
            order=order,
            latency_s=1.25,
            attempts=1,
            verdict=Verdict(reasoning=f"in {order.value} {slot} is better", winner=Position(slot)),
        )
        for order, slot in zip((Order.OLD_NEW, Order.NEW_OLD), slots, strict=True)
    ]
    return CaseResult(
        id=case_id,
        status=CaseStatus.OK,
        winner=winner,
        consistent=consistent,
        judge_winners={"m": winner},
        judgements=judgements,
        rubric_hash="h",
    )


def failed(case_id, raw="not json at all", error="invalid verdict: no JSON object"):
    judgement = Judgement(model="m", raw=raw, error=f"{error} (after 2 replies)", attempts=2)
    return CaseResult(
        id=case_id,
        status=CaseStatus.FAILED,
        error=f"m: {error}",
        judgements=[judgement],
        rubric_hash="h",
    )


def gated(spec: GateSpec, **numbers) -> GateResult:
    base = summary("pairwise", "pairwise", **numbers)
    result = evaluate_gate(base, spec)
    assert result is not None
    return result


PAIRWISE_NUMBERS = {
    "win_rate": 0.48,
    "win_rate_ci": (0.40, 0.56),
    "loss_rate": 0.3,
    "loss_rate_ci": (0.2, 0.4),
    # A judge above the position-consistency floor: below it the gate is undecided
    # (issue 29; `test_an_undecided_gate_is_an_error_not_a_failure`).
    "consistency": 0.8,
}


def parse(summary_: RunSummary, results) -> ET.Element:
    document = render_junit(summary_, results)
    root = ET.fromstring(document.encode("utf-8"))
    check_shape(root)
    return root


def cases_by_name(root: ET.Element) -> dict[str, ET.Element]:
    return {tc.attrib["name"]: tc for tc in root.iter("testcase")}


def child(element: ET.Element, path: str) -> ET.Element:
    found = element.find(path)
    assert found is not None, f"no {path} in <{element.tag}>"
    return found


def text(element: ET.Element, path: str) -> str:
    return child(element, path).text or ""


def outcome(tc: ET.Element) -> str:
    tags = [c.tag for c in tc if c.tag in {"failure", "error", "skipped"}]
    return tags[0] if tags else "pass"


RUNS = [
    pytest.param(
        summary(),
        [scored("a", 4, True), scored("b", 2, False), scored("c", 3, None), failed("d")],
        id="score",
    ),
    pytest.param(
        summary("score", "correct"),
        [chosen("a", "YES", True), chosen("b", "NO", False)],
        id="binary",
    ),
    pytest.param(
        summary(
            "pairwise", "pairwise", gate=gated(GateSpec(min_win_rate=0.55), **PAIRWISE_NUMBERS)
        ),
        [
            compared("w", Winner.NEW),
            compared("l", Winner.OLD, ("A", "B")),
            compared("t", Winner.TIE, ("tie", "tie")),
            compared("x", None, ("A", "A"), consistent=False),
            failed("f"),
        ],
        id="pairwise-with-failed-gate",
    ),
    pytest.param(
        summary("calibrate", "(from results)"), [scored("a", 1, False), failed("b")], id="calibrate"
    ),
    pytest.param(summary(), [], id="no-cases"),
    pytest.param(
        summary(incomplete="the judge could not grade 1 of 1 cases"), [failed("a")], id="incomplete"
    ),
]


# --- tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("summary_", "results"), RUNS)
def test_the_document_fits_the_junit_schema_ci_tools_read(summary_, results):
    root = parse(summary_, results)
    assert root.tag == "testsuites"
    assert all(suite.tag == "testsuite" for suite in root)


@pytest.mark.parametrize(("summary_", "results"), RUNS)
def test_suite_counts_equal_the_testcases_they_hold(summary_, results):
    root = parse(summary_, results)
    for suite in [root, *root.iter("testsuite")]:
        cases = list(suite.iter("testcase"))
        assert int(suite.attrib["tests"]) == len(cases)
        for name in ("failures", "errors", "skipped"):
            if name in suite.attrib:
                tag = name.removesuffix("s") if name != "skipped" else "skipped"
                assert int(suite.attrib[name]) == sum(outcome(c) == tag for c in cases), name
    # One more testcase for the gate, or for the run when it is incomplete.
    expected = len(results) + (summary_.gate is not None or summary_.incomplete is not None)
    assert int(root.attrib["tests"]) == expected


def test_score_cases_pass_fail_or_pass_with_the_score_shown():
    cases = cases_by_name(parse(summary(), RUNS[0].values[1]))
    assert outcome(cases["a"]) == "pass"
    assert outcome(cases["b"]) == "failure"
    failure = child(cases["b"], "failure")
    assert failure.attrib["message"] == "score 2 below pass_at"
    assert "because 0" in (failure.text or "")
    # No pass mark: nothing fails, and the score is in system-out.
    assert outcome(cases["c"]) == "pass"
    assert "score 3" in text(cases["c"], "system-out")


def test_a_binary_case_that_did_not_pass_names_the_choice():
    cases = cases_by_name(parse(summary(), [chosen("a", "YES", True), chosen("b", "NO", False)]))
    assert outcome(cases["a"]) == "pass"
    failure = child(cases["b"], "failure")
    assert failure.attrib["message"] == "choice NO"
    assert "it is not" in (failure.text or "")


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        pytest.param(compared("c", Winner.NEW), "pass", id="new-wins"),
        pytest.param(compared("c", Winner.TIE, ("tie", "tie")), "pass", id="tie-is-not-worse"),
        pytest.param(compared("c", Winner.OLD, ("A", "B")), "failure", id="old-wins"),
        pytest.param(
            compared("c", None, ("A", "A"), consistent=False),
            "skipped",
            id="dropped-by-flip-policy",
        ),
    ],
)
def test_a_pairwise_case_fails_only_when_old_wins(result, expected):
    case = cases_by_name(parse(summary("pairwise", "pairwise"), [result]))["c"]
    assert outcome(case) == expected


def test_an_old_win_carries_the_reasoning_of_every_order():
    case = cases_by_name(
        parse(summary("pairwise", "pairwise"), [compared("c", Winner.OLD, ("A", "B"))])
    )["c"]
    failure = child(case, "failure")
    assert failure.attrib["message"] == "OLD wins: NEW is worse on this case"
    assert "m (old-new): A → old\nin old-new A is better" in (failure.text or "")
    assert "m (new-old): B → old\nin new-old B is better" in (failure.text or "")


def test_a_case_the_judge_could_not_grade_is_an_error_with_its_raw_reply():
    case = cases_by_name(parse(summary(), [failed("c", raw='{"score": "four"')]))["c"]
    error = child(case, "error")
    assert error.attrib["message"] == "the judge could not grade this case"
    assert "invalid verdict: no JSON object" in (error.text or "")
    assert '{"score": "four"' in (error.text or "")


def test_calibrate_cases_are_verdicts_not_failures():
    # One disagreement is not the judge failing; its agreement over all cases is (the gate).
    cases = cases_by_name(parse(summary("calibrate", "helpfulness"), RUNS[3].values[1]))
    assert outcome(cases["a"]) == "pass"
    assert "score 1" in text(cases["a"], "system-out")
    assert outcome(cases["b"]) == "error"


def test_a_calibrate_case_carries_the_human_labels_and_whether_the_judge_agrees():
    disagreed = scored("a", 1, False).model_copy(
        update={"human_labels": [4.0, 3.5], "agrees": False}
    )
    agreed = scored("b", 3, True).model_copy(update={"human_labels": ["pass"], "agrees": True})
    cases = cases_by_name(parse(summary("calibrate", "helpfulness"), [disagreed, agreed]))
    assert outcome(cases["a"]) == "pass"
    assert text(cases["a"], "system-out") == (
        "score 1, not passed\nhuman: 4, 3.5 (the judge disagrees)"
    )
    assert text(cases["b"], "system-out").endswith("human: pass (the judge agrees)")


# An outage is not a regression: the run is an error, not a pass and not a failure.
def test_an_incomplete_run_is_one_errored_testcase_and_its_gate_is_not_reported():
    reason = "the judge could not grade 24 of 30 cases"
    gate = gated(GateSpec(min_win_rate=0.55), **PAIRWISE_NUMBERS)
    root = parse(
        summary("pairwise", "pairwise", incomplete=reason, gate=gate),
        [compared("w", Winner.NEW), failed("f")],
    )
    cases = cases_by_name(root)
    assert "gate" not in cases
    run = cases["run"]
    assert outcome(run) == "error"
    error = child(run, "error")
    assert error.attrib == {
        "message": f"INCOMPLETE — {reason}; no verdict",
        "type": "RunIncomplete",
    }
    assert "judge resume" in (error.text or "")
    suites = {s.attrib["name"]: s for s in root.iter("testsuite")}
    assert suites["judge.pairwise.pairwise.run"].attrib["errors"] == "1"
    assert (root.attrib["failures"], root.attrib["errors"]) == ("0", "2")


def test_classname_is_command_rubric_and_category():
    root = parse(summary(), [scored("a", 4, True, category="science"), scored("b", 4, True)])
    cases = cases_by_name(root)
    assert cases["a"].attrib["classname"] == "judge.score.helpfulness.science"
    assert cases["b"].attrib["classname"] == "judge.score.helpfulness"


def test_names_cannot_add_classname_segments():
    root = parse(
        summary("calibrate", "(from results)"), [scored("a", 4, True, category="sci.fi & more")]
    )
    assert (
        cases_by_name(root)["a"].attrib["classname"] == "judge.calibrate.from-results.sci-fi-more"
    )


def test_time_is_the_sum_of_the_judgements_latencies():
    root = parse(summary(), [scored("a", 4, True, latencies=(0.25, 1.5)), scored("b", 4, True)])
    assert cases_by_name(root)["a"].attrib["time"] == "1.750"
    assert root.attrib["time"] == "2.250"


@pytest.mark.parametrize(
    ("spec", "expected", "message"),
    [
        pytest.param(GateSpec(min_win_rate=0.45), "pass", None, id="passed"),
        pytest.param(
            GateSpec(min_win_rate=0.55),
            "failure",
            "gate failed: win_rate 0.48 < 0.55 (point estimate)",
            id="point-below",
        ),
        pytest.param(
            GateSpec(min_win_rate=0.45, max_loss_rate=0.35, on=GateOn.LOWER_BOUND),
            "failure",
            "gate failed: win_rate 0.4 < 0.45 (pessimistic end of the 95% CI); "
            "loss_rate 0.4 > 0.35 (pessimistic end of the 95% CI)",
            id="every-failed-check-in-the-message",
        ),
    ],
)
def test_the_gate_is_one_more_testcase(spec, expected, message):
    root = parse(
        summary("pairwise", "pairwise", gate=gated(spec, **PAIRWISE_NUMBERS)),
        [compared("w", Winner.NEW)],
    )
    gate = cases_by_name(root)["gate"]
    assert gate.attrib["classname"] == "judge.pairwise.pairwise"
    assert outcome(gate) == expected
    if message is not None:
        failure = child(gate, "failure")
        assert failure.attrib["message"] == message
        assert "FAIL win_rate" in (failure.text or "")
    else:
        assert "PASS win_rate 0.48 >= 0.45" in text(gate, "system-out")


def test_an_undecided_gate_is_an_error_not_a_failure():
    # Issue 29: a judge below the consistency floor (here it said "A" whatever the order)
    # decides nothing; the gate testcase errs, as an unfinished run does.
    numbers = PAIRWISE_NUMBERS | {"consistency": 0.0, "first_position_rate": 1.0}
    root = parse(
        summary("pairwise", "pairwise", gate=gated(GateSpec(min_win_rate=0.55), **numbers)),
        [compared("w", Winner.NEW)],
    )
    gate = cases_by_name(root)["gate"]
    assert outcome(gate) == "error"
    error = child(gate, "error")
    assert error.attrib["type"] == "GateUndecided"
    assert error.attrib["message"] == (
        "gate undecided: the judge could not tell the answers apart (position consistency "
        "0% < 50%); no verdict"
    )
    assert "UNDECIDED win_rate 0.48, needs >= 0.55 (point estimate)" in (error.text or "")
    assert "what to do: use a stronger judge" in (error.text or "")
    assert root.attrib["failures"] == "0"


def test_no_gate_no_gate_testcase():
    assert "gate" not in cases_by_name(parse(summary(), [scored("a", 4, True)]))


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("<b>bold</b> & more", id="markup-and-ampersand"),
        pytest.param("text ]]> after a CDATA end", id="cdata-end"),
        pytest.param("nul\x00 and \x1b[31mred\x1b[0m", id="control-characters"),
        pytest.param("lone \ud800 surrogate", id="lone-surrogate"),
    ],
)
def test_any_reply_text_gives_a_well_formed_document(raw):
    document = render_junit(
        summary(), [failed(f"id {raw}", raw=raw), scored(raw, 3, None, reasoning=raw)]
    )
    body = document.split("\n", 1)[1]
    assert "]]>" not in body  # ends a CDATA section; never valid in text
    root = ET.fromstring(document.encode("utf-8"))
    check_shape(root)
    expected = raw.replace("\x00", "").replace("\x1b", "").replace("\ud800", "")
    error = child(root, ".//error")
    assert expected in (error.text or "")
    names = [tc.attrib["name"] for tc in root.iter("testcase")]
    assert names == [f"id {expected}", expected]
    assert expected in text(root, ".//system-out")


def test_the_same_results_give_the_same_bytes():
    summary_, results = RUNS[2].values
    assert render_junit(summary_, results) == render_junit(summary_, list(results))


# --- the writer against ElementTree -------------------------------------------------------
# render_junit writes its XML as text; before, it built an xml.etree tree and serialised it
# with ET.indent and ET.tostring. These tests keep that writer as the reference: the bytes
# must not change, whatever a reply holds.

ADVERSARIAL = [
    pytest.param("<b>\"bold\"</b> & 'more' > less", id="markup-quotes-ampersand"),
    pytest.param("text ]]> after a CDATA end", id="cdata-end"),
    pytest.param("tab\there, newline\nthere, crlf\r\nand cr\r", id="whitespace"),
    pytest.param("nul\x00 vt\x0b ff\x0c esc\x1b[31mred\x1b[0m", id="control-characters"),
    pytest.param("lone \ud800 \udfff surrogates, \ufffe\uffff non-characters", id="not-xml"),
    pytest.param("🎉 𝔘 \U0010fffd beyond the BMP", id="non-bmp"),
    pytest.param("&amp; &#10; &lt; written as text", id="entities-as-text"),
    pytest.param("", id="empty"),
]


def etree_document(suites) -> str:
    """The testsuites as xml.etree writes them: render_junit's writer before it wrote text."""
    every = [c for _, group in suites for c in group]
    root = ET.Element("testsuites", counts(every, name="judge"))
    for name, group in suites:
        suite = ET.SubElement(root, "testsuite", counts(group, name=name, skipped=True))
        for case in group:
            attrs = {"classname": case.classname, "name": case.name, "time": seconds(case.time_s)}
            element = ET.SubElement(suite, "testcase", attrs)
            end = case.ending
            if end.outcome is not Outcome.PASSED:
                attrs = {"message": clean(end.message or "")}
                if end.kind is not None:
                    attrs["type"] = end.kind
                child = ET.SubElement(element, end.outcome.value, attrs)
                if end.text:
                    child.text = clean(end.text)
            if end.out:
                ET.SubElement(element, "system-out").text = clean(end.out)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


@pytest.mark.parametrize("value", ADVERSARIAL)
def test_text_and_attributes_are_escaped_as_elementtree_escapes_them(value):
    element = ET.Element("e", {"a": value})
    element.text = value
    assert text_element("e", f' a="{escape_attr(value)}"', value) == ET.tostring(element, "unicode")


def adversarial_results(value):
    """Every kind of case, with `value` in each text a user or a judge writes."""
    return [
        scored(f"s {value}", 2, False, category=f"cat {value}", reasoning=value),
        scored(f"n {value}", 3, None, reasoning=value),
        chosen(f"b {value}", f"NO {value}", False),
        failed(f"f {value}", raw=value, error=value),
        compared(f"w {value}", Winner.OLD, ("A", "B")),
        compared(f"x {value}", None, ("A", "A"), consistent=False),
    ]


@pytest.mark.parametrize(("summary_", "results"), RUNS)
def test_each_run_gives_the_bytes_elementtree_gives(summary_, results):
    suites = junit_suites(summary_, results)
    assert junit_document(suites) == etree_document(suites)


@pytest.mark.parametrize("value", ADVERSARIAL)
def test_any_text_gives_the_bytes_elementtree_gives(value):
    for summary_ in (summary(), summary("calibrate", value), summary(incomplete=value)):
        suites = junit_suites(summary_, adversarial_results(value))
        assert junit_document(suites) == etree_document(suites)
    # Every field at once, unchecked by the case builders; and an empty suite.
    cases = [
        JunitCase(value, value, 1.5, Ending(Outcome.FAILURE, value, value, value, value)),
        JunitCase(value, value, 0.0, Ending(Outcome.ERROR, value, None, value)),
        JunitCase(value, value, 0.0, Ending(Outcome.SKIPPED, value)),
        JunitCase(value, value, 0.0, Ending(out=value)),
        JunitCase(value, value, 0.0),
    ]
    suites = [(value, cases), ("empty", [])]
    assert junit_document(suites) == etree_document(suites)


@pytest.mark.parametrize("value", ADVERSARIAL)
def test_any_text_parses_back_as_written_less_what_xml_cannot_hold(value):
    root = parse(summary(), adversarial_results(value))
    kept = clean(value)
    cases = cases_by_name(root)
    # Attribute values keep their tabs, newlines and CRs (written as character references).
    assert child(cases[f"b {kept}"], "failure").attrib["message"] == f"choice NO {kept}"
    assert cases[f"s {kept}"].attrib["classname"] == "judge.score.helpfulness." + (
        re.sub(r"[^\w-]+", "-", f"cat {kept}").strip("-")
    )
    # Text is read with its line ends normalised to "\n", as XML parsers do.
    newlines = kept.replace("\r\n", "\n").replace("\r", "\n")
    assert newlines in text(cases[f"s {kept}"], "failure")
    assert f"raw reply:\n{newlines}" in text(cases[f"f {kept}"], "error")
