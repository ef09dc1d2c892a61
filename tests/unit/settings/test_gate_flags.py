"""The gate's thresholds, declared once (judgecli/settings/gate_flags.py): each row is well
formed, and what the gate, --sequential, `judge gate` and each command read off the table is
what they spelled out by hand before issue 30."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from judgecli.cli.app import app_for
from judgecli.deciding.decision import plan_sequential
from judgecli.deciding.gate import GateSpec, wanted
from judgecli.deciding.measured import check_measured, measured, others
from judgecli.deciding.outcomes import CASE_MEANS
from judgecli.errors import ConfigError, InputError
from judgecli.settings.gate_flags import (
    GATE,
    GateThresholds,
    Sequence,
    one_of,
    threshold_fields,
    thresholds_of,
)
from judgecli.summary.facts import Command
from judgecli.summary.gate_records import GateMetric
from tests.unit.deciding.test_measured import calibrate
from tests.unit.deciding.test_sequential import PAIRWISE

ROWS = threshold_fields()


def ids(row) -> str:
    return row.name


def gate_options(name: str) -> list[str]:
    """The options of a command's Gate panel, in `--help` order."""
    command = typer.main.get_command(app_for([name])).commands[name]  # type: ignore[attr-defined]
    return [p.name for p in command.params if getattr(p, "rich_help_panel", "") == GATE]


@pytest.mark.parametrize("row", ROWS, ids=ids)
def test_a_threshold_is_a_floor_or_a_ceiling_of_a_gated_number(row):
    assert row.spelling == "--" + row.name.replace("_", "-")
    assert row.flag.panel == GATE
    assert row.threshold.minimum == row.spelling.startswith("--min-")
    assert row.threshold.metric in {metric.value for metric in GateMetric}
    assert row.type == float | None
    assert row.flag.help.endswith(".")


def test_the_gate_checks_the_thresholds_in_the_order_summary_json_has_always_had():
    # Issue 30: GateSpec's fields, evaluate_gate's `wanted` and `judge gate --help` listed them
    # in this order each; `gate.checks` (and the gate's headline number) follow it.
    assert [row.name for row in ROWS] == [
        "min_win_rate",
        "min_pass_rate",
        "min_mean",
        "max_loss_rate",
        "min_consistency",
        "min_kappa",
        "min_accuracy",
        "min_stability",
        "min_pass_k",
        # Issue 32: the tool-call check's numbers.
        "min_tool_f1",
        "min_tool_recall",
        "min_tool_precision",
        "min_checklist_score",
    ]
    everything = GateSpec(**{row.name: 0.5 for row in ROWS})
    assert [metric for metric, _, _ in wanted(calibrate(), everything)] == [
        GateMetric.WIN_RATE,
        GateMetric.PASS_RATE,
        GateMetric.MEAN,
        GateMetric.LOSS_RATE,
        GateMetric.CONSISTENCY,
        GateMetric.COHEN_KAPPA,
        GateMetric.ACCURACY,
        GateMetric.STABILITY,
        GateMetric.PASS_K,
        GateMetric.TOOL_F1,
        GateMetric.TOOL_RECALL,
        GateMetric.TOOL_PRECISION,
        GateMetric.CHECKLIST_SCORE,
    ]
    assert [minimum for _, _, minimum in wanted(calibrate(), everything)].count(False) == 1


@pytest.mark.parametrize(
    ("command", "options"),
    [
        ("pairwise", ["min_win_rate", "max_loss_rate", "min_consistency", "min_stability"]),
        (
            "score",
            [
                "min_pass_rate",
                "min_mean",
                "min_stability",
                "min_pass_k",
                "min_tool_f1",
                "min_tool_recall",
                "min_tool_precision",
                "min_checklist_score",
            ],
        ),
        ("calibrate", ["min_kappa", "min_accuracy", "min_stability"]),
        ("gate", [row.name for row in ROWS]),
    ],
)
def test_each_command_takes_the_thresholds_it_took_before(command, options):
    # Issue 30: each command's parameters named these by hand; now the table's `commands`.
    assert [row.name for row in thresholds_of(None if command == "gate" else command)] == options
    assert gate_options(command)[: len(options)] == options


