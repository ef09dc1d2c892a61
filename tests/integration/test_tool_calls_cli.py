"""Issue 32: the deterministic tool-call check through the real CLI — the library rubric
`tool-calls` with no judge at all (offline, no model), a rubric that checks first and asks
the simulator for the rest, the gate on the calls' F1, `judge gate` on a finished run, the
JUnit report, bad expectations refused, and the Python API."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import judgecli
from tests.integration.conftest import write_jsonl


def call(name: str, arguments: str) -> dict[str, Any]:
    return {
        "id": f"call_{name}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def agent_run(case_id: str, calls: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"task {case_id}"}]
    if calls:
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls]
    messages.append({"role": "assistant", "content": f"done {case_id}"})
    return {"id": case_id, "messages": messages, **fields}


WEATHER = {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
# Counted by hand: expected 1+1+2+0+1 = 5, made 1+1+1+1+0 = 4, matched 1+1+1+0+0 = 3;
# precision 3/4, recall 3/5, F1 2·3/9 = 2/3. Cases r1, r2 pass; r3 misses one call; r4 was
# expected to call nothing and called something; r5 made no call at all.
RUNS = [
    agent_run(
        "r1",
        [call("get_weather", '{"unit":"celsius","city":"Paris"}')],
        expected_tool_calls=[WEATHER],
    ),
    agent_run(
        "r2",
        [call("get_weather", '{ "city" : "Paris",\n "unit": "celsius" }')],
        expected_tool_calls=[WEATHER],
    ),
    agent_run(
        "r3",
        [call("search", '{"q": "hotels in Paris"}')],
        expected_tool_calls=[
            {
                "name": "search",
                "argument_schemas": {"q": {"type": "string", "pattern": "(?i)paris"}},
            },
            {"name": "book", "arguments": {"hotel": "H1"}},
        ],
    ),
    agent_run("r4", [call("search", '{"q": "hi"}')], expected_tool_calls=[]),
    agent_run("r5", [], expected_tool_calls=[WEATHER]),
]


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "runs.jsonl", RUNS)


def results_of(run_dir: str) -> dict[str, dict[str, Any]]:
    lines = Path(run_dir, "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def test_the_check_alone_needs_no_model_and_calls_nothing(run_cli, runs, monkeypatch):
    # No --model, no server: a run where no judge call is needed does not need a judge. A
    # model set for every run of a CI job is not used either.
    monkeypatch.setenv("JUDGE_MODEL", "openai/never-called")
    run = run_cli(None, "score", str(runs), "--rubric", "tool-calls", "--out", "run", "--json")
    assert run.exit_code == 0, run.stderr
    s = run.summary
    assert s["models"] == []
    assert s["usage"]["calls"] == 0
    calls = s["tool_calls"]
    assert {k: calls[k] for k in ("cases", "expected", "actual", "matched", "missed", "extra")} == {
        "cases": 5,
        "expected": 5,
        "actual": 4,
        "matched": 3,
        "missed": 2,
        "extra": 1,
    }
    assert calls["precision"] == pytest.approx(3 / 4)
    assert calls["recall"] == pytest.approx(3 / 5)
    assert calls["f1"] == pytest.approx(2 / 3)
    for name in ("precision", "recall", "f1"):
        low, high = calls[f"{name}_ci"]
        assert 0 <= low < calls[name] < high <= 1
    assert (calls["perfect"], calls["decided"], calls["unchecked"]) == (2, 5, 0)
    assert (calls["match"], calls["order"]) == ("exact", "any")
    assert (s["pass_rate"], s["choices"]) == (pytest.approx(2 / 5), {"PASS": 2, "FAIL": 3})
    results = results_of("run")
    assert results["r3"]["tool_calls"] == {
        "matched": [
            {
                "name": "search",
                "arguments": {"q": "hotels in Paris"},
                "expected": 0,
                "call": 0,
                "message": 1,
            }
        ],
        "missed": [{"name": "book", "arguments": {"hotel": "H1"}, "expected": 1}],
        "extra": [],
        "decided": True,
    }
    assert results["r4"]["tool_calls"]["extra"][0]["name"] == "search"
    assert [r["choice"] for r in map(results.get, ["r1", "r2", "r3", "r4", "r5"])] == [
        "PASS",
        "PASS",
        "FAIL",
        "FAIL",
        "FAIL",
    ]
    assert all(r["judgements"] == [] for r in results.values())
    report = Path("run/report.md").read_text(encoding="utf-8")
    assert "## Tool calls" in report
    assert "Judges: none (the rubric only checks tool calls)" in report
    assert "tool-call F1 66.7%" in report.splitlines()[2]


def test_junit_fails_the_cases_the_check_failed_and_names_their_calls(run_cli, runs):
    run = run_cli(None, "score", str(runs), "--rubric", "tool-calls", "--out", "run", "--quiet")
    assert run.exit_code == 0, run.stderr
    cases = {c.get("name"): c for c in ET.parse("run/results.junit.xml").iter("testcase")}
    failed = {name for name, c in cases.items() if c.find("failure") is not None}
    assert failed == {"r3", "r4", "r5"}
    r3 = cases["r3"].find("failure")
    assert r3.get("message") == "tool calls: 1 missed"
    assert 'missed: book({"hotel":"H1"})' in r3.text
    assert cases["r4"].find("failure").get("message") == "tool calls: 1 extra"
    assert "every expected call made" in cases["r1"].find("system-out").text
    html = Path("run/report.html").read_text(encoding="utf-8")
    assert "tool calls: 1 missed" in html
    assert "book({&quot;hotel&quot;:&quot;H1&quot;})" in html


@pytest.mark.parametrize(
    ("flags", "code", "outcome"),
    [
        (["--min-tool-f1", "0.6"], 0, "PASS"),
        (["--min-tool-f1", "0.7"], 1, "FAIL"),
        (["--min-tool-recall", "0.6", "--min-tool-precision", "0.75"], 0, "PASS"),
        (["--min-tool-precision", "0.8"], 1, "FAIL"),
        # The pessimistic end of F1's interval on five cases is far below 0.6.
        (["--min-tool-f1", "0.6", "--on", "lower-bound"], 1, "FAIL"),
    ],
)
def test_the_gate_on_the_calls(run_cli, runs, flags, code, outcome):
    run = run_cli(
        None, "score", str(runs), "--rubric", "tool-calls", "--out", "run", "--json", *flags
    )
    assert run.exit_code == code, run.stderr
    gate = run.summary["gate"]
    assert gate["metric"].startswith("tool_calls.")
    assert ("PASS" if gate["passed"] else "FAIL") == outcome
    # `judge gate` reads the finished run the same way.
    again = run_cli(None, "gate", "run/summary.json", *flags)
    assert again.exit_code == code, again.stderr


def test_a_threshold_on_calls_the_rubric_does_not_check_is_refused_before_any_call(
    run_cli, runs, judge_server
):
    run = run_cli(
        judge_server, "score", str(runs), "--rubric", "helpfulness", "--min-tool-f1", "0.5"
    )
    assert run.exit_code == 2
    assert "--min-tool-f1: rubric 'helpfulness' checks no tool calls" in run.stderr
    assert judge_server.requests == []
    scored = run_cli(None, "score", str(runs), "--rubric", "tool-calls", "--out", "run", "--quiet")
    assert scored.exit_code == 0, scored.stderr
    wrong = run_cli(None, "gate", "run/summary.json", "--min-win-rate", "0.5")
    assert wrong.exit_code == 2
    # The hint offers the thresholds this run has numbers for, the calls' among them.
    assert "--min-tool-f1, --min-tool-recall or --min-tool-precision" in wrong.stderr
    assert "--min-checklist-score" not in wrong.stderr


def test_a_broken_argument_schema_is_bad_input_naming_its_line(run_cli, tmp_path):
    bad = [
        RUNS[0],
        agent_run(
            "x", [], expected_tool_calls=[{"name": "s", "argument_schemas": {"q": {"type": 3}}}]
        ),
    ]
    path = write_jsonl(tmp_path / "bad.jsonl", bad)
    run = run_cli(None, "score", str(path), "--rubric", "tool-calls", "--out", "run")
    assert run.exit_code == 2
    assert f"{path}:2" in run.stderr
    assert "argument_schemas.q is not a valid JSON Schema" in run.stderr
    assert not Path("run").exists()


def test_a_case_without_expectations_is_refused_by_the_check_alone(run_cli, tmp_path):
    path = write_jsonl(tmp_path / "runs.jsonl", [RUNS[0], agent_run("y", [])])
    run = run_cli(None, "score", str(path), "--rubric", "tool-calls", "--out", "run")
    assert run.exit_code == 2
    assert f"{path}:2" in run.stderr
    assert 'missing required field "expected_tool_calls"' in run.stderr


CHECK_THEN_JUDGE = """\
name: calls-then-judge
kind: binary
choices: [YES, NO]
requires: [input, output]
tool_calls: {{match: subset, order: strict, judge: {judge}}}
prompt:
  user: "Did the agent answer the task? {{input}} {{output}}"
