"""Agents' runs end to end (issue 32, item 1): trajectories graded whole and step by step,
two agent versions compared both orders, the arena, long runs fitted to a token budget,
OpenTelemetry exports, and a real agent framework's export (tau-bench) — the real CLI,
through real LiteLLM, against the simulator."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.conftest import REPO, write_jsonl
from tests.unit.inputs.test_otel import agent_spans, document

DATASETS = REPO / "datasets"
AGENT_A, AGENT_B = DATASETS / "agent-a.jsonl", DATASETS / "agent-b.jsonl"
TAU = REPO / "tests" / "data" / "tau_bench"
CALL = re.compile(r"<tool_call>\w+\(")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def results_of(run_dir: str) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in read_jsonl(Path(run_dir) / "results.jsonl")}


def calls_in(case: dict[str, Any]) -> int:
    return sum(len(m.get("tool_calls") or []) for m in case["messages"])


def prompt_of(request) -> str:
    return "\n".join(m["content"] for m in request.body["messages"])


def score(run_cli, server, dataset, rubric, out, *extra):
    args = ["score", str(dataset), "--rubric", str(rubric), "--out", out, "--json", "--quiet"]
    return run_cli(server, *args, *extra)


# --- trajectories graded -----------------------------------------------------------------


def test_the_trajectory_rubric_grades_each_run_once_shown_whole_and_fenced(run_cli, judge_server):
    cases = read_jsonl(DATASETS / "trajectory.jsonl")
    run = score(run_cli, judge_server, DATASETS / "trajectory.jsonl", "trajectory", "run")
    assert run.exit_code == 0, run.stderr
    assert (run.summary["n_cases"], run.summary["n_failed"]) == (len(cases), 0)
    assert len(judge_server.requests) == len(cases)
    for request in judge_server.requests:
        prompt = prompt_of(request)
        # One trajectory fence, with the tools offered and every step fenced by role.
        assert prompt.count("<trajectory>") == prompt.count("</trajectory>") == 1
        assert "<tools>" in prompt
    calls = sum(len(CALL.findall(prompt_of(r))) for r in judge_server.requests)
    assert calls == sum(map(calls_in, cases))
    # steps: final keeps no per-step verdicts.
    assert all("steps" not in r for r in results_of("run").values())


def test_tool_use_grades_each_call_in_its_context_and_keeps_every_steps_verdict(
    run_cli, judge_server
):
    cases = {c["id"]: c for c in read_jsonl(DATASETS / "tool-use.jsonl")}
    run = score(run_cli, judge_server, DATASETS / "tool-use.jsonl", "tool-use", "run")
    assert run.exit_code == 0, run.stderr
    results = results_of("run")
    judged = [c for c in cases.values() if c.get("expected_tool_calls") is None]
    # The deterministic check decides the cases with expectations; the judge is asked once
    # per call of the others (a run without a call once, whole).
    assert len(judge_server.requests) == sum(max(1, calls_in(c)) for c in judged)
    for case in judged:
        result = results[case["id"]]
        steps = result["steps"]
        assert [s["step"] for s in steps] == list(range(1, calls_in(case) + 1))
        if steps:
            assert result["score"] == pytest.approx(sum(s["score"] for s in steps) / len(steps))
    # tu-02: refund_order before the lookup (an Error result), the lookup, the retry.
    assert [s["tool"] for s in results["tu-02"]["steps"]] == [
        "refund_order",
        "get_order",
        "refund_order",
    ]
    errored, *fine = [s["score"] for s in results["tu-02"]["steps"]]
    assert errored < min(fine)
    assert results["tu-05"]["steps"] == []  # no call: graded whole, not a failure
    # Each step's prompt shows the run up to its call, then the call on its own.
    steps_shown = [prompt_of(r) for r in judge_server.requests if "refund_order" in prompt_of(r)]
    assert all("<step>" in p for p in steps_shown)


def test_steps_each_aggregates_by_min_and_the_known_step_labels_come_back(
    run_cli, tmp_path, judge_server
):
    case = read_jsonl(DATASETS / "tool-use.jsonl")[1]  # tu-02: three calls
    assert case["id"] == "tu-02"
    dataset = write_jsonl(tmp_path / "run.jsonl", [case])
    truth = write_jsonl(
        tmp_path / "truth.jsonl",
        [{"id": "tu-02", "messages": case["messages"], "label": 3, "step_labels": [1, 4, 3]}],
    )
    rubric = tmp_path / "min.yaml"
    rubric.write_text("extends: tool-use\nname: tool-use-min\naggregate: min\n")
    with SimulatorServer(SimulatorConfig(truth_file=truth, truth_field="label")) as server:
        run = score(run_cli, server, dataset, rubric, "run")
    assert run.exit_code == 0, run.stderr
    result = results_of("run")["tu-02"]
    assert [s["score"] for s in result["steps"]] == [1, 4, 3]
    assert result["score"] == 1
    assert result["passed"] is False


# --- two agent versions ------------------------------------------------------------------


def test_pairwise_compares_two_agent_versions_both_orders_with_step_diagnostics_and_the_gate(
    run_cli, judge_server
):
    args = ["pairwise", str(AGENT_A), str(AGENT_B), "--rubric", "trajectory-pairwise"]
    run = run_cli(judge_server, *args, "--out", "run", "--json", "--min-win-rate", "0.55")
    assert run.exit_code == 0, run.stderr
    summary = run.summary
    n = len(read_jsonl(AGENT_A))
    assert summary["n_ok"] == n
    assert len(judge_server.requests) == 2 * n  # both orders
    lo, hi = summary["win_rate_ci"]
    assert 0.55 < lo <= summary["win_rate"] <= hi
    assert summary["win_rate_length_controlled"] is not None
    length = summary["length"]
    runs_a, runs_b = read_jsonl(AGENT_A), read_jsonl(AGENT_B)
    # Runs that made no call count as 0 steps (each case was offered tools).
    assert length["mean_steps_old"] == pytest.approx(sum(map(calls_in, runs_a)) / n)
    assert length["mean_steps_new"] == pytest.approx(sum(map(calls_in, runs_b)) / n)
    assert 0 <= length["more_steps_wins_rate"] <= 1
    for result in results_of("run").values():
        assert {"old", "new", "old_steps", "new_steps"} <= result["lengths"].keys()
    report = Path("run/report.md").read_text()
    assert "more tool calls wins" in report

    # The other way round, B's agent is the old one: the gate fails on judged evidence.
    reversed_run = run_cli(
        judge_server,
        "pairwise",
        str(AGENT_B),
        str(AGENT_A),
        "--rubric",
        "trajectory-pairwise",
        "--out",
        "back",
        "--json",
        "--min-win-rate",
        "0.55",
    )
    assert reversed_run.exit_code == 1, reversed_run.stderr


def test_a_judge_that_knows_which_run_is_better_gives_the_known_win_rate(run_cli, tmp_path):
    # The datasets' notes: B better on 15 tasks, A on ag-18, the same on 4.
    same, a_better = {"ag-08", "ag-13", "ag-16", "ag-20"}, {"ag-18"}
    labels = []
    for a, b in zip(read_jsonl(AGENT_A), read_jsonl(AGENT_B), strict=True):
        la, lb = (1, 1) if a["id"] in same else (2, 1) if a["id"] in a_better else (1, 2)
        labels += [
            {"messages": a["messages"], "label": la},
            {"messages": b["messages"], "label": lb},
        ]
    truth = write_jsonl(tmp_path / "truth.jsonl", labels)
    with SimulatorServer(SimulatorConfig(truth_file=truth, truth_field="label")) as server:
        run = run_cli(
            server,
            "pairwise",
            str(AGENT_A),
            str(AGENT_B),
            "--rubric",
            "trajectory-pairwise",
            "--json",
            "--quiet",
        )
    assert run.exit_code == 0, run.stderr
    summary = run.summary
    assert (summary["wins"], summary["losses"], summary["ties"]) == (15, 1, 4)
    assert summary["win_rate"] == pytest.approx((15 + 4 / 2) / 20)
    assert summary["consistency"] == 1


def simulated_user_runs(path: Path, reply: str) -> Path:
    """agent-b's runs, each user turn after the first reworded as another simulated user
    would (`reply`), or the first turn itself when the run has one user turn."""
    rows = []
    for case in read_jsonl(AGENT_B)[:4]:
        users = [m for m in case["messages"] if m["role"] == "user"]
        users[-1]["content"] += f" {reply}"
        rows.append(case)
    return write_jsonl(path, rows)


def test_runs_whose_simulated_users_said_different_things_are_compared_with_a_warning(
    run_cli, tmp_path, judge_server
):
    old = simulated_user_runs(tmp_path / "old.jsonl", "Thanks.")
    new = simulated_user_runs(tmp_path / "new.jsonl", "Thank you so much!")
    run = run_cli(
        judge_server, "pairwise", str(old), str(new), "--rubric", "trajectory-pairwise", "--json"
    )
    assert run.exit_code == 0, run.stderr
    assert "the user turns differ" in run.stderr
    assert any("the user turns differ" in w for w in run.summary["warnings"])
    assert run.summary["n_ok"] == 4

    # Chats that are not agents' runs still must answer the same user turns.
    chats = [
        {
            "id": "c1",
            "messages": [{"role": "user", "content": u}, {"role": "assistant", "content": "ok"}],
        }
        for u in ("hello",)
    ]
    other = [
        {**chats[0], "messages": [{"role": "user", "content": "bye"}, chats[0]["messages"][1]]}
    ]
    refused = run_cli(
        judge_server,
        "pairwise",
        str(write_jsonl(tmp_path / "a.jsonl", chats)),
        str(write_jsonl(tmp_path / "b.jsonl", other)),
        "--json",
    )
    assert refused.exit_code == 2


def test_the_arena_ranks_agent_versions(run_cli, tmp_path, judge_server):
    # A third version: B's runs that stop on their last tool result, with no final answer.
    silent = []
    for case in read_jsonl(AGENT_B):
        messages = case["messages"]
        while messages and messages[-1]["role"] != "tool" and calls_in(case):
            messages.pop()
        silent.append(case)
    agent_c = write_jsonl(tmp_path / "agent-c.jsonl", silent)
    run = run_cli(
        judge_server,
        "arena",
        str(AGENT_A),
        str(AGENT_B),
        str(agent_c),
        "--rubric",
        "trajectory-pairwise",
        "--out",
        "arena",
        "--json",
    )
    assert run.exit_code == 0, run.stderr
    ranks = {row["name"]: row["rank"] for row in run.summary["leaderboard"]}
    assert ranks["agent-b"] == 1
    assert ranks["agent-c"] > 1


# --- long runs ---------------------------------------------------------------------------


def long_run() -> dict[str, Any]:
    """A run of 64 messages and 50K+ characters, offered 15K characters of tool schemas."""
    tools = [
        {
            "type": "function",
            "function": {
                "name": f"tool_{i}",
                "description": "Looks something up. " * 20,
                "parameters": {
                    "type": "object",
                    "properties": {f"arg_{k}": {"type": "string"} for k in range(8)},
                },
            },
        }
        for i in range(25)
    ]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a support agent."},
        {"role": "user", "content": "Find every open ticket of customer 42 and summarise them."},
    ]
    for i in range(30):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": f"tool_{i % 25}", "arguments": json.dumps({"arg_0": str(i)})},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        result = f"ticket {i}: " + "details of the ticket " * 80
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": result})
    messages.append({"role": "assistant", "content": "Customer 42 has 30 open tickets: ..."})
    case = {"id": "long-1", "messages": messages, "tools": tools}
    assert len(messages) > 60
    assert len(json.dumps(messages)) > 50_000
    assert len(json.dumps(tools)) > 15_000
    return case


def test_a_run_longer_than_the_budget_is_shown_with_its_middle_elided_and_said_so(
    run_cli, tmp_path, judge_server
):
    dataset = write_jsonl(tmp_path / "long.jsonl", [long_run()])
    run = score(run_cli, judge_server, dataset, "trajectory", "run", "--elide-at", "9000")
    assert run.exit_code == 0, run.stderr
    (request,) = judge_server.requests
    prompt = prompt_of(request)
    assert "<elided>\n" in prompt
    assert "--elide-at 9000" in prompt
    # The task, every tool offered and the end of the run are shown; the middle is not.
    assert "Find every open ticket of customer 42" in prompt
    assert all(f"tool_{i}:" in prompt for i in range(25))
    assert "Customer 42 has 30 open tickets" in prompt
    assert "ticket 29:" in prompt
    assert "ticket 3:" not in prompt

    whole = score(run_cli, judge_server, dataset, "trajectory", "whole")
    assert whole.exit_code == 0
    assert "<elided>\n" not in prompt_of(judge_server.requests[-1])


def test_a_run_that_cannot_fit_even_elided_fails_with_the_reason_and_no_call(
    run_cli, tmp_path, judge_server
):
    dataset = write_jsonl(tmp_path / "long.jsonl", [long_run()])
    run = score(run_cli, judge_server, dataset, "trajectory", "run", "--elide-at", "2000")
    assert run.exit_code == 3, run.stderr
    assert judge_server.requests == []
    (result,) = results_of("run").values()
    assert result["status"] == "failed"
    assert "more than --elide-at 2000" in result["error"]


# --- OpenTelemetry exports ---------------------------------------------------------------


def test_an_opentelemetry_export_is_graded_one_case_per_trace(run_cli, tmp_path, judge_server):
    export = tmp_path / "traces.otel.json"
    spans = [*agent_spans(trace="a" * 32, task="t-1"), *agent_spans(trace="b" * 32, task="t-2")]
    export.write_text(json.dumps(document(*spans)))
    run = score(run_cli, judge_server, export, "trajectory", "run")
    assert run.exit_code == 0, run.stderr
    assert run.summary["n_ok"] == 2
    prompt = prompt_of(judge_server.requests[0])
    assert '<tool_call>get_weather({"location":"Paris"})</tool_call>' in prompt
    assert '<tool name="get_weather">' in prompt
    assert set(results_of("run")) == {"a" * 32, "b" * 32}


def test_the_bundled_opentelemetry_exports_are_the_same_runs_as_their_jsonl_lines(
    run_cli, tmp_path, judge_server
):
    export = DATASETS / "agent-b.otel.jsonl"
    field = ["--field", "id=task.id", "--field", "category=task.category"]
    traced = score(run_cli, judge_server, export, "trajectory", "traced", *field)
    assert traced.exit_code == 0, traced.stderr
    ids = set(results_of("traced"))
    lines = write_jsonl(tmp_path / "b.jsonl", [c for c in read_jsonl(AGENT_B) if c["id"] in ids])
    plain = score(run_cli, judge_server, lines, "trajectory", "plain")
    assert plain.exit_code == 0, plain.stderr
    assert len(ids) == 6
    for case_id, result in results_of("plain").items():
        again = results_of("traced")[case_id]
        assert again["case"]["trajectory"] == result["case"]["trajectory"]
        assert again["category"] == result["category"]
    # The same prompts: the second run was answered from the reply cache.
    assert plain.summary["usage"]["cached"] == 6


def test_a_malformed_opentelemetry_export_is_exit_2_naming_the_line(
    run_cli, tmp_path, judge_server
):
    export = tmp_path / "traces.otel.jsonl"
    good = json.dumps(document(*agent_spans()))
    export.write_text(f"{good}\n{json.dumps({'spans': []})}\n")
    run = score(run_cli, judge_server, export, "trajectory", "run")
    assert run.exit_code == 2
    assert "traces.otel.jsonl:2: not an OTLP JSON export of traces" in run.stderr
    assert "hint:" in run.stderr
    assert judge_server.requests == []
    assert not Path("run/results.jsonl").exists()


def test_a_malformed_tool_call_is_exit_2_naming_the_line(run_cli, tmp_path, judge_server):
    good, bad = read_jsonl(AGENT_B)[:2]
    bad["messages"][2]["tool_calls"] = [{"type": "function", "function": {"arguments": "{}"}}]
    dataset = write_jsonl(tmp_path / "runs.jsonl", [good, bad])
    run = score(run_cli, judge_server, dataset, "trajectory", "run")
    assert run.exit_code == 2
    assert "runs.jsonl:2:" in run.stderr
    assert judge_server.requests == []


# --- a real agent framework's export: tau-bench ------------------------------------------


def tau_cases(trial: int) -> list[dict[str, Any]]:
    """tau-bench entries of one trial as judge cases, as docs/agents.md converts them."""
    tools = json.loads((TAU / "airline-tools.json").read_text())
    entries = json.loads((TAU / "gpt-4o-airline.sample.json").read_text())
    return [
        {
            "id": f"task-{entry['task_id']}",
            "messages": entry["traj"],
            "tools": tools,
            "expected_tool_calls": [
                {"name": action["name"], "arguments": action["kwargs"]}
                for action in entry["info"]["task"]["actions"]
            ],
            "reward": entry["reward"],
            "trial": entry["trial"],
        }
        for entry in entries
        if entry["trial"] == trial
    ]


@pytest.fixture
def tau_runs(tmp_path) -> tuple[Path, Path]:
    return (
        write_jsonl(tmp_path / "trial-0.jsonl", tau_cases(0)),
        write_jsonl(tmp_path / "trial-1.jsonl", tau_cases(1)),
    )


def test_tau_bench_runs_are_read_and_graded_as_the_framework_wrote_them(
    run_cli, tmp_path, tau_runs
):
    trial_0, _ = tau_runs
    cases = tau_cases(0)
    # A judge that knows the benchmark's verdict: 5 for a run that reached the goal, else 1.
    truth = write_jsonl(
        tmp_path / "truth.jsonl",
        [{"messages": c["messages"], "label": 5 if c["reward"] == 1 else 1} for c in cases],
    )
    with SimulatorServer(SimulatorConfig(truth_file=truth, truth_field="label")) as server:
        run = score(run_cli, server, trial_0, "trajectory", "run")
        prompts = [prompt_of(r) for r in server.requests]
    assert run.exit_code == 0, run.stderr
    assert run.summary["n_ok"] == len(cases) == 8
    results = results_of("run")
    for case in cases:
        assert results[case["id"]]["passed"] is (case["reward"] == 1), case["id"]
    assert run.summary["pass_rate"] == sum(c["reward"] for c in cases) / len(cases)
    # The 14 airline tools, a transfer that ends the run on a tool result, the think tool's
    # empty result: all shown, fenced.
    assert all(p.count("- book_reservation:") == 1 for p in prompts)
    assert any('<tool name="transfer_to_human_agents">' in p for p in prompts)


def test_tau_bench_trials_compared_warn_of_their_differing_simulated_users(
    run_cli, judge_server, tau_runs
):
    trial_0, trial_1 = tau_runs
    run = run_cli(
        judge_server,
        "pairwise",
        str(trial_0),
        str(trial_1),
        "--rubric",
        "trajectory-pairwise",
        "--out",
        "run",
        "--json",
        "--elide-at",
        "4000",
    )
    assert run.exit_code == 0, run.stderr
    assert "the user turns differ" in run.stderr
    assert run.summary["n_ok"] == 8
    assert len(judge_server.requests) == 16
    # Each run takes ~4,200 tokens, the airline policy and the 14 tools most of them: each
    # side keeps its task and its end, its middle elided and said so.
    elided = [prompt_of(r).count("<elided>\n") for r in judge_server.requests]
    assert all(n >= 1 for n in elided), elided