def test_the_arena_takes_the_consistency_floor_only():
    assert [row.name for row in thresholds_of("arena")] == ["min_consistency"]
    assert "min_consistency" in gate_options("arena")


def test_a_sequence_follows_the_means_of_one_value_per_case():
    followed = {
        GateMetric(r.threshold.metric) for r in ROWS if r.threshold.sequence is Sequence.FOLLOWS
    }
    assert followed == CASE_MEANS
    # Before issue 30: decision.FLAG_OF, and GateSpec.floors' three bars.
    spec = GateSpec(min_win_rate=0.5, min_pass_rate=0.6, min_mean=3.0, min_kappa=0.2)
    assert spec.floors == {
        GateMetric.WIN_RATE: 0.5,
        GateMetric.PASS_RATE: 0.6,
        GateMetric.MEAN: 3.0,
    }
    beside = [row.spelling for row in ROWS if row.threshold.sequence is Sequence.BESIDE]
    assert beside == ["--min-consistency"]


def test_the_sequential_refusal_names_the_floors_it_can_follow_as_before():
    with pytest.raises(ConfigError) as caught:
        plan_sequential(GateSpec(min_win_rate=0.5, min_stability=0.5), PAIRWISE, seed=0)
    assert caught.value.args[0] == (
        "--sequential stops on one number: give exactly one of --min-win-rate (pairwise), "
        "--min-pass-rate or --min-mean (score), and no other threshold (but the "
        "--min-consistency floor)"
    )


def test_judge_gate_knows_which_runs_make_each_number_as_before():
    # Before issue 30: measured.MEASURED_BY and OTHERS, by hand.
    made = {command: [row.spelling for row in rows] for command, rows in measured().items()}
    assert made == {
        Command.PAIRWISE: ["--min-win-rate", "--max-loss-rate", "--min-consistency"],
        Command.SCORE: [
            "--min-pass-rate",
            "--min-mean",
            "--min-tool-f1",
            "--min-tool-recall",
            "--min-tool-precision",
            "--min-checklist-score",
        ],
        Command.CALIBRATE: ["--min-kappa", "--min-accuracy"],
    }
    # Issue 32: the hint names what this run can be gated with (a score run's tool-call and
    # checklist thresholds only when its rubric has them: tests/integration/
    # test_undecided_gate_cli.py and test_tool_calls_cli.py say them for score runs).
    assert others(calibrate()) == "--min-kappa or --min-accuracy"


def test_judge_gate_names_a_pairwise_threshold_first_as_before():
    # Two thresholds the run does not make: the first named is the one it named before.
    with pytest.raises(InputError, match="--max-loss-rate needs a pairwise run"):
        check_measured(calibrate(), GateSpec(min_mean=1, max_loss_rate=0.2), Path("s.json"))


def test_the_repeats_thresholds_are_said_as_before():
    spec = GateSpec(min_stability=0.5, min_pass_k=0.5, min_win_rate=0.5)
    assert spec.on_repeats == ["--min-stability", "--min-pass-k"]
    assert GateSpec().empty
    assert not GateSpec(min_mean=0).empty


def test_a_gate_is_built_from_the_thresholds_a_command_was_given():
    given = GateThresholds(min_win_rate=0.55, min_consistency=0.6)
    assert GateSpec.of(given, on=GateSpec().on) == GateSpec(min_win_rate=0.55, min_consistency=0.6)


@pytest.mark.parametrize(
    ("names", "said"),
    [(["a"], "a"), (["a", "b"], "a or b"), (["a", "b", "c"], "a, b or c")],
)
def test_a_choice_of_flags_is_said_with_or(names, said):
    assert one_of(names) == said
