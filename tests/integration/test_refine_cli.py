"""`judge refine` through the real CLI and LiteLLM, with the simulator as both generator
(openai/gen-sim: vague at first, better with each feedback round) and judge (openai/sim).

With the helpfulness rubric (1-4, pass_at 3) the simulator's first draft always scores
1-2, its third always 3-4, so every case fails at attempt 1 and passes by attempt 3.
"""

from __future__ import annotations

import json
from pathlib import Path

CASES = [
    {"id": "vaccines", "input": "How do vaccines train the immune system to recognise a virus?"},
    {"id": "bread", "input": "Why does bread dough rise when yeast is added?"},
    {"id": "tides", "input": "What causes ocean tides on Earth?", "category": "science"},
]
GENERATOR = "gen-sim"  # what the server sees of openai/gen-sim


def write_cases(path: str = "prompts.jsonl") -> str:
    Path(path).write_text("".join(json.dumps(c) + "\n" for c in CASES))
    return path


def refine(run_cli, server, *extra, out="run", model="openai/sim"):
    return run_cli(
        server,
        "refine",
        write_cases(),
        "--rubric",
        "helpfulness",
        "--generator",
        "openai/gen-sim",
        "--out",
        out,
        "--json",
        "--quiet",
        *extra,
        model=model,
    )


def lines(path: str) -> list[dict]:
    return [json.loads(x) for x in Path(path).read_text().splitlines()]


def generations(server) -> list[dict]:
    return [r.body for r in server.requests if r.model == GENERATOR]


def test_attempts_stop_at_success(run_cli, judge_server):
    result = refine(run_cli, judge_server)
    assert result.exit_code == 0, result.stderr
    summary = result.summary
    assert summary["command"] == "refine"
    assert (summary["pass_rate_first"], summary["pass_rate_final"]) == (0.0, 1.0)
    assert summary["lift"] > 0
    assert summary["never_passed"] == []
    results = lines("run/results.jsonl")
    for line in results:
        passed = [a["passed"] for a in line["attempts"]]
        assert passed[-1] is True
        assert not any(passed[:-1])  # stopped at the first success
        assert 2 <= len(passed) <= 3
    attempts = sum(len(line["attempts"]) for line in results)
    assert len(generations(judge_server)) == attempts
    assert summary["mean_attempts"] == attempts / 3
    for request in generations(judge_server):
        assert "response_format" not in request  # a generator is never asked for a verdict
    answers = lines("run/answers.jsonl")
    assert [a["id"] for a in answers] == [c["id"] for c in CASES]
    assert all(a["passed"] and a["outcome"] == "passed" for a in answers)
    assert answers[2]["category"] == "science"
    assert {"report.md", "report.html", "results.junit.xml", "summary.json"} <= {
        p.name for p in Path("run").iterdir()
    }
    assert "Scores per attempt" in Path("run/report.md").read_text()


def test_exhausted_cases_keep_the_last_answer(run_cli, judge_server):
    result = refine(run_cli, judge_server, "--max-attempts", "1")
    assert result.exit_code == 0, result.stderr
    assert result.summary["pass_rate_final"] == 0.0
    # Listed in natural id order: results.jsonl holds cases in the order they finished.
    assert result.summary["never_passed"] == sorted(c["id"] for c in CASES)
    assert len(generations(judge_server)) == 3
    answers = lines("run/answers.jsonl")
    assert [(a["output"], a["passed"], a["attempts"], a["outcome"]) for a in answers] == [
        ("It depends.", False, 1, "exhausted")
    ] * 3


