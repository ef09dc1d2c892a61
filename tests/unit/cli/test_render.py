"""How a finished run is printed and which exit code it means, from hand-made summaries:
a run the judge could not grade exits 3 whatever its gate says (an outage is not a
regression), after its tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgecli.cli import render
from judgecli.deciding.gate import GateSpec, evaluate_gate
from judgecli.errors import ExitCode
from judgecli.summary.facts import Usage
from judgecli.summary.pairwise import PairwiseSummary

INCOMPLETE = "the judge could not grade 24 of 30 cases"


def summary(*, passed: bool | None = None, incomplete: str | None = None) -> PairwiseSummary:
    """A pairwise summary at 60% win rate; `passed` picks a gate it meets or misses."""
    made = PairwiseSummary(
        rubric="pairwise",
        rubric_version=1,
        rubric_hash="sha256:x",
        models=["m"],
        n_cases=30,
        n_ok=6,
        n_failed=24,
        usage=Usage(),
        win_rate=0.6,
        win_rate_ci=(0.3, 0.9),
        wins=3,
        losses=1,
        ties=2,
        dropped=0,
        flip=True,
        flip_policy="tie",
        # Above the position-consistency floor, below which a gate is undecided (issue 29).
        consistency=0.8,
        incomplete=incomplete,
    )
    if passed is not None:
        result = evaluate_gate(made, GateSpec(min_win_rate=0.55 if passed else 0.65))
        assert result is not None
        assert result.passed is passed
        made.gate = result
    return made


@pytest.mark.parametrize(
    ("passed", "incomplete", "code"),
    [
        pytest.param(None, None, ExitCode.OK, id="no-gate"),
        pytest.param(True, None, ExitCode.OK, id="gate-passed"),
        pytest.param(False, None, ExitCode.GATE_FAILED, id="gate-failed"),
        pytest.param(None, INCOMPLETE, ExitCode.INCOMPLETE, id="incomplete"),
        pytest.param(True, INCOMPLETE, ExitCode.INCOMPLETE, id="incomplete-beats-a-pass"),
        pytest.param(False, INCOMPLETE, ExitCode.INCOMPLETE, id="incomplete-beats-a-fail"),
    ],
)
def test_the_exit_code_of_a_finished_run(capsys, passed, incomplete, code):
    assert (
        render.report_outcome(
            summary(passed=passed, incomplete=incomplete),
            Path("run"),
            quiet=True,
            json_output=False,
        )
        is code
    )


def test_an_incomplete_run_prints_its_tables_then_the_error_and_how_to_go_on(capsys):
    code = render.report_outcome(
        summary(passed=True, incomplete=INCOMPLETE),
        Path("runs/x"),
        quiet=False,
        json_output=False,
    )
    out, err = capsys.readouterr()
    assert code is ExitCode.INCOMPLETE
    assert "win rate" in out  # the tables are still shown, on stdout
    assert err.splitlines()[-2:] == [
        f"error: {INCOMPLETE}",
        "hint: continue with: judge resume runs/x --retry-failed",
    ]


def test_json_mode_prints_the_incomplete_summary_alone_on_stdout(capsys):
    import json

    code = render.report_outcome(
        summary(incomplete=INCOMPLETE), Path("run"), quiet=False, json_output=True
    )
    out, err = capsys.readouterr()
    assert code is ExitCode.INCOMPLETE
    assert json.loads(out)["incomplete"] == INCOMPLETE
    assert "win rate" in err
    assert f"error: {INCOMPLETE}" in err


def test_an_undecided_gate_exits_3_with_why_and_what_to_do(capsys):
    # Issue 29: the judge said "A" whatever the order; such a run used to FAIL with exit 1.
    made = summary().model_copy(update={"n_failed": 0, "consistency": 0.0})
    made.gate = evaluate_gate(made, GateSpec(min_win_rate=0.55))
    code = render.report_outcome(made, Path("runs/x"), quiet=True, json_output=False)
    out, err = capsys.readouterr()
    assert code is ExitCode.INCOMPLETE
    verdict = next(line for line in out.splitlines() if line.startswith("UNDECIDED"))
    assert verdict.startswith(
        "UNDECIDED — the judge could not tell the answers apart (position consistency 0% < "
        "50%); no verdict. NEW vs OLD: win rate 60.0%"
    )
    assert "The gate is undecided (exit 3): use a stronger judge" in out
    assert err.splitlines()[-2].startswith("error: the gate is undecided: the judge could not")
    assert err.splitlines()[-1].startswith("hint: use a stronger judge")
