"""`judge arena` through the real CLI and LiteLLM against the simulator: systems of known
answer quality come out in order, each schedule makes exactly the calls it should (none on
a cached re-run), the gate exits 1 or 0 as the evidence says, bad input exits 2 before
anything is written, and a run that lost a comparison exits 3 and resumes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.conftest import write_jsonl

TOPICS = ("tides", "rainbows", "volcanoes", "magnets", "glaciers", "eclipses")
LONG = (
    "{topic} work through a clear mechanism, explained step by step with an example, the "
    "reasons behind it, and what to check next. "
)
LEVELS = {
    # The simulator scores on-topic, longer answers higher (simulator/verdicts.py).
    "evasive": lambda topic: "I don't know.",
    "terse": lambda topic: f"{topic.capitalize()} are a topic.",
    "fair": lambda topic: f"{topic.capitalize()} work because of forces acting on {topic}.",
    "thorough": lambda topic: LONG.format(topic=topic.capitalize()) * 2,
}
BEST_FIRST = ["thorough", "fair", "terse", "evasive"]
CASES = 10


def write_systems(names=tuple(LEVELS), cases: int = CASES, drop: dict[str, str] | None = None):
    """One file per system, named after it, answering the same questions at its level
    (`drop`: system → an id left out of its file)."""
    paths = []
    for name in names:
        rows = [
            {
                "id": f"q-{i}",
                "input": f"Question q-{i}: how do {TOPICS[i % len(TOPICS)]} work?",
                "output": LEVELS[name](TOPICS[i % len(TOPICS)]),
            }
            for i in range(cases)
            if (drop or {}).get(name) != f"q-{i}"
        ]
        paths.append(str(write_jsonl(Path(f"{name}.jsonl"), rows)))
    return paths


def arena(run_cli, server, files, *extra, out="run"):
    return run_cli(server, "arena", *files, "--out", out, "--json", "--quiet", *extra)


def results(out="run") -> list[dict]:
    return [json.loads(line) for line in Path(out, "results.jsonl").read_text().splitlines()]


def test_systems_of_known_quality_come_out_in_order(run_cli, judge_server):
    run = arena(run_cli, judge_server, write_systems())
    assert run.exit_code == 0, run.stderr
    s = run.summary
    board = s["leaderboard"]
    assert [x["name"] for x in board] == BEST_FIRST
    assert all({"name", "score", "score_ci", "rank"} <= set(x) for x in board)
    assert [x["rank"] for x in board] == sorted(x["rank"] for x in board)
    assert board[0]["score_ci"][0] > board[-1]["score_ci"][1]
    assert s["schedule"] == {"kind": "round-robin", "pairs": 6, "planned": 6 * CASES}
    assert (s["n_cases"], s["n_comparisons"], s["n_failed"]) == (CASES, 6 * CASES, 0)
    assert s["win_rate_matrix"]["thorough"]["evasive"] == 1.0
    # Every comparison in both orders, and results.jsonl says which systems each is.
    assert len(judge_server.requests) == 6 * CASES * 2
    lines = results()
    assert len(lines) == 6 * CASES
    first = next(x for x in lines if x["id"] == "q-0::evasive::thorough")
    assert first["systems"] == {"old": "evasive", "new": "thorough"}
    assert (first["case_id"], first["winner"], first["winner_system"]) == ("q-0", "new", "thorough")
    assert {j["order"] for j in first["judgements"]} == {"old-new", "new-old"}
    report = Path("run/report.md").read_text()
    assert report.splitlines()[2].startswith("**1. thorough")
    assert Path("run/report.html").read_text().count("<svg") == 2


def test_the_baseline_schedule_compares_each_system_with_the_baseline_only(run_cli, judge_server):
    files = write_systems(("terse", "fair", "thorough"))
    run = arena(run_cli, judge_server, files, "--baseline", "terse")
    assert run.exit_code == 0, run.stderr
    assert len(judge_server.requests) == (3 - 1) * CASES * 2
    s = run.summary
    assert s["schedule"]["kind"] == "baseline"
    assert s["anchor"] == "terse"
    terse = next(x for x in s["leaderboard"] if x["name"] == "terse")
    assert terse["score"] == 1000.0
    assert s["win_rate_matrix"]["fair"]["thorough"] is None  # never compared
    assert {tuple(sorted(x["systems"].values())) for x in results()} == {
        ("fair", "terse"),
        ("terse", "thorough"),
    }


def test_a_cached_rerun_makes_no_calls_and_gives_the_same_leaderboard(run_cli, judge_server):
    files = write_systems(("evasive", "fair", "thorough"))
    first = arena(run_cli, judge_server, files, out="a")
    assert first.exit_code == 0, first.stderr
    calls = len(judge_server.requests)
    assert calls == 3 * CASES * 2
    again = arena(run_cli, judge_server, files, out="b")
    assert again.exit_code == 0, again.stderr
    assert len(judge_server.requests) == calls
    assert again.summary["usage"]["cached"] == calls
    assert again.summary["leaderboard"] == first.summary["leaderboard"]


def test_the_beats_gate_exits_0_when_won_and_1_when_not(run_cli, judge_server):
    files = write_systems(("evasive", "fair", "thorough"))
    won = arena(run_cli, judge_server, files, "--beats", "evasive", "--min-rank", "1", out="a")
    assert won.exit_code == 0, won.stderr
    gate = won.summary["gate"]
    assert (gate["passed"], gate["system"], gate["leaderboard"]) == (True, "thorough", "raw")
    assert gate["checks"][0] == {
        "check": "beats",
        "against": "evasive",
        "value": 1.0,
        "threshold": 0.95,
        "passed": True,
    }
    lost = arena(run_cli, judge_server, files, "--for", "evasive", "--beats", "fair", out="b")
    assert lost.exit_code == 1, lost.stderr
    assert lost.summary["gate"]["passed"] is False
    assert "FAIL — evasive: beats fair" in lost.stderr
    assert Path("b/report.md").read_text().splitlines()[2].startswith("**FAIL")


def test_ids_missing_from_one_file_exit_2_and_write_nothing(run_cli, judge_server):
    files = write_systems(("terse", "fair", "thorough"), drop={"thorough": "q-3"})
    run = arena(run_cli, judge_server, files)
    assert run.exit_code == 2
    assert "1 id only in terse.jsonl ('q-3')" in run.stderr
    assert "--allow-partial" in run.stderr
    assert not Path("run").exists()
    assert judge_server.requests == []
    partial = arena(run_cli, judge_server, files, "--allow-partial")
    assert partial.exit_code == 0, partial.stderr
    assert partial.summary["n_comparisons"] == 3 * CASES - 2  # q-3 only for terse vs fair


def test_bad_usage_exits_2_before_any_call(run_cli, judge_server):
    files = write_systems(("terse", "fair"))
    for extra, said in [
        (["--beats", "nobody"], "--beats 'nobody' is not one of the systems"),
        (["--name", "a", "--name", "a"], "two systems are named 'a'"),
        (["--budget", "5"], "--budget apply to the adaptive schedule"),
        (["--schedule", "sideways"], "--schedule 'sideways' is not one of"),
        (["--rubric", "helpfulness"], "not pairwise"),
    ]:
        run = arena(run_cli, judge_server, files, *extra)
        assert run.exit_code == 2, (extra, run.stderr)
        assert said in run.stderr, run.stderr
    assert judge_server.requests == []
    assert not Path("run").exists()


def test_the_adaptive_schedule_judges_its_budget_and_no_more(run_cli, judge_server):
    files = write_systems(cases=12)
    run = arena(run_cli, judge_server, files, "--schedule", "adaptive", "--budget", "30")
    assert run.exit_code == 0, run.stderr
    s = run.summary
    assert s["schedule"]["kind"] == "adaptive"
    assert (s["schedule"]["budget"], s["schedule"]["planned"], s["n_comparisons"]) == (30, 30, 30)
    assert s["schedule"]["rounds"] > 1
    assert len(judge_server.requests) == 30 * 2
    assert [x["name"] for x in s["leaderboard"]][0] == "thorough"
    # Each later round reopened the one run, as a resume does.
    info = json.loads(Path("run/run.json").read_text())
    assert len(info["resumed"]) == s["schedule"]["rounds"] - 1


def test_an_arena_says_what_the_spine_says_of_every_run(run_cli, judge_server):
    # Issue 30: the arena concluded by itself, and its summary left out the spine's warning
    # of --repeats at temperature 0 (which score, pairwise, calibrate and refine carry).
    files = write_systems(("terse", "fair"), cases=3)
    run = arena(run_cli, judge_server, files, "--repeats", "2")
    assert run.exit_code == 0, run.stderr
    said = [w for w in run.summary["warnings"] if w.startswith("--repeats 2 at temperature 0")]
    assert len(said) == 1
    assert said[0] in Path("run/report.md").read_text()


def test_style_control_adds_a_second_leaderboard_and_its_coefficients(run_cli, judge_server):
    run = arena(
        run_cli, judge_server, write_systems(("terse", "fair", "thorough")), "--style-control"
    )
    assert run.exit_code == 0, run.stderr
    style = run.summary["style_control"]
    assert set(style["covariates"]) == {"length", "markdown"}
    assert style["covariates"]["markdown"] == {"estimate": None, "ci": [None, None], "unit": None}
    assert {x["name"] for x in style["leaderboard"]} == {"terse", "fair", "thorough"}


def test_a_lost_comparison_makes_the_run_incomplete_and_resume_finishes_it(run_cli, judge_server):
    files = write_systems(("terse", "fair", "thorough"), cases=4)
    judge_server.enqueue("Both answers are fine.")  # prose, not the verdict JSON
    run = arena(
        run_cli,
        judge_server,
        files,
        "--concurrency",
        "1",
        "--max-retries",
        "0",
        "--max-failures",
        "0",
        "--beats",
        "terse",
    )
    assert run.exit_code == 3, run.stderr
    assert run.summary["incomplete"].startswith("the judge could not grade 1 of")
    assert "gate" not in run.summary
    resumed = run_cli(None, "resume", "run", "--retry-failed")
    assert resumed.exit_code == 0, resumed.stderr
    summary = json.loads(Path("run/summary.json").read_text())
    assert (summary["n_comparisons"], summary["n_failed"]) == (12, 0)
    assert summary["gate"]["passed"] is True
