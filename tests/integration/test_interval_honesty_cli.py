"""Issue 29 through the CLI: no interval claims certainty it does not have (review findings 4
and 14). A calibrate gate on 5 agreeing labels, the "cases needed" advice at a 100% win rate,
and a judge that gave 7 of 8 cases the same score, as a user runs them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.conftest import REPO, write_jsonl

FIVE = ("p-01", "p-02", "p-03", "p-05", "p-06")


def subset(name: str, ids: tuple[str, ...]) -> Path:
    rows = [json.loads(line) for line in (REPO / "datasets" / f"{name}.jsonl").open()]
    return write_jsonl(Path(f"{name}5.jsonl"), [r for r in rows if r["id"] in ids])


@pytest.fixture
def five_pairs(run_cli, judge_server):
    """`judge pairwise` on the review's 5 pairs, which the simulator's NEW wins all of,
    gated at --min-win-rate 0.9 on the lower bound (review finding 14's reproducer).
    """
    return run_cli(
        judge_server,
        "pairwise",
        str(subset("old", FIVE)),
        str(subset("new", FIVE)),
        "--rubric",
        "pairwise",
        "--min-win-rate",
        "0.9",
        "--on",
        "lower-bound",
        "--out",
        "pw5",
        "--json",
        "--quiet",
    )


def test_five_wins_of_five_need_35_cases_not_1(five_pairs):
    # Issue 29 (finding 14): "about 1 cases in all" (the Wald variance is 0 at 100%). The
    # gate's interval at 5 of 5 is Wilson's, and its lower bound k/(k + z²) first reaches 0.9
    # at k = 35 (35/38.84 = 0.9011; 34/37.84 = 0.8985).
    assert five_pairs.exit_code == 1, five_pairs.stderr
    s = five_pairs.summary
    assert (s["wins"], s["losses"], s["ties"]) == (5, 0, 0)
    assert s["win_rate_ci"] == pytest.approx([0.5655175352168252, 1.0], abs=1e-12)
    assert s["gate"]["cases_needed"] == 35
    assert "about 35 cases in all (now 5 + 0 + 0)" in Path("pw5/report.md").read_text()


def test_five_agreeing_labels_do_not_pass_a_lower_bound_gate_at_0_9(run_cli, five_pairs):
    # Issue 29 (finding 4): "accuracy 100.0% [100.0%, 100.0%]" passed --min-accuracy 0.9
    # --on lower-bound (exit 0). 5 of 5 is Wilson [56.6%, 100%]: not met, exit 1.
    assert five_pairs.exit_code == 1, five_pairs.stderr
    labels = write_jsonl(Path("five.jsonl"), [{"id": i, "label": "new"} for i in FIVE])
    run = run_cli(
        None,
        "calibrate",
        "--results",
        "pw5/results.jsonl",
        "--labels",
        str(labels),
        "--min-accuracy",
        "0.9",
        "--on",
        "lower-bound",
        "--out",
        "cal5",
        "--json",
        "--quiet",
    )
    assert run.exit_code == 1, run.stderr
    s = run.summary
    assert s["accuracy"] == 1.0
    assert s["accuracy_ci"] == pytest.approx([0.5655175352168252, 1.0], abs=1e-12)
    assert s["gate"]["value"] == pytest.approx(0.5655175352168252)
    assert "accuracy 100.0% [56.6%, 100.0%]" in Path("cal5/report.md").read_text()


HUMAN = [2, 4, 1, 3, 4, 2, 3, 1]
JUDGE = [1, 1, 1, 1, 1, 1, 1, 3]


def test_a_judge_that_scored_7_of_8_cases_alike_has_no_correlation_interval(run_cli, write):
    # Issue 29: on llama.cpp such a judge got Spearman −0.48 [−1.00, −0.31], significance
    # from one case. Now: no interval, the reason in summary.json and in every report.
    cases = [json.loads(line) for line in (REPO / "datasets" / "example.jsonl").open()][:8]
    fields = [{k: c[k] for k in ("id", "input", "output")} for c in cases]
    truth = write_jsonl(
        Path("judge.jsonl"), [f | {"label": j} for f, j in zip(fields, JUDGE, strict=True)]
    )
    human = write_jsonl(
        Path("human.jsonl"), [f | {"label": h} for f, h in zip(fields, HUMAN, strict=True)]
    )
    with SimulatorServer(SimulatorConfig(truth_file=truth)) as server:
        run = run_cli(
            server,
            "calibrate",
            str(human),
            "--rubric",
            "helpfulness",
            "--out",
            "cal8",
            "--json",
            "--quiet",
        )
    assert run.exit_code == 0, run.stderr
    s = run.summary
    assert s["spearman"] < 0
    reason = (
        "too few informative cases: the judge's score is 1 on 7 of 8 cases (an interval "
        "needs 3 cases off each side's most common)"
    )
    for name in ("spearman", "kendall", "pearson", "cohen_kappa", "weighted_kappa"):
        assert s[f"{name}_ci"] == [None, None], name
        assert s["no_interval"][name] == reason
    assert s["accuracy_ci"][0] < s["accuracy_ci"][1]
    assert (
        f"| Spearman ρ | {s['spearman']:.2f} | n/a ({reason}) |"
        in Path("cal8/report.md").read_text()
    )
    assert (
        "n/a (too few informative cases: the judge&#x27;s score is 1"
        in Path("cal8/report.html").read_text()
    )