"""


@pytest.mark.parametrize(("judge", "asked"), [("unchecked", {"u1", "u2"}), ("all", None)])
def test_the_check_decides_first_and_the_judge_grades_the_rest(
    run_cli, judge_server, tmp_path, judge, asked
):
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(CHECK_THEN_JUDGE.format(judge=judge), encoding="utf-8")
    unexpected = [agent_run("u1", [call("search", "{}")]), agent_run("u2", [])]
    path = write_jsonl(tmp_path / "runs.jsonl", RUNS + unexpected)
    run = run_cli(
        judge_server, "score", str(path), "--rubric", str(rubric), "--out", "run", "--json"
    )
    assert run.exit_code == 0, run.stderr
    results = results_of("run")
    judged = {case_id for case_id, r in results.items() if r["judgements"]}
    assert judged == (asked or set(results))
    assert len(judge_server.requests) == len(judged)
    for case_id, r in results.items():
        checked = case_id not in {"u1", "u2"}
        assert ("tool_calls" in r) is checked
        if checked:
            assert r["tool_calls"]["decided"] is (case_id not in judged)
    calls = run.summary["tool_calls"]
    assert (calls["cases"], calls["unchecked"], calls["match"], calls["order"]) == (
        5,
        2,
        "subset",
        "strict",
    )
    assert calls["decided"] == (5 if judge == "unchecked" else 0)
    # The judge's numbers and the check's stand side by side.
    assert run.summary["models"] == ["openai/sim"]


def test_the_python_api_checks_calls_with_no_model():
    run = judgecli.score_dataset(RUNS, rubric="tool-calls", min_tool_f1=0.6)
    assert run.exit_code == 0
    assert run.summary.tool_calls is not None
    assert run.summary.tool_calls.f1 == pytest.approx(2 / 3)
    assert run.summary.gate is not None
    assert run.summary.gate.passed
    checked = {r.id: r.tool_calls for r in run.results}
    assert checked["r5"] is not None
    assert [c.name for c in checked["r5"].missed] == ["get_weather"]


def test_the_library_tool_use_rubric_checks_first_and_judges_the_rest_step_by_step(
    run_cli, judge_server, tmp_path
):
    # Issue 32: `tool-use` carries the check (`tool_calls: {match: subset}`): a case with
    # expected_tool_calls is decided by it (the top of the 1-4 scale or its bottom, no
    # call); the judge grades the others, each tool call in its context (`steps: each`).
    unexpected = [
        agent_run("u1", [call("search", '{"q": "a"}'), call("book", '{"hotel": "H1"}')]),
        agent_run("u2", []),
    ]
    path = write_jsonl(tmp_path / "runs.jsonl", RUNS + unexpected)
    run = run_cli(
        judge_server, "score", str(path), "--rubric", "tool-use", "--out", "run", "--json"
    )
    assert run.exit_code == 0, run.stderr
    results = results_of("run")
    # u1's two calls are asked one by one, u2 (no call) once as a whole.
    assert len(judge_server.requests) == 3
    assert {i: len(r["judgements"]) for i, r in results.items() if r["judgements"]} == {
        "u1": 2,
        "u2": 1,
    }
    assert [s["tool"] for s in results["u1"]["steps"]] == ["search", "book"]
    assert results["u2"]["steps"] == []
    decided = {i: (r["score"], r["passed"]) for i, r in results.items() if "tool_calls" in r}
    assert decided == {
        "r1": (4, True),
        "r2": (4, True),
        "r3": (1, False),
        "r4": (1, False),
        "r5": (1, False),
    }
    assert all(results[i]["tool_calls"]["decided"] for i in decided)
    calls = run.summary["tool_calls"]
    assert (calls["cases"], calls["decided"], calls["unchecked"]) == (5, 5, 2)
    assert (calls["match"], calls["f1"]) == ("subset", pytest.approx(2 / 3))


def test_a_gate_on_a_tool_call_number_the_runs_cannot_define_is_undecided(run_cli, tmp_path):
    # Issue 32: runs that made no call at all are data (every expected call missed), but
    # they give precision no denominator: a gate on it is undecided (exit 3), never passed
    # or failed, and says why; recall, defined, fails on it.
    silent = [agent_run(f"s{i}", [], expected_tool_calls=[WEATHER]) for i in range(3)]
    path = write_jsonl(tmp_path / "runs.jsonl", silent)
    run = run_cli(
        None,
        "score",
        str(path),
        "--rubric",
        "tool-calls",
        "--out",
        "run",
        "--json",
        "--min-tool-precision",
        "0.5",
    )
    assert run.exit_code == 3, run.stderr
    calls = run.summary["tool_calls"]
    assert (calls["precision"], calls["recall"], calls["missed"]) == (None, 0.0, 3)
    assert calls["precision_ci"] == [None, None]
    assert "tool-call precision is undefined: no checked case made a tool call" in run.stderr
    assert run_cli(None, "gate", "run/summary.json", "--min-tool-recall", "0.5").exit_code == 1
