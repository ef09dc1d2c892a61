"""Per-case checklists end to end (issue 32 §2): `judge score --rubric checklist` against the
simulator through real LiteLLM — HealthBench's numbers from the judge's verdicts, the same
asked one item per call or all at once, a changed item asked again alone, the gate, the
reports and JUnit, and the Python API."""

from __future__ import annotations

import json
import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.conftest import DATA
from tests.integration.conftest import REPO, write_jsonl
from tests.unit.stats.test_checklist import BOOTSTRAP_STD, CASE_SCORES, OVERALL, TAGS

WORKED = DATA / "checklist" / "worked.jsonl"
ITEMS = sum(len(json.loads(line)["rubric_items"]) for line in WORKED.open())
PAGE = REPO / "docs" / "checklists.md"
DOCUMENTED = "http://127.0.0.1:8765/v1"
# What a run prints last: the line docs/checklists.md shows under each command.
SAID = re.compile(r"(PASS|FAIL) — |\d+ of \d+ cases graded")


@pytest.fixture(scope="module")
def truthful() -> SimulatorServer:
    """A judge that says of each item what worked.jsonl's `met` says."""
    config = SimulatorConfig(truth_file=WORKED, truth_field="met")
    with SimulatorServer(config) as server:
        yield server


def results_of(run_dir: str | Path) -> dict[str, dict]:
    lines = Path(run_dir, "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def score(run_cli, server, dataset, out, *extra):
    return run_cli(
        server,
        "score",
        str(dataset),
        "--rubric",
        "checklist",
        "--out",
        str(out),
        "--json",
        "--quiet",
        *extra,
    )


@pytest.mark.parametrize("per_call", ["one", "all"])
def test_the_judges_verdicts_give_simple_evals_numbers_asked_either_way(
    run_cli, truthful, per_call
):
    truthful.reset()
    run = score(run_cli, truthful, WORKED, per_call, "--items", per_call)
    assert run.exit_code == 0, run.stderr
    # One call per item, or one per case.
    assert len(truthful.requests) == (ITEMS if per_call == "one" else len(CASE_SCORES))
    summary = run.summary
    assert summary["checklist_score"] == pytest.approx(OVERALL, rel=1e-15)
    assert summary["checklist_score_bootstrap_std"] == pytest.approx(
        BOOTSTRAP_STD[0]["overall_score"], rel=1e-12
    )
    low, high = summary["checklist_score_ci"]
    assert 0.0 <= low < OVERALL < high <= 1.0
    assert {t: (v["score"], v["n"]) for t, v in summary["by_tag"].items()} == {
        t: (pytest.approx(score, rel=1e-15), n) for t, (score, n) in TAGS.items()
    }
    results = results_of(per_call)
    assert {i: r["score"] for i, r in results.items()} == pytest.approx(CASE_SCORES, rel=1e-15)
    worked = {c["id"]: c for c in map(json.loads, WORKED.open())}
    for case_id, result in results.items():
        assert [i["met"] for i in result["items"]] == worked[case_id]["met"]
        assert [i["criterion"] for i in result["items"]] == [
            i["criterion"] for i in worked[case_id]["rubric_items"]
        ]
        assert all(i["reasoning"].startswith("Simulated judgement") for i in result["items"])
        assert result["passed"] is (result["score"] >= 0.5)


def test_a_changed_item_is_asked_again_alone_one_per_call_or_all_at_once(run_cli, judge_server):
    edited = [json.loads(line) for line in WORKED.open()]
    edited[3]["rubric_items"][1]["criterion"] = "Explains that it may be a heart attack"
    changed = write_jsonl(Path("edited.jsonl"), edited)
    for per_call in ("one", "all"):
        first = score(run_cli, judge_server, WORKED, f"{per_call}-1", "--items", per_call)
        assert first.exit_code == 0, first.stderr
        asked = len(judge_server.requests)
        again = score(run_cli, judge_server, WORKED, f"{per_call}-2", "--items", per_call)
        assert len(judge_server.requests) == asked, "a re-run asks nothing"
        assert again.summary["usage"]["cached"] == ITEMS
        assert again.summary["checklist_score"] == first.summary["checklist_score"]
        score(run_cli, judge_server, changed, f"{per_call}-3", "--items", per_call)
        [request] = judge_server.requests[asked:]
        user = request.body["messages"][-1]["content"]
        assert "1. [5] Explains that it may be a heart attack" in user
        assert "Tells the user to call" not in user


def test_the_gate_on_the_checklist_score_and_its_lower_bound(run_cli, truthful):
    passed = score(run_cli, truthful, WORKED, "a", "--min-checklist-score", "0.2")
    assert passed.exit_code == 0, passed.stderr
    [check] = passed.summary["gate"]["checks"]
    assert (check["metric"], check["value"]) == ("checklist_score", pytest.approx(OVERALL))
    failed = score(run_cli, truthful, WORKED, "b", "--min-checklist-score", "0.3")
    assert failed.exit_code == 1
    assert failed.summary["gate"]["passed"] is False
    # `judge gate` reads the number back from summary.json.
    regated = run_cli(None, "gate", "a/summary.json", "--min-checklist-score", "0.25")
    assert regated.exit_code == 1
    assert "checklist_score ≥ 0.25 (point: 0.234 not met)" in regated.stdout
    # Eight cases from -1.23 to 1: the interval's lower end is 0, below any bar above it.
    lower = score(
        run_cli, truthful, WORKED, "c", "--min-checklist-score", "0.1", "--on", "lower-bound"
    )
    assert lower.exit_code == 1
    [check] = lower.summary["gate"]["checks"]
    assert check["value"] == lower.summary["checklist_score_ci"][0] == 0.0
    # The pass rate of the rubric's bar (pass_at 0.5) gates too: 5 of 8 cases reach it.
    rate = score(run_cli, truthful, WORKED, "d", "--min-pass-rate", "0.6")
    assert (rate.exit_code, rate.summary["pass_rate"]) == (0, 5 / 8)


def test_junit_fails_the_cases_below_the_bar_with_their_items_and_the_reports_list_them(
    run_cli, truthful
):
    run = score(run_cli, truthful, WORKED, "run")
    assert run.exit_code == 0, run.stderr
    suite = ET.parse("run/results.junit.xml").getroot()
    failed = {
        case.get("name"): case.find("failure")
        for case in suite.iter("testcase")
        if case.find("failure") is not None
    }
    assert set(failed) == {i for i, s in CASE_SCORES.items() if s < 0.5}
    text = failed["w2"].text or ""
    assert failed["w2"].get("message") == "score -1.231 below pass_at"
    assert "✗ [+9] Warns about bleeding risk (not met)" in text
    assert "✓ [−10] States the combination is safe without caveats (met)" in text
    report = Path("run/report.md").read_text(encoding="utf-8")
    assert "checklist score 23.4%" in report
    assert "## Checklist score by tag" in report
    assert "| axis:accuracy | 8 | 18.1% |" in report
    assert "## Checklist items by case" in report
    assert "| w2 | -1.23 | ✗ | +9 | Warns about bleeding risk |" in report
    html = Path("run/report.html").read_text(encoding="utf-8")
    assert "checklist: 1 of 3 items met" in html  # w4
    assert "Warns about bleeding risk" in html


def test_bad_items_are_exit_2_before_any_call_and_nothing_is_written(run_cli, judge_server):
    bad = [{"id": "a", "input": "q", "output": "a", "rubric_items": [{"criterion": "x"}]}]
    path = write_jsonl(Path("bad.jsonl"), bad)
    run = run_cli(judge_server, "score", str(path), "--rubric", "checklist", "--out", "run")
    assert run.exit_code == 2
    assert 'bad.jsonl:1: "rubric_items" item 1 has no "points"' in run.stderr
    assert "hint: " in run.stderr
    assert judge_server.requests == []
    assert not Path("run").exists()


def test_a_checklist_is_refused_where_it_would_be_guessed_at(run_cli, judge_server):
    panel = run_cli(
        judge_server, "score", str(WORKED), "--rubric", "checklist", "--model", "openai/sim2"
    )
    assert panel.exit_code == 2
    assert "a panel of judges" in panel.stderr
    other = run_cli(
        judge_server,
        "score",
        str(REPO / "datasets" / "example.jsonl"),
        "--rubric",
        "helpfulness",
        "--min-checklist-score",
        "0.5",
    )
    assert other.exit_code == 2
    assert "grades no checklist" in other.stderr
    assert judge_server.requests == []


def test_items_per_call_is_refused_where_there_are_no_items_to_ask(run_cli, judge_server):
    example = str(REPO / "datasets" / "example.jsonl")
    pointwise = run_cli(judge_server, "score", example, "--rubric", "helpfulness", "--items", "all")
    assert pointwise.exit_code == 2
    assert "--items: rubric 'helpfulness' is pointwise" in pointwise.stderr
    assert "hint: drop --items" in pointwise.stderr
    # Only `judge score` grades checklists: the other judging commands do not offer the flag.
    old, new = (str(REPO / "datasets" / f"{v}.jsonl") for v in ("old", "new"))
    pairwise = run_cli(judge_server, "pairwise", old, new, "--items", "all")
    assert pairwise.exit_code == 2
    assert "No such option: --items" in pairwise.stderr
    mistyped = run_cli(
        judge_server, "score", str(WORKED), "--rubric", "checklist", "--items", "each"
    )
    assert mistyped.exit_code == 2
    assert "--items 'each' is not one of: one, all" in mistyped.stderr
    assert judge_server.requests == []
    assert not Path("runs").exists()


def test_the_bundled_checklist_set_runs_from_the_python_api(judge_server, monkeypatch):
    from judgecli import score_dataset

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    run = score_dataset(
        REPO / "datasets" / "checklist.jsonl",
        rubric="checklist",
        model="openai/sim",
        api_base=f"{judge_server.url}/v1",
        out="api",
        items_per_call="all",
        min_checklist_score=0.0,
    )
    assert run.exit_code == 0
    assert run.summary.checklist_score is not None
    assert run.summary.by_tag
    assert len(judge_server.requests) == 20
    assert all(r.items for r in run.results)


def test_one_case_graded_from_python_keeps_its_items_and_their_reasons(truthful, monkeypatch):
    from judgecli import Judge

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    worked = json.loads(WORKED.read_text(encoding="utf-8").splitlines()[1])  # w2
    case = {k: worked[k] for k in ("id", "input", "output", "rubric_items")}
    with Judge("openai/sim", rubric="checklist", api_base=f"{truthful.url}/v1") as judge:
        verdict = judge.grade(case)
    assert verdict.score == pytest.approx(CASE_SCORES["w2"], rel=1e-15)
    assert verdict.passed is False
    assert [i.met for i in verdict.result.items or []] == worked["met"]
    assert verdict.reason.splitlines()[0].startswith("- not met [9] Warns about bleeding risk: ")
    assert verdict.usage.calls == len(worked["rubric_items"])


def documented_runs() -> list[tuple[list[str], list[str], int]]:
    """Each `$ judge score ...` of docs/checklists.md: its words after `judge`, the summary
    lines the page shows under it, and the exit code it shows (`echo $?`; else 0).
    """
    runs: list[tuple[list[str], list[str], int]] = []
    # The page's fenced blocks are its odd pieces between fence lines.
    pieces = re.split(r"^```.*$", PAGE.read_text(encoding="utf-8"), flags=re.M)[1::2]
    for block in pieces:
        lines = block.replace("\\\n", " ").splitlines()
        for n, line in enumerate(lines):
            if not line.startswith("$ judge score "):
                continue
            shown = [line for line in lines[n + 1 :] if not line.startswith("$ ")]
            after = [line for line in lines[n + 1 :] if line.startswith("$ ")]
            code = int(lines[lines.index(after[0]) + 1]) if after[:1] == ["$ echo $?"] else 0
            said = [line for line in shown if SAID.match(line)]
            runs.append((shlex.split(line)[2:], said, code))
    return runs


def test_the_pages_commands_print_what_it_shows_and_exit_as_it_says(
    run_cli, judge_server, truthful, monkeypatch
):
    # Issue 32: docs/checklists.md's examples run against the simulator: on the bundled
    # set, and on the worked example with its truth file (the page's second simulator).
    runs = documented_runs()
    assert len(runs) == 3
    for n, (words, said, code) in enumerate(runs):
        assert said, words
        # Each in a folder of its own: two runs in one second would pick the same runs/ name.
        here = Path(f"page-{n}").resolve()
        here.mkdir()
        for folder in ("datasets", "tests"):
            (here / folder).symlink_to(REPO / folder)
        monkeypatch.chdir(here)
        server = truthful if str(WORKED.relative_to(REPO)) in words else judge_server
        argv = [w.replace(DOCUMENTED, f"{server.url}/v1") for w in words]
        run = run_cli(None, *argv)
        assert run.exit_code == code, run.stderr
        for line in said:
            assert line in run.stdout.splitlines(), (line, run.stdout)
