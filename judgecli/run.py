"""What every judging command does around its cases: open the run directory, record how
the run was made, build the judge client, and write the summary and reports at the end.
"""

from __future__ import annotations

import importlib.metadata
import platform
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from judgecli import __version__
from judgecli.config import RunConfig
from judgecli.judge import JudgeClient, LiteLLMClient
from judgecli.limits import Limits
from judgecli.report import render_markdown
from judgecli.result import CaseResult
from judgecli.rubric import Rubric
from judgecli.runner import run_cases, run_sync
from judgecli.stats.summary import RunSummary
from judgecli.store import REPORT_MD, RUN_INFO, SUMMARY, RunStore, append_step_summary

T = TypeVar("T")


def package_version(name: str) -> str | None:
    """Installed version of a package, or None."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def run_info(config: RunConfig, rubric: Rubric, argv: list[str]) -> dict[str, Any]:
    """run.json: enough to reproduce the run. API keys are never part of it."""
    settings = config.model_dump(mode="json", exclude={"models"})
    return {
        "command": config.command,
        "argv": argv,
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "models": [m.model_dump(mode="json", exclude={"api_key"}) for m in config.models],
        "rubric": {"name": rubric.name, "version": rubric.version, "hash": rubric.content_hash},
        "config": settings,
        "versions": {
            "judgecli": __version__,
            "litellm": package_version("litellm"),
            "python": platform.python_version(),
        },
    }


def open_run(config: RunConfig, rubric: Rubric, argv: list[str]) -> RunStore:
    """Create the run directory and write run.json."""
    store = RunStore.create(config.out)
    store.write_json(RUN_INFO, run_info(config, rubric, argv))
    return store


def make_client(config: RunConfig) -> LiteLLMClient:
    """The LiteLLM-backed judge client under the run's limits (call inside the event loop)."""
    limits = Limits(concurrency=config.concurrency, rpm=config.rpm, tpm=config.tpm)
    return LiteLLMClient(
        config.models, limits, max_retries=config.max_retries, timeout_s=config.timeout_s
    )


def judge_all(
    config: RunConfig,
    rubric: Rubric,
    items: Iterable[T],
    grade: Callable[[JudgeClient, T], Awaitable[CaseResult]],
    *,
    argv: list[str],
    on_result: Callable[[CaseResult], None],
    warnings: list[str],
) -> Path:
    """Open the run directory, grade every item under the run's limits, close the results.

    Returns the run directory. Unpriced models add a warning to `warnings`.
    """
    store = open_run(config, rubric, argv)

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

            async def one(item: T) -> CaseResult:
                return await grade(client, item)

            await run_cases(items, one, concurrency=config.concurrency, sink=store, events=Events())
        finally:
            await client.aclose()

    try:
        run_sync(main())
    finally:
        store.close()
    return store.path


def finish_run(run_dir: Path, summary: RunSummary, *, step_summary: Path | None = None) -> None:
    """Write summary.json and report.md (and append the report to a CI step summary)."""
    store = RunStore(run_dir)
    store.write_json(SUMMARY, summary.model_dump(mode="json", exclude_none=True))
    report = render_markdown(summary)
    store.write_text(REPORT_MD, report)
    if step_summary is not None:
        append_step_summary(step_summary, report)
