"""What `judge align` does first, from the command line or Python alike: the rubric's kind
checked, the RunConfig built from the shared flags, the labels and the dataset read, the
judge client opened; then the run (`run.align`) on one event loop.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgecli.commands.align.choosing import DEFAULT_FOLDS
from judgecli.commands.align.files import check_out
from judgecli.commands.align.rating import ClientOptimizer, JudgeRater
from judgecli.commands.align.run import AlignPlan, align, file_hash
from judgecli.commands.setup import FoundRubric, judge_config
from judgecli.errors import ConfigError
from judgecli.inputs.dataset import iter_cases, scan_dataset
from judgecli.inputs.labels import LabelSpace, read_labels
from judgecli.judge.cached import CachedJudge
from judgecli.judge.client import LiteLLMClient
from judgecli.judge.protocol import JudgeClient
from judgecli.rubric import RubricKind
from judgecli.running.judging import make_client
from judgecli.settings.config import cache_dir
from judgecli.settings.flags import JudgeFlags
from judgecli.settings.judges import model_settings
from judgecli.store.cache import ReplyCache
from judgecli.summary.align import AlignSummary


@dataclass(frozen=True)
class AlignAsk:
    """`judge align`'s own options."""

    dataset: Path
    labels: Path
    optimizer_model: str | None = None
    test_share: float = 0.3
    min_gain: float | None = None
    folds: int = DEFAULT_FOLDS


REASON_KEYS = ("reason", "note")
"""Where a labels line gives the rater's reason (`note`: what `judge view` writes)."""


def rater_reasons(path: Path) -> dict[str, str]:
    """Each case's first rater reason in a JSONL labels file (none for other formats)."""
    if path.suffix != ".jsonl" or not path.is_file():
        return {}
    found: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if not isinstance(row, dict) or "id" not in row:
            continue
        given = next((row[k] for k in REASON_KEYS if isinstance(row.get(k), str) and row[k]), None)
        if given is not None:
            found.setdefault(str(row["id"]), given)
    return found


def run_align(
    found: FoundRubric,
    flags: JudgeFlags,
    ask: AlignAsk,
    *,
    runner: Callable[[Coroutine[Any, Any, AlignSummary]], AlignSummary] = asyncio.run,
) -> tuple[AlignSummary, Path]:
    """Align ``found``'s rubric; the summary and the run directory. ``runner`` runs the
    run's coroutine (the command line: a loop of its own; the API: its one engine loop).
    """
    rubric = found.rubric
    pointwise = rubric.kind is RubricKind.POINTWISE
    if rubric.kind not in (RubricKind.BINARY, RubricKind.POINTWISE) or not rubric.asks_judge:
        raise ConfigError(
            f"{found.where}: judge align shapes binary and pointwise rubrics, not "
            f"{rubric.kind.value} ones",
            hint="align a binary rubric (e.g. answer-correctness) or a pointwise one with "
            "pass_at; see docs/align.md",
        )
    if pointwise and (rubric.pass_at is None or rubric.graded_each):
        raise ConfigError(
            f"{found.where}: judge align compares a pointwise rubric's pass or fail, and this "
            "one has no pass_at (or grades turns or steps each)",
            hint="add pass_at: N to the rubric (an `extends:` of it will do)",
        )
    if not 0.0 < ask.test_share < 1.0:
        raise ConfigError(
            f"--test-share {ask.test_share:g} must be between 0 and 1", hint="e.g. 0.3"
        )
    config = judge_config("align", rubric, flags)
    check_out(config.out, replace=flags.force)
    if len(config.models) != 1:
        raise ConfigError(
            "judge align shapes one judge: give one --model", hint="e.g. --model openai/gpt-4o-mini"
        )
    optimizer = None
    if ask.optimizer_model is not None:
        api_base = config.models[0].api_base
        optimizer = model_settings(
            [ask.optimizer_model], api_base=api_base, price=None, json_schema=None
        )[0]
    labels = read_labels(ask.labels, LabelSpace.of(rubric))
    scan = scan_dataset(
        ask.dataset,
        requires=rubric.requires,
        field_map=config.field_map,
        only={label.id for label in labels},
    )
    cases = {
        c.id: c for c in iter_cases(scan, requires=rubric.requires, field_map=config.field_map)
    }
    plan = AlignPlan(
        rubric=rubric,
        rubric_ref=str(found.path) if found.path is not None else rubric.name,
        labels=labels,
        labels_hash=file_hash(ask.labels),
        reasons=rater_reasons(ask.labels),
        model=config.models[0].name,
        optimizer_model=ask.optimizer_model,
        test_share=ask.test_share,
        seed=config.seed,
        folds=ask.folds,
        min_gain=ask.min_gain,
        max_failures=config.max_failures,
    )
    client_config = config.model_copy(
        update={"models": [*config.models, *([optimizer] if optimizer else [])]}
    )

    async def run() -> AlignSummary:
        built: list[LiteLLMClient] = []

        def real_client() -> LiteLLMClient:
            built.append(make_client(client_config))
            return built[0]

        # The reply cache, as every judging command has it: a re-run of the same align
        # (same labels, seed, models) is answered from it, the optimizer's replies included.
        client: JudgeClient = (
            CachedJudge(real_client, ReplyCache(cache_dir()), client_config.all_models)
            if config.use_cache
            else real_client()
        )
        try:
            rater = JudgeRater(client, config, cases)
            asker = ClientOptimizer(client, optimizer.name) if optimizer else None
            return await align(plan, cases, rater, asker, config.out)
        finally:
            for made in built:
                await made.aclose()

    return runner(run()), config.out
