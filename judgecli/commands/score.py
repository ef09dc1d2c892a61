"""`judge score`: grade every case of a dataset with a pointwise or binary rubric."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from judgecli.deciding.decision import Deciding
from judgecli.deciding.gate import GateSpec
from judgecli.errors import ConfigError, RubricError
from judgecli.grading.grade import GradingPlan, grade_pointwise
from judgecli.inputs.dataset import Case, DatasetScan, iter_cases
from judgecli.result import CaseResult
from judgecli.rubric import Rubric, RubricKind
from judgecli.running.job import Ending, Job, Sequential
from judgecli.settings.config import RunConfig
from judgecli.settings.gate_flags import one_of
from judgecli.summary.gate_records import TOOL_METRICS, GateMetric
from judgecli.summary.score import ScoreSummary, summarize_score


def check_rubric_kind(rubric: Rubric, where: str) -> None:
    """`score` grades one answer at a time: pairwise rubrics belong to `judge pairwise`
    (`where`: the rubric's file, as messages name it).
    """
    if rubric.kind is RubricKind.PAIRWISE:
        raise RubricError(
            f"{where}: rubric {rubric.name!r} is pairwise",
            hint="use `judge pairwise OLD NEW` with it",
        )


def check_gate(gate: GateSpec, rubric: Rubric) -> None:
    """ConfigError (exit 2, nothing judged) for a bar the rubric's verdicts cannot meet: a
    pass rate without a pass mark, a mean without a scale or outside it.
    """
    if gate.min_pass_rate is not None and not scored_passes(rubric):
        raise ConfigError(
            f"--min-pass-rate: rubric {rubric.name!r} gives no pass or fail",
            hint="give the rubric a pass_at (pointwise) or a passing choice, or gate on --min-mean",
        )
    if gate.min_checklist_score is not None and rubric.kind is not RubricKind.CHECKLIST:
        raise ConfigError(
            f"--min-checklist-score: rubric {rubric.name!r} is {rubric.kind.value} and grades "
            "no checklist",
            hint="grade the cases' rubric_items with --rubric checklist, or gate on "
            "--min-mean or --min-pass-rate",
        )
    tool_bars = gate.given_on(TOOL_METRICS)
    if tool_bars and rubric.tool_calls is None:
        raise ConfigError(
            f"{one_of(tool_bars)}: rubric {rubric.name!r} checks no tool calls",
            hint="use --rubric tool-calls (the check alone, no judge), or give the rubric a "
            "tool_calls: {match: exact} block",
        )
    if gate.min_mean is not None:
        if rubric.scale is None:
            raise ConfigError(
                f"--min-mean: rubric {rubric.name!r} has no score scale",
                hint="gate a binary rubric with --min-pass-rate",
            )
        if not rubric.scale.min <= gate.min_mean <= rubric.scale.max:
            raise ConfigError(
                f"--min-mean {gate.min_mean:g} is outside the rubric's scale "
                f"{rubric.scale.min:g}..{rubric.scale.max:g}",
                hint="give a mean score on the rubric's scale",
            )


def check_labels(labels: Path | None, rubric: Rubric) -> None:
    """ConfigError (exit 2) for --labels with a checklist rubric: a human label of a case is
    a score or a choice, and a checklist's verdicts are its items.
    """
    if labels is not None and rubric.kind is RubricKind.CHECKLIST:
        raise ConfigError(
            f"--labels: rubric {rubric.name!r} grades checklists, which human labels of "
            "scores or choices do not correct",
            hint="drop --labels; gate the run on --min-checklist-score or --min-pass-rate",
        )


def scored_passes(rubric: Rubric) -> bool:
    """Whether the rubric's verdicts pass or fail a case."""
    if rubric.kind is RubricKind.BINARY:
        return rubric.passing_choice is not None
    return rubric.pass_at is not None


def gated_metrics(rubric: Rubric) -> list[GateMetric]:
    """The means a score run has: its pass rate (with a pass mark), its mean (a scale)."""
    return [GateMetric.PASS_RATE] * scored_passes(rubric) + [GateMetric.MEAN] * bool(rubric.scale)


def score_job(
    config: RunConfig,
    rubric: Rubric,
    scan: DatasetScan,
    decides: Deciding | None = None,
) -> Job[Case, ScoreSummary]:
    """Grade every scanned case; the summary's numbers are the answers' scores, gated.
    With `decides.sequential`, the cases are graded in a seeded random order and grading
    stops once the gated number's confidence sequence decides; with `decides.labels` (human
    labels of some cases) the summary has the human-corrected pass rate and mean.
    """
    decides = decides or Deciding()
    sequential, labels = decides.sequential, decides.labels

    def fresh() -> Iterable[Case]:
        return iter_cases(scan, requires=rubric.requires, field_map=config.field_map)

    cases = fresh()
    order = None
    if sequential is not None:
        from judgecli.deciding.sequential import shuffled  # only a --sequential run needs it

        # The whole order is fixed before the first verdict (so the cases are held in memory).
        listed = shuffled(cases, sequential.seed)
        order = Sequential(sequential, [case.id for case in listed])
        cases = listed
        fresh = listed.__iter__

    def summarize(results: list[CaseResult]) -> ScoreSummary:
        summary = summarize_score(
            results,
            rubric=rubric,
            models=config.model_names,
            correction=decides.correction,
            seed=config.seed,
        )
        if labels is None:
            return summary
        # Only a run with --labels needs what corrects for them (PPI++, the labels' reader).
        from judgecli.deciding.corrected import corrected_fields

        corrected = corrected_fields(
            results, labels, gated_metrics(rubric), no_interval=summary.no_interval
        )
        return summary.model_copy(update=corrected)

    return Job(
        config=config,
        plan=GradingPlan.of(config, rubric),
        items=cases,
        total=len(scan.lines),
        grade=grade_pointwise,
        ending=Ending(summarize, gate=decides.gate),
        warnings=scan.warnings,
        sequential=order,
        fresh=fresh,
    )
