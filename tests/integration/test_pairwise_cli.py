from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.conftest import REPO

OLD = REPO / "datasets" / "old.jsonl"
NEW = REPO / "datasets" / "new.jsonl"
REGRESSED = REPO / "datasets" / "regressed.jsonl"


def pairwise(run_cli, server, old=OLD, new=NEW, *extra, out="run", model="openai/sim"):
    return run_cli(
        server,
        "pairwise",
        str(old),
        str(new),
        "--out",
        out,
        "--json",
        "--quiet",
        *extra,
        model=model,
    )


def first_answer(request) -> str:
    return (
        request.body["messages"][-1]["content"].split("<output_a>\n")[1].split("\n</output_a>")[0]
    )


def test_every_pair_is_judged_in_both_orders(run_cli, judge_server):
    run = pairwise(run_cli, judge_server, OLD, NEW, "--limit", "5")
    assert run.exit_code == 0, run.stderr
    s = run.summary
    assert s["command"] == "pairwise"
    assert (s["n_cases"], s["n_ok"]) == (5, 5)
    assert s["wins"] + s["losses"] + s["ties"] == 5
    requests = judge_server.requests
    assert len(requests) == 10
    old_answers = {json.loads(x)["output"] for x in OLD.read_text().splitlines()[:5]}
    firsts = [first_answer(r) in old_answers for r in requests]
    assert firsts.count(True) == 5
    assert firsts.count(False) == 5
    lines = [json.loads(x) for x in Path("run/results.jsonl").read_text().splitlines()]
    assert {j["order"] for j in lines[0]["judgements"]} == {"old-new", "new-old"}
    assert all(x["winner"] in ("old", "new", "tie") and "consistent" in x for x in lines)
    assert all(set(x["lengths"]) == {"old", "new"} for x in lines)


def test_the_gate_passes_with_exit_0_and_fails_with_exit_1(run_cli, judge_server):
    passed = pairwise(run_cli, judge_server, OLD, NEW, "--min-win-rate", "0.55", out="a")
    assert passed.exit_code == 0, passed.stderr
    assert passed.summary["gate"]["passed"] is True
    assert passed.summary["gate"]["on"] == "point"
    assert passed.summary["win_rate"] >= 0.55
    failed = pairwise(run_cli, judge_server, OLD, REGRESSED, "--min-win-rate", "0.55", out="b")
    assert failed.exit_code == 1, failed.stderr
    assert failed.summary["gate"]["passed"] is False
    assert "FAIL" in failed.stderr
    assert Path("b/report.md").read_text().splitlines()[2].startswith("**FAIL")


def test_the_gate_can_compare_the_lower_bound(run_cli, judge_server):
    run = pairwise(run_cli, judge_server, OLD, NEW, "--min-win-rate", "0.55", "--on", "lower-bound")
    gate = run.summary["gate"]
    assert gate["on"] == "lower-bound"
    assert gate["value"] == run.summary["win_rate_ci"][0]
    assert run.exit_code == (0 if gate["value"] >= 0.55 else 1)


def test_gate_command_rechecks_a_saved_summary(run_cli, judge_server):
    first = pairwise(run_cli, judge_server, OLD, NEW)
    assert first.exit_code == 0
    rate = first.summary["win_rate"]
    ok = run_cli(None, "gate", "run/summary.json", "--min-win-rate", str(rate - 0.01))
    assert ok.exit_code == 0, ok.stderr
    assert "PASS" in ok.stdout
    no = run_cli(None, "gate", "run/summary.json", "--min-win-rate", str(rate + 0.01), "--json")
    assert no.exit_code == 1
    assert json.loads(no.stdout)["passed"] is False
    assert len(judge_server.requests) == 60


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param([], "no threshold given", id="no-threshold"),
        pytest.param(
            ["--min-win-rate", "0.5", "--on", "median"], "--on 'median' is not one of", id="bad-on"
        ),
    ],
)
def test_gate_command_usage_errors_exit_2(run_cli, args, message):
    Path("summary.json").write_text("{}")
    run = run_cli(None, "gate", "summary.json", *args)
    assert run.exit_code == 2
    assert message in run.stderr


