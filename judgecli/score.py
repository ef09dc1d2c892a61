"""`judge score`: grade every case of a dataset with a pointwise or binary rubric."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from judgecli.cascade import plan_cascade, recorded_rule, summarize_tiers, tiered
from judgecli.config import RunConfig
from judgecli.dataset import DatasetScan, iter_cases
from judgecli.errors import RubricError
from judgecli.grading import GradingPlan, grade_pointwise
from judgecli.result import CaseResult
from judgecli.rubric import Rubric, RubricKind
from judgecli.run import finish_run, judge_all
from judgecli.store import RESULTS, read_results
from judgecli.summary.run import RunSummary
from judgecli.summary.score import summarize_pointwise


@dataclass(frozen=True)
class ScoreOutcome:
    """A finished score run: where it is and what it found."""

    run_dir: Path
    summary: RunSummary


def check_rubric_kind(rubric: Rubric, path: Path) -> None:
    """`score` grades one answer at a time: pairwise rubrics belong to `judge pairwise`."""
    if rubric.kind is RubricKind.PAIRWISE:
        raise RubricError(
            f"{path}: rubric {rubric.name!r} is pairwise",
            hint="use `judge pairwise OLD NEW` with it",
        )


def score_dataset(
    config: RunConfig,
    rubric: Rubric,
    scan: DatasetScan,
    *,
    argv: list[str],
    on_result: Callable[[CaseResult], None],
    warnings: list[str],
    step_summary: Path | None = None,
) -> ScoreOutcome:
    """Judge the scanned cases, write the run directory, and summarise it."""
    plan = GradingPlan.of(config, rubric)
    cascade = plan_cascade(plan, config.screen_name, config.escalate)
    config = recorded_rule(config, cascade)
    cases = iter_cases(scan, requires=rubric.requires, field_map=config.field_map)
    grade = tiered(grade_pointwise, plan, cascade)
    run_dir = judge_all(
        config,
        rubric,
        cases,
        grade,
        argv=argv,
        on_result=on_result,
        warnings=warnings,
        total=len(scan.lines),
    )
    results = list(read_results(run_dir / RESULTS))
    summary = summarize_pointwise(
        results,
        rubric=rubric,
        models=config.model_names,
        command=config.command,
    )
    summary.cascade = summarize_tiers(results, config, cascade)
    summary.warnings.extend(warnings)
    finish_run(
        run_dir,
        summary,
        step_summary=step_summary,
        results=results,
        failure_limit=config.max_failures,
        total=len(scan.lines),
    )
    return ScoreOutcome(run_dir=run_dir, summary=summary)
