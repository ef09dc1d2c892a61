"""`judge plan`: the cases a command's gate needs, from a real pilot run on the simulator;
it calls no judge, is exit 2 on bad usage with nothing written, and writes the spec of the
planned command line that `judge plan SPEC` reads back. Issue 35.
"""

from __future__ import annotations

import json
from pathlib import Path

from judgecli.stats.sizing import rate_cases
from tests.integration.conftest import REPO

OLD = REPO / "datasets" / "old.jsonl"
NEW = REPO / "datasets" / "new.jsonl"
GATE = ["--min-win-rate", "0.55", "--on", "lower-bound"]


def plan_args(*extra: str) -> list[str]:
    command = ["pairwise", str(OLD), str(NEW), "--rubric", "pairwise", "--model", "openai/sim"]
    return ["plan", *command, *GATE, *extra]


def test_a_pilot_runs_ties_size_the_plan_and_no_judge_is_called(
    run_cli, judge_server, tmp_path: Path
) -> None:
    pilot = tmp_path / "pilot"
    made = run_cli(
        judge_server, "pairwise", str(OLD), str(NEW), "--out", str(pilot), "--quiet", "--json"
    )
    assert made.exit_code == 0, made.stderr
    judge_server.reset()
    results = [json.loads(line) for line in (pilot / "results.jsonl").read_text().splitlines()]
    decided = [r for r in results if r.get("winner") is not None]
    ties = sum(r["winner"] == "tie" for r in decided) / len(decided)

    run = run_cli(None, *plan_args("--effect", "0.65", "--pilot", str(pilot), "--json"))

    assert run.exit_code == 0, run.stderr
    plan = json.loads(run.stdout)
    assert plan["pilot"]["cases"] == len(decided)
    assert plan["tie_share"] == round(ties, 6)
    assert (
        plan["cases_needed"]
        == plan["cases_lower_bound"]
        == rate_cases(floor=0.55, effect=0.65, tie_share=ties, power=0.8, alpha=0.05, wilson=False)
    )
    assert plan["power"] >= 0.8
    assert plan["sequential_expected"] <= plan["sequential_p95"]
    assert judge_server.requests == []


def test_the_plan_is_printed_for_a_person(run_cli) -> None:
    run = run_cli(None, *plan_args("--effect", "0.60"))
    assert run.exit_code == 0, run.stderr
    assert "fixed n, on the lower bound:" in run.stdout
    assert "cases needed: 760" in run.stdout


def test_an_alpha_a_fixed_n_gate_cannot_apply_is_warned_of(run_cli) -> None:
    # The gate reads its 95% interval whatever --alpha says; a sequential gate takes it.
    fixed = run_cli(None, *plan_args("--effect", "0.60", "--alpha", "0.1"))
    assert fixed.exit_code == 0, fixed.stderr
    assert "only a --sequential run applies --alpha" in fixed.stderr
    sequential = run_cli(None, *plan_args("--effect", "0.60", "--alpha", "0.1", "--sequential"))
    assert sequential.exit_code == 0, sequential.stderr
    assert "--alpha" not in sequential.stderr


def test_bad_usage_is_exit_2_and_writes_nothing(run_cli, tmp_path: Path) -> None:
    before = sorted(tmp_path.iterdir())
    spec = tmp_path / "judge.yaml"
    for argv in (
        plan_args("--effect", "0.50", "--write-spec", str(spec)),
        ["plan", "pairwise", str(OLD), str(NEW), "--effect", "0.6", "--write-spec", str(spec)],
        plan_args("--effect", "0.6", "--pilot", str(tmp_path / "nowhere")),
    ):
        run = run_cli(None, *argv)
        assert run.exit_code == 2, run.stdout
        assert run.stderr.startswith("error: "), run.stderr
        assert "Traceback" not in run.stderr
    assert sorted(tmp_path.iterdir()) == before


def test_the_written_spec_plans_the_same_gate(run_cli, tmp_path: Path) -> None:
    spec = tmp_path / "judge.yaml"
    written = run_cli(None, *plan_args("--effect", "0.65", "--json", "--write-spec", str(spec)))
    assert written.exit_code == 0, written.stderr
    assert spec.read_text().startswith("# judge evaluation spec (sha256:")

    again = run_cli(None, "plan", str(spec), "--effect", "0.65", "--json")

    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout)["cases_needed"] == json.loads(written.stdout)["cases_needed"]


def test_a_spec_that_stops_before_the_cases_needed_is_warned_of(run_cli, tmp_path: Path) -> None:
    spec = tmp_path / "judge.yaml"
    assert run_cli(None, *plan_args("--effect", "0.65", "--write-spec", str(spec))).exit_code == 0
    # --write-spec pins the n the plan needs (issue 35): a spec edited below it is warned of.
    assert "  n: 183" in spec.read_text()
    spec.write_text(spec.read_text().replace("  n: 183", "  n: 50"))

    run = run_cli(None, "plan", str(spec), "--effect", "0.65")

    assert run.exit_code == 0, run.stderr
    assert "the spec stops after 50 cases, fewer than the 183" in run.stderr
