"""`qualify_judge`: a judge's agreement with human labels on labelled judge sets, gated on
its lower bound, and the qualification record, as `judge qualify` does (docs/qualify.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgecli.api.argv import command_line
from judgecli.api.jobs import offered
from judgecli.api.runs import Preparing, Run, run_prepared
from judgecli.api.settings import number, read_settings
from judgecli.commands.qualify import prepare_qualify
from judgecli.settings.flags import (
    CASCADE_FLAGS,
    CHECKLIST_FLAGS,
    SCALE_OUT_FLAGS,
    SUBSET_FLAGS,
)

if TYPE_CHECKING:
    from judgecli.result import CaseResult
    from judgecli.rubric import Rubric
    from judgecli.summary.qualify import QualifySummary


def qualify_judge(
    sets: Sequence[str | Path] = (),
    *,
    rubric: str | Path | Rubric = "pairwise",
    model: str | Sequence[str] | None = None,
    api_base: str | None = None,
    out: str | Path | None = None,
    cache: bool = True,
    min_agreement: float | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    **settings: Any,
) -> Run[QualifySummary]:
    """Measure a judge on human-labelled judge sets and gate it: `judge qualify`.

    Args:
        sets: Bundled sets' names (`"llmbar-natural"`, `"llmbar-adversarial"`,
            `"mt-bench-human"`) or paths of your own labelled JSONL (default: every bundled
            set, for a pairwise rubric).
        rubric: The rubric qualified (default: the library's `pairwise`).
        model: The judge, or a list for a panel (None: the rubric's).
        api_base: An OpenAI-compatible server's endpoint.
        out: The run directory (None: a new runs/<UTC time>-qualify-<rubric>).
        cache: False: no reply cache.
        min_agreement: The gate: every set's agreement lower bound must reach this.
        on_result: Called with each case's result as it is written.
        **settings: The judging flags (no cascade, subsets or scale-out).

    Returns:
        The finished run (`summary.sets`, `summary.gate`); a complete run's record is
        `run_dir / "qualification.json"`.
    """
    read = read_settings(
        {"model": model, "api_base": api_base, "out": out, "cache": cache, **settings},
        caller="qualify_judge",
        flags=offered(CASCADE_FLAGS | SCALE_OUT_FLAGS | CHECKLIST_FLAGS | SUBSET_FLAGS),
        own=("sets", "rubric", "min_agreement"),
    )
    floor = (
        None if min_agreement is None else number("qualify_judge", "min_agreement", min_agreement)
    )
    named = [str(s) for s in sets]
    with Preparing("qualify", rubric, read.flags) as prep:
        job = prepare_qualify(prep.rubric, prep.flags, named, floor)
        argv = command_line(
            "qualify",
            [],
            prep.flags,
            None,
            ("--rubric", prep.rubric_word, None),
            ("--set", named or None, None),
            ("--min-agreement", floor, None),
        )
        return run_prepared(job, argv=argv, on_result=on_result)
