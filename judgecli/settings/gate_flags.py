"""The gate's thresholds (--min-win-rate, --max-loss-rate, ...), declared once.

Each field of GateThresholds is one threshold: a `threshold(...)` giving its flag (spelling,
help, bounds; flag_spec.Flag, in the Gate panel) and what the gate does with it
(`Threshold`): the number it checks, floor or ceiling, the judging commands that take it,
how a --sequential run treats it, and whether it needs --repeats. Read off it:

- cli/flags.gate_thresholds: each command's threshold options (`judge gate` takes all);
- deciding/gate: `GateSpec` is GateThresholds with --on; its checks, in this order;
- deciding/decision: the floor a --sequential run follows, and the thresholds it refuses;
- deciding/measured: which command's runs make the number a threshold checks;
- cli/rejudge: a re-judged anchor set drops RUN_A's gate (each threshold is Role.THIS_RUN).

So a new threshold is one field here, plus its statistic (deciding/gate.estimate finds it in
a summary). Settings stand below the summaries and the commands: a metric is named by its
GateMetric value (its summary.json key), a command by its name. Nothing here imports typer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from enum import StrEnum
from functools import cache
from typing import Any, get_type_hints

from judgecli.settings.flag_spec import FLAG, Flag, FlagField, Role

GATE = "Gate"
"""The `--help` panel of the gate's options."""
SCORE, PAIRWISE, CALIBRATE, ARENA = "score", "pairwise", "calibrate", "arena"


class Sequence(StrEnum):
    """What a --sequential run does with a threshold."""

    FOLLOWS = "follows"
    """A mean of one value per case: a --sequential run stops on it (and --labels corrects
    it)."""
    BESIDE = "beside"
    """The floor the verdicts stand on, checked beside a sequence, not a number to stop on."""
    REFUSED = "refused"
    """--sequential refuses it: stopping is decided by one number."""


@dataclass(frozen=True)
class Threshold:
    """What the gate does with one threshold."""

    metric: str
    """The GateMetric (its summary.json key) it checks."""
    commands: frozenset[str]
    """The judging commands that take it (their runs make its number); `judge gate` takes
    every threshold."""
    minimum: bool
    """A floor (`--min-*`: passes at or above it) or a ceiling (`--max-*`: at or below)."""
    sequence: Sequence
    repeats: bool
    """It reads each case's K verdicts: only a run with --repeats K has its number."""


THRESHOLD = "threshold"
"""The key of a GateThresholds field's metadata that holds its Threshold."""


def threshold(
    name: str,
    *,
    help: str,
    metavar: str,
    metric: str,
    commands: Iterable[str],
    min: float | None = None,
    max: float | None = None,
    minimum: bool = True,
    sequence: Sequence = Sequence.REFUSED,
    repeats: bool = False,
) -> Any:
    """A GateThresholds field (None: not checked): its flag, and what the gate does with it."""
    declared = Flag(
        names=(name,), help=help, panel=GATE, roles=Role.THIS_RUN, metavar=metavar, min=min, max=max
    )
    gated = Threshold(metric, frozenset(commands), minimum, sequence, repeats)
    return field(default=None, metadata={FLAG: declared, THRESHOLD: gated})


