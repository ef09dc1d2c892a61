"""`--screen`/`--escalate` through the real CLI, LiteLLM and the simulator serving two judges
of different quality: a noisy cheap screen (`cheap`) and a sharp strong judge (`sharp`).

What is checked against the server's own request log, never against judge's word: the
strong judge sees exactly the cases whose screen verdict meets the rule (recomputed here by
hand from the screen's recorded replies), the reported spend per tier and the all-strong
estimate equal the token arithmetic at the given prices, and the cascade improves on the
screen alone where the truth is known.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from judgecli.simulator.config import JudgeProfile
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from judgecli.store import read_results
from tests.integration.conftest import REPO

N_CASES = 120
STRONG_PRICE = (10.0, 30.0)  # USD per million tokens in, out
SCREEN_PRICE = (0.5, 1.5)
RUBRIC = """\
name: graded
kind: pointwise
scale: {min: 1, max: 5}
pass_at: 3
confidence: true
prompt:
  user: "Question: {input}\\nAnswer: {output}"
"""


@pytest.fixture(scope="module")
def truth_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """N_CASES answers with true scores 1-5 (seeded)."""
    rng = random.Random(7)
    path = tmp_path_factory.mktemp("cascade") / "cases.jsonl"
    lines = [
        json.dumps(
            {
                "id": f"c{i:03d}",
                "input": f"Question number {i}?",
                "output": f"Answer {i}: " + " ".join(rng.choice("abcdefgh") * 3 for _ in range(6)),
                "label": rng.randint(1, 5),
            }
        )
        for i in range(N_CASES)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def two_judges(truth_file: Path):
    """One server, two judges: `cheap` answers a wrong label 40% of the time, `sharp` never."""
    config = SimulatorConfig(
        truth_file=truth_file,
        profiles={"cheap": JudgeProfile(noise=0.4), "sharp": JudgeProfile(noise=0.0)},
    )
    with SimulatorServer(config) as server:
        yield server


@pytest.fixture
def server(two_judges: SimulatorServer) -> SimulatorServer:
    two_judges.reset()
    return two_judges


def cascade_args(out: str, *extra: str) -> list[str]:
    return [
        "--screen",
        "openai/cheap",
        "--screen-price",
        ",".join(map(str, SCREEN_PRICE)),
        "--price",
        ",".join(map(str, STRONG_PRICE)),
        "--out",
        out,
        "--quiet",
        "--json",
        *extra,
    ]


@pytest.fixture
def score_words(truth_file: Path, tmp_path: Path) -> list[str]:
    """`judge score` on the truth file with the graded rubric (written here); flags follow."""
    rubric = tmp_path / "graded.yaml"
    rubric.write_text(RUBRIC, encoding="utf-8")
    return ["score", str(truth_file), "--rubric", str(rubric)]


@pytest.fixture
def cascade(server: SimulatorServer, run_cli, score_words: list[str]):
    """cascade(out, *extra): the score run screened by `cheap` and escalated to `sharp`."""

    def _run(out: str, *extra: str):
        return run_cli(server, *score_words, *cascade_args(out, *extra), model="openai/sharp")

    return _run


def asked(server: SimulatorServer, model: str) -> Counter[str]:
    """How often each answer's case was sent to `model` (from the server's log)."""
    seen: Counter[str] = Counter()
    for request in server.requests:
        if request.model == model and request.status == 200:
            text = request.body["messages"][-1]["content"]
            seen[text.split("<output>\n", 1)[1].split(":", 1)[0]] += 1
    return seen


def screen_said(result) -> tuple[bool, float | None, float | None]:
    """(failed, score, confidence) of the screen, read from its recorded reply."""
    screen = result.screen if result.screen is not None else result
    reply = screen.judgements[0]
    if reply.verdict is None:
        return True, None, None
    return False, reply.verdict.score, reply.verdict.confidence


def test_the_strong_judge_sees_exactly_the_cases_the_rule_picks(server, cascade):
    rule = "failed or score in [2, 3] or confidence < 0.8"
    run = cascade("run", "--escalate", rule)
    assert run.exit_code == 0, run.stderr
    results = {r.id: r for r in read_results(Path("run/results.jsonl"))}
    assert len(results) == N_CASES

    def by_rule(r) -> bool:
        failed, score, confidence = screen_said(r)
        return (
            failed
            or (score is not None and 2 <= score <= 3)
            or (confidence is not None and confidence < 0.8)
        )

    picked = {case_id for case_id, r in results.items() if by_rule(r)}
    answers = {r.id: f"Answer {int(r.id[1:])}" for r in results.values()}
    strong_asked = asked(server, "sharp")
    assert set(asked(server, "cheap").values()) == {1}  # every case screened once
    assert len(asked(server, "cheap")) == N_CASES
    assert set(strong_asked) == {answers[i] for i in picked}
    assert set(strong_asked.values()) == {1}
    for case_id, r in results.items():
        assert r.tier == ("strong" if case_id in picked else "screen")
        assert (r.screen is not None) == (case_id in picked)
    # Noise 0.4 with flipped answers below 0.8 confidence: a real share escalates, not all.
    assert 0.3 * N_CASES < len(picked) < 0.9 * N_CASES

    cascade = run.summary["cascade"]
    assert cascade["escalated"] == len(picked)
    assert cascade["rule"] == "failed or score in [2, 3] or confidence < 0.8"
    info = json.loads(Path("run/run.json").read_text())
    assert info["screen"]["name"] == "openai/cheap"
    assert info["config"]["escalate"] == cascade["rule"]


def test_spend_per_tier_and_savings_are_the_token_arithmetic(server, cascade):
    run = cascade("run")
    assert run.exit_code == 0, run.stderr
    results = list(read_results(Path("run/results.jsonl")))
    cascade = run.summary["cascade"]

    def usd(tokens_in: int, tokens_out: int, price: tuple[float, float]) -> float:
        return (tokens_in * price[0] + tokens_out * price[1]) / 1e6

    screen_calls = [j for r in results for j in (r.screen or r).judgements]
    strong_calls = [j for r in results if r.tier == "strong" for j in r.judgements]
    assert strong_calls  # some cases escalate: both tiers' arithmetic is checked
    assert all(j.model == "openai/cheap" for j in screen_calls)
    assert all(j.model == "openai/sharp" for j in strong_calls)
    screen_cost = sum(usd(j.prompt_tokens, j.completion_tokens, SCREEN_PRICE) for j in screen_calls)
    strong_cost = sum(usd(j.prompt_tokens, j.completion_tokens, STRONG_PRICE) for j in strong_calls)
    # The server's token counts, priced by hand, are what each tier is said to have cost.
    assert cascade["tiers"]["screen"]["cost_usd"] == pytest.approx(screen_cost, rel=1e-9)
    assert cascade["tiers"]["strong"]["cost_usd"] == pytest.approx(strong_cost, rel=1e-9)
    assert cascade["tiers"]["screen"]["calls"] == len(asked_requests(server, "cheap"))
    assert cascade["tiers"]["strong"]["calls"] == len(asked_requests(server, "sharp"))
    kept = [j for r in results if r.tier == "screen" for j in r.judgements]
    all_strong = strong_cost + sum(
        usd(j.prompt_tokens, j.completion_tokens, STRONG_PRICE) for j in kept
    )
    assert cascade["all_strong_cost_usd"] == pytest.approx(all_strong, rel=1e-9)
    assert cascade["saved_usd"] == pytest.approx(all_strong - screen_cost - strong_cost, rel=1e-9)
    assert run.summary["usage"]["cost_usd"] == pytest.approx(screen_cost + strong_cost, rel=1e-9)
    assert cascade["saved_usd"] > 0
    report = Path("run/report.md").read_text()
    assert "## Cost per tier" in report
    assert f"${cascade['saved_usd']:.4f}" in report


def asked_requests(server: SimulatorServer, model: str) -> list[object]:
    return [r for r in server.requests if r.model == model]


def test_the_cascade_is_closer_to_the_truth_than_the_screen_alone(
    server, run_cli, cascade, score_words, truth_file
):
    labels = {
        json.loads(line)["id"]: json.loads(line)["label"]
        for line in truth_file.read_text().splitlines()
    }
    alone = run_cli(server, *score_words, "--out", "alone", "--quiet", model="openai/cheap")
    tiered = cascade("tiered")
    assert alone.exit_code == tiered.exit_code == 0

    def exact(run_dir: str) -> int:
        return sum(r.score == labels[r.id] for r in read_results(Path(run_dir, "results.jsonl")))

    # The screen alone is right on about 60%; its wrong answers state low confidence, which
    # the default rule escalates, so the cascade gets (nearly) all of them right.
    assert exact("alone") < 0.75 * N_CASES
    assert exact("tiered") == N_CASES
    agreement = tiered.summary["cascade"]["agreement"]
    assert agreement["on"] == "pass/fail"
    assert agreement["n"] == tiered.summary["cascade"]["escalated"]


def test_a_re_run_is_answered_from_the_cache_with_the_same_tiers(server, cascade):
    first = cascade("one")
    server.reset()
    again = cascade("two")
    assert first.exit_code == again.exit_code == 0
    assert server.requests == []
    tiers = [{r.id: r.tier for r in read_results(Path(d, "results.jsonl"))} for d in ("one", "two")]
    assert tiers[0] == tiers[1]


PAIR_OLD = REPO / "datasets" / "pairwise-old.jsonl"
PAIR_NEW = REPO / "datasets" / "pairwise-new.jsonl"


def test_pairwise_escalates_position_inconsistent_screens(run_cli):
    config = SimulatorConfig(profiles={"cheap": JudgeProfile(position_bias=0.9)})
    with SimulatorServer(config) as server:
        run = run_cli(
            server,
            "pairwise",
            str(PAIR_OLD),
            str(PAIR_NEW),
            "--screen",
            "openai/cheap",
            "--out",
            "pw",
            "--quiet",
            "--json",
            model="openai/sharp",
        )
        requests = list(server.requests)
    assert run.exit_code == 0, run.stderr
    results = list(read_results(Path("pw/results.jsonl")))

    def unsure(r) -> bool:
        screen = r.screen or r
        return screen.status == "failed" or not screen.consistent

    picked = {r.id for r in results if unsure(r)}
    assert picked == {r.id for r in results if r.tier == "strong"}
    assert 0 < len(picked) < len(results)
    per_model = Counter(r.model for r in requests)
    assert per_model["cheap"] == 2 * len(results)  # both orders, every pair
    assert per_model["sharp"] == 2 * len(picked)  # both orders, escalated pairs only
    assert run.summary["cascade"]["rule"] == "failed or not consistent"
    assert any(r.screen is not None and r.screen.consistent is False for r in results)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--screen", "openai/cheap", "--escalate", "score <"], "expected a number"),
        (["--screen", "openai/cheap", "--escalate", "colour == red"], "colour"),
        (["--screen", "openai/cheap", "--escalate", "not consistent"], "pairwise"),
        (["--escalate", "score < 2"], "--escalate goes with --screen"),
        (["--screen-price", "1,2"], "--screen-price goes with --screen"),
        (["--screen", "openai/sim"], "is also a --model judge"),
    ],
)
def test_a_bad_cascade_is_one_line_exit_2_and_nothing_sent(
    judge_server, run_cli, cases_file, flags, message
):
    run = run_cli(
        judge_server, "score", str(cases_file), "--rubric", "helpfulness", "--out", "bad", *flags
    )
    assert run.exit_code == 2
    assert message in run.stderr
    assert run.stderr.startswith("error:")
    assert "Traceback" not in run.stderr
    assert judge_server.requests == []
    assert not Path("bad").exists()


def test_resuming_with_another_rule_is_refused(server, run_cli, cascade, score_words):
    first = cascade("run", "--limit", "5")
    assert first.exit_code == 0
    again = run_cli(
        server,
        *score_words,
        "--limit",
        "5",
        "--screen",
        "openai/cheap",
        "--escalate",
        "failed",
        "--resume",
        "run",
        model="openai/sharp",
    )
    assert again.exit_code == 2
    assert "escalating on" in again.stderr


def test_review_export_sends_the_cases_screen_and_strong_disagree_on_to_humans(run_cli, cascade):
    run = cascade("run")
    assert run.exit_code == 0, run.stderr
    disagree = {
        r.id
        for r in read_results(Path("run/results.jsonl"))
        if r.screen is not None and r.screen.status == "ok" and r.screen.passed != r.passed
    }
    assert disagree  # the noisy screen crosses the pass line on some escalated cases
    sheet = run_cli(
        None,
        "review",
        "export",
        "run",
        "--sample",
        "1",
        "--include",
        "disagreement",
        "--format",
        "jsonl",
        "--out",
        "review.jsonl",
    )
    assert sheet.exit_code == 0, sheet.stderr
    rows = [json.loads(line) for line in Path("review.jsonl").read_text().splitlines()]
    included = {r["id"] for r in rows if "disagreement" in r["reason"]}
    assert included == disagree


def test_a_budget_stop_then_resume_pays_each_tier_once_per_case(server, run_cli, cascade):
    stopped = cascade("run", "--no-cache", "--max-cost", "0.01", "-c", "4")
    assert stopped.exit_code == 3, stopped.stderr
    assert "judge resume" in stopped.stderr
    resumed = run_cli(None, "resume", "run", "--max-cost", "10")
    assert resumed.exit_code == 0, resumed.stderr
    results = list(read_results(Path("run/results.jsonl")))
    assert len(results) == len({r.id for r in results}) == N_CASES
    escalated = sum(r.tier == "strong" for r in results)
    # In-flight cases at the stop may be asked again (at most the concurrency, 4).
    assert N_CASES <= len(asked_requests(server, "cheap")) <= N_CASES + 4
    assert escalated <= len(asked_requests(server, "sharp")) <= escalated + 4
    assert json.loads(Path("run/summary.json").read_text())["cascade"]["escalated"] == escalated
