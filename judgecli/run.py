"""What every judging command does around its cases: open the run directory, record how
the run was made, build the judge client, and write the summary and reports at the end.
"""

from __future__ import annotations

import importlib.metadata
import platform
from datetime import UTC, datetime
from typing import Any

from judgecli import __version__
from judgecli.config import RunConfig
from judgecli.judge import LiteLLMClient
from judgecli.limits import Limits
from judgecli.report import render_markdown
from judgecli.rubric import Rubric
from judgecli.stats.summary import RunSummary
from judgecli.store import REPORT_MD, RUN_INFO, SUMMARY, RunStore


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


def finish_run(store: RunStore, summary: RunSummary) -> None:
    """Write summary.json and report.md."""
    store.write_json(SUMMARY, summary.model_dump(mode="json", exclude_none=True))
    store.write_text(REPORT_MD, render_markdown(summary))