@dataclass(frozen=True)
class GateThresholds:
    """The gate's thresholds as given (None: not checked), in the order the gate checks them
    (summary.json's `gate.checks`).
    """

    min_win_rate: float | None = threshold(
        "--min-win-rate",
        min=0,
        max=1,
        metavar="RATE",
        help="Exit 1 unless NEW's win rate (ties ½) is at least this.",
        metric="win_rate",
        commands={PAIRWISE},
        sequence=Sequence.FOLLOWS,
    )
    min_pass_rate: float | None = threshold(
        "--min-pass-rate",
        min=0,
        max=1,
        metavar="RATE",
        help="Exit 1 unless the share of cases that pass is at least this.",
        metric="pass_rate",
        commands={SCORE},
        sequence=Sequence.FOLLOWS,
    )
    min_mean: float | None = threshold(
        "--min-mean",
        metavar="SCORE",
        help="Exit 1 unless the mean score (on the rubric's scale) is at least this.",
        metric="mean",
        commands={SCORE},
        sequence=Sequence.FOLLOWS,
    )
    """Score: the mean score's floor, on the rubric's scale."""
    max_loss_rate: float | None = threshold(
        "--max-loss-rate",
        min=0,
        max=1,
        metavar="RATE",
        help="Exit 1 if NEW loses more than this share of cases.",
        metric="loss_rate",
        commands={PAIRWISE},
        minimum=False,
    )
    min_consistency: float | None = threshold(
        "--min-consistency",
        min=0,
        max=1,
        metavar="RATE",
        help="The position-consistency floor (default 0.5; 0 turns it off): when fewer "
        "pairs than this got the same verdict in both orders, the judge cannot tell the "
        "answers apart, and the gate is undecided (exit 3).",
        metric="consistency",
        commands={PAIRWISE, ARENA},
        sequence=Sequence.BESIDE,
    )
    """Pairwise: the position-consistency floor (None: the default, 0.5). Given, it is also
    a check of its own; below it the gate is undecided, never failed."""
    min_kappa: float | None = threshold(
        "--min-kappa",
        min=-1,
        max=1,
        metavar="KAPPA",
        help="Exit 1 unless judge-human κ (quadratic-weighted on ordinal scales) is at least this.",
        metric="cohen_kappa",
        commands={CALIBRATE},
    )
    """Calibrate: quadratic-weighted κ for ordinal scales (the summary's weighted_kappa),
    Cohen's κ otherwise."""
    min_accuracy: float | None = threshold(
        "--min-accuracy",
        min=0,
        max=1,
        metavar="RATE",
        help="Exit 1 unless judge-human exact agreement is at least this.",
        metric="accuracy",
        commands={CALIBRATE},
    )
    min_stability: float | None = threshold(
        "--min-stability",
        min=0,
        max=1,
        metavar="RATE",
        help="With --repeats K: exit 1 unless at least this share of cases got the same "
        "verdict in all K asks.",
        metric="stability",
        commands={SCORE, PAIRWISE, CALIBRATE},
        repeats=True,
    )
    """--repeats: the share of cases whose K verdicts agree."""
    min_pass_k: float | None = threshold(
        "--min-pass-k",
        min=0,
        max=1,
        metavar="RATE",
        help="With --repeats K: exit 1 unless at least this share of cases passes in every "
        "one of the K asks (pass^K).",
        metric="pass_k",
        commands={SCORE},
        repeats=True,
    )
    """Score with --repeats: the share of cases that pass in every one of the K repeats."""
    min_tool_f1: float | None = threshold(
        "--min-tool-f1",
        min=0,
        max=1,
        metavar="F1",
        help="A rubric with a tool_calls check: exit 1 unless the F1 of the calls made "
        "against the calls expected (micro-averaged over every call) is at least this.",
        metric="tool_calls.f1",
        commands={SCORE},
    )
    """Score with a `tool_calls` check: the floor of the calls' micro F1 (summary.tool_calls)."""
    min_tool_recall: float | None = threshold(
        "--min-tool-recall",
        min=0,
        max=1,
        metavar="RATE",
        help="A rubric with a tool_calls check: exit 1 unless at least this share of the "
        "expected calls was made.",
        metric="tool_calls.recall",
        commands={SCORE},
    )
    min_tool_precision: float | None = threshold(
        "--min-tool-precision",
        min=0,
        max=1,
        metavar="RATE",
        help="A rubric with a tool_calls check: exit 1 unless at least this share of the "
        "calls made was expected.",
        metric="tool_calls.precision",
        commands={SCORE},
    )

    min_checklist_score: float | None = threshold(
        "--min-checklist-score",
        min=0,
        max=1,
        metavar="SCORE",
        help="A checklist rubric: exit 1 unless the checklist score (the mean of the cases' "
        "met points over their positive points, clipped to 0..1, as HealthBench scores) is "
        "at least this.",
        metric="checklist_score",
        commands={SCORE},
    )
    """Score with a checklist rubric: the floor of the HealthBench score."""

    def given(self) -> list[tuple[ThresholdField, float]]:
        """Each threshold given, with its value, in the gate's order."""
        found = [(row, getattr(self, row.name)) for row in threshold_fields()]
        return [(row, value) for row, value in found if value is not None]

    def given_on(self, metrics: Iterable[str]) -> list[str]:
        """How the thresholds given on these metrics are spelt (`--min-tool-f1`)."""
        wanted = set(metrics)
        return [row.spelling for row, _ in self.given() if row.threshold.metric in wanted]


@dataclass(frozen=True)
class ThresholdField(FlagField):
    """One field of GateThresholds: its flag, and what the gate does with it."""

    threshold: Threshold

    @property
    def spelling(self) -> str:
        """How the command line and the messages spell it: `--min-win-rate`."""
        return self.flag.names[0]


@cache
def threshold_fields() -> tuple[ThresholdField, ...]:
    """Every threshold, in the gate's order."""
    types = get_type_hints(GateThresholds)
    return tuple(
        ThresholdField(f.name, types[f.name], f.default, f.metadata[FLAG], f.metadata[THRESHOLD])
        for f in fields(GateThresholds)
    )


def thresholds_of(command: str | None) -> tuple[ThresholdField, ...]:
    """The thresholds a judging command takes; every one for None (`judge gate`)."""
    return tuple(row for row in threshold_fields() if command in (None, *row.threshold.commands))


def one_of(names: Iterable[str]) -> str:
    """`a`, `a or b`, `a, b or c`: how a message offers a choice of flags."""
    *most, last = names
    return f"{', '.join(most)} or {last}" if most else last