def test_the_judges_feedback_reaches_the_generators_next_request(run_cli, judge_server):
    refine(run_cli, judge_server, "--feedback-template", "Draft: {answer}\nReview: {feedback}")
    retries = [
        body["messages"][-1]["content"]
        for body in generations(judge_server)
        if body["messages"][-1]["content"].startswith(CASES[1]["input"])
        and "Review:" in body["messages"][-1]["content"]
    ]
    assert retries, "no retry was sent for the bread case"
    first_verdict = lines("run/results.jsonl")
    bread = next(line for line in first_verdict if line["id"] == "bread")
    feedback = bread["attempts"][0]["feedback"]
    assert feedback.startswith("Simulated feedback")
    assert f"Draft: It depends.\nReview: {feedback}" in retries[0]


def test_answers_are_valid_input_for_judge_score(run_cli, judge_server):
    refine(run_cli, judge_server)
    scored = run_cli(
        judge_server,
        "score",
        "run/answers.jsonl",
        "--rubric",
        "helpfulness",
        "--out",
        "scored",
        "--json",
        "--quiet",
    )
    assert scored.exit_code == 0, scored.stderr
    assert scored.summary["n_ok"] == 3
    assert scored.summary["pass_rate"] == 1.0


def test_resume_does_not_regenerate_finished_cases(run_cli, judge_server):
    first = refine(run_cli, judge_server, "--no-cache", "--concurrency", "1")
    assert first.exit_code == 0, first.stderr
    kept, *rest = Path("run/results.jsonl").read_text().splitlines(keepends=True)
    # As if the run had been interrupted after its first case.
    Path("run/results.jsonl").write_text(kept)
    judge_server.reset()
    resumed = refine(run_cli, judge_server, "--no-cache", "--resume", "run", out="run")
    assert resumed.exit_code == 0, resumed.stderr
    regenerated = {json.loads(line)["id"] for line in rest}
    sent = generations(judge_server)
    assert len(sent) == sum(len(json.loads(line)["attempts"]) for line in rest)
    assert all(
        any(
            body["messages"][-1]["content"].startswith(c["input"])
            for c in CASES
            if c["id"] in regenerated
        )
        for body in sent
    )
    assert resumed.summary["n_cases"] == 3
    assert len(lines("run/answers.jsonl")) == 3
    judge_server.reset()
    finished = refine(run_cli, judge_server, "--resume", "run", out="run")
    assert finished.exit_code == 0, finished.stderr
    assert judge_server.requests == []  # a finished run sends nothing


def test_a_resumed_case_is_served_from_the_cache(run_cli, judge_server):
    refine(run_cli, judge_server)
    kept = Path("run/results.jsonl").read_text().splitlines(keepends=True)[0]
    Path("run/results.jsonl").write_text(kept)
    judge_server.reset()
    resumed = refine(run_cli, judge_server, "--resume", "run", out="run")
    assert resumed.exit_code == 0, resumed.stderr
    assert judge_server.requests == []  # identical generations and verdicts cost nothing
    redone = lines("run/results.jsonl")[1:]
    assert len(redone) == 2
    assert all(a["generation"]["cached"] for line in redone for a in line["attempts"])


def test_the_same_model_as_generator_and_judge_is_allowed_but_warned(run_cli, judge_server):
    result = refine(run_cli, judge_server, model="openai/gen-sim")
    assert result.exit_code == 0, result.stderr
    assert "self-preference" in result.stderr
    assert any("self-preference" in w for w in result.summary["warnings"])
    assert result.summary["models"] == ["openai/gen-sim"]


def test_a_bad_feedback_template_is_exit_2_before_any_call(run_cli, judge_server):
    result = refine(run_cli, judge_server, "--feedback-template", "Improve: {critique}")
    assert result.exit_code == 2
    assert "error: --feedback-template uses {critique}" in result.stderr
    assert judge_server.requests == []
    assert not Path("run").exists()


def test_a_pairwise_rubric_is_exit_2(run_cli, judge_server):
    result = run_cli(
        judge_server,
        "refine",
        write_cases(),
        "--rubric",
        "pairwise",
        "--generator",
        "openai/gen-sim",
        "--out",
        "run",
    )
    assert result.exit_code == 2
    assert "pairwise" in result.stderr
    assert judge_server.requests == []
