"""`judge score`: grade every case of a dataset with a pointwise or binary rubric."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from judgecli.config import RunConfig
from judgecli.dataset import Case, DatasetScan, iter_cases
from judgecli.errors import RubricError
from judgecli.grading import GradingPlan, grade_pointwise
from judgecli.job import Ending, Job
from judgecli.rubric import Rubric, RubricKind
from judgecli.summary.score import ScoreSummary, summarize_score


def check_rubric_kind(rubric: Rubric, path: Path) -> None:
    """`score` grades one answer at a time: pairwise rubrics belong to `judge pairwise`."""
    if rubric.kind is RubricKind.PAIRWISE:
        raise RubricError(
            f"{path}: rubric {rubric.name!r} is pairwise",
            hint="use `judge pairwise OLD NEW` with it",
        )


def score_job(config: RunConfig, rubric: Rubric, scan: DatasetScan) -> Job[Case, ScoreSummary]:
    """Grade every scanned case; the summary's numbers are the answers' scores."""
    return Job(
        config=config,
        plan=GradingPlan.of(config, rubric),
        items=iter_cases(scan, requires=rubric.requires, field_map=config.field_map),
        total=len(scan.lines),
        grade=grade_pointwise,
        ending=Ending(partial(summarize_score, rubric=rubric, models=config.model_names)),
        warnings=scan.warnings,
    )
