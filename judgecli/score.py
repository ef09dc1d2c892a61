"""`judge score`: grade every case of a dataset with a pointwise or binary rubric."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from judgecli.config import RunConfig
from judgecli.dataset import Case, DatasetScan, iter_cases
from judgecli.errors import RubricError
from judgecli.grading import GradingPlan, grade_pointwise
from judgecli.result import CaseResult
from judgecli.rubric import Rubric, RubricKind
from judgecli.run import finish_run, make_client, open_run
from judgecli.runner import run_cases, run_sync
from judgecli.stats.summary import RunSummary, summarize_pointwise
from judgecli.store import RESULTS, read_results


@dataclass(frozen=True)
class ScoreOutcome:
    """A finished score run: where it is and what it found."""

    run_dir: Path
    summary: RunSummary


def check_rubric_kind(rubric: Rubric) -> None:
    """`score` grades one answer at a time: pairwise rubrics belong to `judge pairwise`."""
    if rubric.kind is RubricKind.PAIRWISE:
        raise RubricError(
            f"rubric {rubric.name!r} is pairwise", hint="use `judge pairwise OLD NEW` with it"
        )


def score_dataset(
    config: RunConfig,
    rubric: Rubric,
    scan: DatasetScan,
    *,
    argv: list[str],
    on_result: Callable[[CaseResult], None],
    warnings: list[str],
) -> ScoreOutcome:
    """Judge the scanned cases, write the run directory, and summarise it."""
    store = open_run(config, rubric, argv)
    plan = GradingPlan(
        rubric=rubric,
        models=config.model_names,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        max_retries=config.max_retries,
    )
    cases = iter_cases(scan, requires=rubric.requires, field_map=config.field_map)

    class Events:
        def case_done(self, result: CaseResult) -> None:
            on_result(result)

    async def main() -> None:
        client = make_client(config)
        warnings.extend(
            f"{name}: no price known, cost counts as 0 (set --price IN,OUT per 1M tokens)"
            for name in client.unpriced_models()
        )
        try:

            async def grade(case: Case) -> CaseResult:
                return await grade_pointwise(client, plan, case)

            await run_cases(
                cases, grade, concurrency=config.concurrency, sink=store, events=Events()
            )
        finally:
            await client.aclose()

    try:
        run_sync(main())
    finally:
        store.close()
    summary = summarize_pointwise(
        read_results(store.path / RESULTS),
        rubric=rubric,
        models=config.model_names,
        command=config.command,
    )
    summary.warnings.extend(warnings)
    finish_run(store, summary)
    return ScoreOutcome(run_dir=store.path, summary=summary)
