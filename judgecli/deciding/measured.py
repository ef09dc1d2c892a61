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
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.facts import Command
from judgecli.summary.gate_records import GateOn
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.run import RunSummary
from judgecli.summary.score import ScoreSummary

MEASURED_BY = {
    "--min-win-rate": Command.PAIRWISE,
    "--max-loss-rate": Command.PAIRWISE,
    "--min-consistency": Command.PAIRWISE,
    "--min-pass-rate": Command.SCORE,
    "--min-mean": Command.SCORE,
    "--min-kappa": Command.CALIBRATE,
    "--min-accuracy": Command.CALIBRATE,
}
"""The command whose runs make the number a threshold flag checks."""

OTHERS = {
    Command.PAIRWISE: "--min-win-rate, --max-loss-rate or --min-consistency",
    Command.SCORE: "--min-pass-rate or --min-mean",
    Command.CALIBRATE: "--min-kappa or --min-accuracy",
    Command.REFINE: "none of these thresholds (a refine run has no gate)",
}


def given_flags(spec: GateSpec) -> list[str]:
    """The threshold flags `spec` holds, by their spelling."""
    values = {
        "--min-win-rate": spec.min_win_rate,
        "--max-loss-rate": spec.max_loss_rate,
        "--min-consistency": spec.min_consistency,
        "--min-pass-rate": spec.min_pass_rate,
        "--min-mean": spec.min_mean,
        "--min-kappa": spec.min_kappa,
        "--min-accuracy": spec.min_accuracy,
    }
    return [flag for flag, value in values.items() if value is not None]


def check_measured(summary: RunSummary, spec: GateSpec, path: Path) -> None:
    """InputError (exit 2) for a threshold on a number this kind of run does not make, or
    that this run's rubric or flags ruled out: a pass rate without a pass mark, a mean of a
    binary rubric, a consistency with --no-flip.
    """
    for flag in given_flags(spec):
        wants = MEASURED_BY[flag]
        if summary.command is not wants:
            raise InputError(
                f"{flag} needs a {wants.value} run; {path} is a {summary.command.value} run",
                hint=f"gate a {summary.command.value} run with {OTHERS[summary.command]}",
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
        if spec.min_mean is not None and summary.mean is None:
            raise InputError(
                f"{path}: --min-mean: the run has no mean score (rubric {summary.rubric!r} "
                "has no score scale)",
                hint="gate a binary rubric's run with --min-pass-rate",
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