def test_gate_command_rejects_a_file_that_is_not_a_summary(run_cli):
    Path("summary.json").write_text('{"hello": 1}')
    run = run_cli(None, "gate", "summary.json", "--min-win-rate", "0.5")
    assert run.exit_code == 2
    assert "not a judge summary.json" in run.stderr


def test_a_panel_of_three_judges(run_cli, judge_server):
    run = run_cli(
        judge_server,
        "pairwise",
        str(OLD),
        str(NEW),
        "--out",
        "run",
        "--json",
        "--quiet",
        "--limit",
        "6",
        "--model",
        "openai/judge-a",
        "--model",
        "openai/judge-b",
        model="openai/judge-c",
    )
    assert run.exit_code == 0, run.stderr
    s = run.summary
    assert sorted(s["judges"]) == ["openai/judge-a", "openai/judge-b", "openai/judge-c"]
    assert "fleiss_kappa" in s["inter_judge"]
    assert len(s["inter_judge"]["cohen_kappa"]) == 3
    assert len(judge_server.requests) == 6 * 3 * 2


@pytest.mark.parametrize(
    ("new_line", "messages"),
    [
        pytest.param(
            '{"id": "b", "input": "q", "output": "y"}\n',
            ["do not have the same ids", "--allow-partial"],
            id="ids-differ",
        ),
        pytest.param(
            '{"id": "a", "input": "q2", "output": "y"}\n', ["input differs"], id="inputs-differ"
        ),
    ],
)
def test_old_and_new_that_do_not_pair_up_exit_2_without_calling_the_judge(
    run_cli, judge_server, write, new_line, messages
):
    old = write("old.jsonl", '{"id": "a", "input": "q", "output": "x"}\n')
    new = write("new.jsonl", new_line)
    run = pairwise(run_cli, judge_server, old, new)
    assert run.exit_code == 2
    for message in messages:
        assert message in run.stderr
    assert judge_server.requests == []
    assert not Path("run").exists()


def test_allow_partial_judges_shared_ids_and_reports_the_rest(run_cli, judge_server, write):
    old = write(
        "old.jsonl",
        '{"id": "a", "input": "q", "output": "x"}\n{"id": "b", "input": "q", "output": "x"}\n',
    )
    new = write("new.jsonl", '{"id": "a", "input": "q", "output": "y"}\n')
    run = pairwise(run_cli, judge_server, old, new, "--allow-partial")
    assert run.exit_code == 0, run.stderr
    assert run.summary["n_cases"] == 1
    assert any("only in" in w for w in run.summary["warnings"])


def test_a_pointwise_rubric_is_refused_for_pairwise(run_cli, judge_server):
    run = pairwise(run_cli, judge_server, OLD, NEW, "--rubric", "helpfulness")
    assert run.exit_code == 2
    assert "not pairwise" in run.stderr


def test_no_flip_asks_once_per_pair_and_warns(run_cli, judge_server):
    run = pairwise(run_cli, judge_server, OLD, NEW, "--no-flip", "--limit", "4")
    assert run.exit_code == 0, run.stderr
    assert len(judge_server.requests) == 4
    assert run.summary["flip"] is False
    assert "consistency" not in run.summary
    assert any("--no-flip" in w for w in run.summary["warnings"])


def test_report_goes_to_the_github_step_summary(run_cli, judge_server, monkeypatch, tmp_path):
    step = tmp_path / "step.md"
    step.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    run = pairwise(run_cli, judge_server, OLD, NEW, "--min-win-rate", "0.5", "--limit", "3")
    assert run.exit_code == 0
    text = step.read_text()
    assert text.startswith("earlier step\n# judge pairwise")
    assert "**PASS" in text


def test_self_preference_is_warned_about(run_cli, judge_server, write):
    old = write("old.jsonl", '{"id": "a", "input": "q", "output": "x", "model": "gpt-4o"}\n')
    new = write("new.jsonl", '{"id": "a", "input": "q", "output": "y", "model": "sim"}\n')
    run = pairwise(run_cli, judge_server, old, new)
    assert any("self-preference" in w for w in run.summary["warnings"])


def test_bad_flip_policy_exits_2(run_cli, judge_server):
    run = pairwise(run_cli, judge_server, OLD, NEW, "--flip-policy", "coin")
    assert run.exit_code == 2
    assert "--flip-policy 'coin' is not one of: tie, drop, vote" in run.stderr
