"""Whether a finished run measured what `judge gate` asks of it: each threshold against the
numbers its command makes. Asking a score run for a win rate, a run judged in one order for
its position consistency, or a run without labels for a corrected estimate is bad usage
(exit 2, before any verdict): a gate that failed for want of the number would read as a
verdict on the candidate. A number the command makes but this run's data left undefined is
another matter: the gate is undecided (exit 3; see `undecided`).
"""

from __future__ import annotations

from pathlib import Path

from judgecli.deciding.gate import GateSpec, corrected
from judgecli.errors import ConfigError, InputError
from judgecli.settings.gate_flags import ThresholdField, one_of, threshold_fields
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.facts import Command
from judgecli.summary.gate_records import TOOL_METRICS, GateMetric, GateOn
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.run import RunSummary
from judgecli.summary.score import ScoreSummary

NO_THRESHOLD = "none of these thresholds (a refine run has no gate)"
"""What gates a run of a command that makes none of the gated numbers."""


def measured_by(row: ThresholdField) -> Command | None:
    """The command whose runs alone make the number a threshold checks; None for a number
    of --repeats (`check_gate_mode` asks for the repeats), or one that several commands make.
    """
    made = [command for command in Command if command.value in row.threshold.commands]
    return made[0] if len(made) == 1 and not row.threshold.repeats else None


def measured() -> dict[Command, list[ThresholdField]]:
    """The thresholds each command's runs alone make the numbers of, the commands in the
    order their first threshold is declared.
    """
    found: dict[Command, list[ThresholdField]] = {}
    for row in threshold_fields():
        if (command := measured_by(row)) is not None:
            found.setdefault(command, []).append(row)
    return found


def others(summary: RunSummary) -> str:
    """The thresholds this run can be gated with, as a hint says them: its command's, less
    those on the numbers of a check its rubric has not (tool calls, a checklist).
    """
    rows = [row for row in measured().get(summary.command, []) if offered(row, summary)]
    return one_of(row.spelling for row in rows) if rows else NO_THRESHOLD


def offered(row: ThresholdField, summary: RunSummary) -> bool:
    """Whether this run has the number a threshold checks by its rubric's kind: a score
    run has tool-call numbers only with a `tool_calls` check, a checklist score only with a
    checklist rubric.
    """
    if not isinstance(summary, ScoreSummary):
        return True
    if row.threshold.metric in TOOL_METRICS:
        return summary.tool_calls is not None
    if row.threshold.metric == GateMetric.CHECKLIST_SCORE:
        return summary.checklist_score is not None
    return True


def check_measured(summary: RunSummary, spec: GateSpec, path: Path) -> None:
    """InputError (exit 2) for a threshold on a number this kind of run does not make, or
    that this run's rubric or flags ruled out: a pass rate without a pass mark, a mean of a
    binary rubric, a consistency with --no-flip.
    """
    for wants, rows in measured().items():
        for row in rows:
            if getattr(spec, row.name) is not None and summary.command is not wants:
                raise InputError(
                    f"{row.spelling} needs a {wants.value} run; {path} is a "
                    f"{summary.command.value} run",
                    hint=f"gate a {summary.command.value} run with {others(summary)}",
                )
    consistency = spec.min_consistency is not None
    if isinstance(summary, PairwiseSummary) and consistency and not summary.flip:
        raise InputError(
            f"{path}: --min-consistency needs a run judged in both orders; this one was "
            "judged with --no-flip, which measures no position consistency",
            hint="re-run without --no-flip, or drop --min-consistency",
        )
    if isinstance(summary, ScoreSummary) and summary.n_ok:
        if spec.min_pass_rate is not None and summary.pass_rate is None:
            raise InputError(
                f"{path}: --min-pass-rate: the run has no pass rate (its rubric "
                f"{summary.rubric!r} gives no pass or fail)",
                hint="gate on --min-mean, or give the rubric a pass_at and judge again",
            )
        if spec.min_checklist_score is not None and summary.checklist_score is None:
            raise InputError(
                f"{path}: --min-checklist-score: the run has no checklist score (rubric "
                f"{summary.rubric!r} grades no checklist)",
                hint="grade the cases' rubric_items with --rubric checklist, or gate on "
                "--min-mean or --min-pass-rate",
            )
        tool_bars = spec.given_on(TOOL_METRICS)
        if tool_bars and summary.tool_calls is None:
            raise InputError(
                f"{path}: {one_of(tool_bars)}: the run checked no tool calls (rubric "
                f"{summary.rubric!r} has no tool_calls check)",
                hint="score the runs with --rubric tool-calls (or a rubric with a tool_calls: "
                "block) and gate that run",
            )
        if spec.min_mean is not None and summary.mean is None:
            raise InputError(
                f"{path}: --min-mean: the run has no mean score (rubric {summary.rubric!r} "
                "has no score scale)",
                hint="gate a checklist run with --min-checklist-score"
                if summary.checklist_score is not None
                else "gate a binary rubric's run with --min-pass-rate",
            )


def check_gate_mode(summary: RunSummary, spec: GateSpec, path: Path) -> None:
    """InputError (exit 2) when `judge gate` asks for numbers the run did not make: a
    threshold on a number its command does not measure (`check_measured`), --repeats
    numbers without --repeats, a corrected estimate without labels, a sequence without
    --sequential.
    """
    check_measured(summary, spec, path)
    if spec.on_repeats and summary.repeats is None:
        raise InputError(
            f"{path}: {' and '.join(spec.on_repeats)} need a run judged with --repeats K",
            hint="re-run with --repeats 3 (and a temperature above 0)",
        )
    if spec.min_pass_k is not None and summary.repeats and no_pass_k(summary):
        raise InputError(
            f"{path}: --min-pass-k needs a score run with a pass bar (the rubric's pass_at, "
            "or a binary rubric)",
            hint="gate on --min-stability instead",
        )
    if spec.on is GateOn.SEQUENTIAL and summary.sequential is None:
        raise InputError(
            f"{path}: --on sequential, but the run was not --sequential",
            hint="re-run with --sequential, or gate with --on point / lower-bound",
        )
    if isinstance(summary, CalibrateSummary):
        check_calibrate_on(spec)
    if spec.on in (GateOn.CORRECTED, GateOn.CORRECTED_LOWER_BOUND):
        missing = [m.value for m in spec.floors if corrected(summary, m)[0] is None]
        if missing:
            raise InputError(
                f"{path}: --on {spec.on.value}, but the run has no human-corrected "
                f"{', '.join(missing)}",
                hint="re-run with --labels LABELS.jsonl (human labels of some cases)",
            )


def check_calibrate_on(spec: GateSpec) -> None:
    """ConfigError (exit 2) for a calibrate gate on a human-corrected estimate or a
    confidence sequence: calibrate makes neither, only agreement and its interval.
    """
    if spec.on not in (GateOn.POINT, GateOn.LOWER_BOUND):
        raise ConfigError(
            f"--on {spec.on.value}: a calibrate run's agreement is gated on its point "
            "estimate or its interval's bound",
            hint="use --on point or --on lower-bound",
        )


def no_pass_k(summary: RunSummary) -> bool:
    """Whether a repeated run has no pass^K (a pairwise run, a rubric without a bar)."""
    return summary.self_consistency is None or summary.self_consistency.pass_k is None
