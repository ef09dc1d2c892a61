"""`refine_dataset`: a generator answers each case, the judges grade the answer, and an
answer below the bar is regenerated with their feedback until it passes or the attempts
run out, as `judge refine` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgecli.api.argv import command_line
from judgecli.api.jobs import offered
from judgecli.api.runs import Dataset, Preparing, Run, run_prepared
from judgecli.api.settings import read_settings
from judgecli.commands.jobs import Generating, prepare_refine
from judgecli.settings.flags import (
    CASCADE_FLAGS,
    CHECKLIST_FLAGS,
    REPEAT_FLAGS,
    SCALE_OUT_FLAGS,
)

if TYPE_CHECKING:
    from judgecli.result import CaseResult
    from judgecli.rubric import Rubric
    from judgecli.summary.refine import RefineSummary


def refine_dataset(
    dataset: Dataset,
    *,
    rubric: str | Path | Rubric,
    generator: str,
    model: str | Sequence[str] | None = None,
    api_base: str | None = None,
    out: str | Path | None = None,
    cache: bool = True,
    success_rating: float | None = None,
    max_attempts: int = 3,
    feedback_template: str | None = None,
    system: str | None = None,
    generator_temperature: float = 0.0,
    on_result: Callable[[CaseResult], None] | None = None,
    **settings: Any,
) -> Run[RefineSummary]:
    """Answer each case with `generator`, judge the answer, and retry with the judges'
    feedback until it passes: `judge refine`. The final answers are the run's
    answers.jsonl (a dataset `score_dataset` reads).

    Args:
        dataset: Cases with an `input` (and, if it has one, the `output` judged first): a
            path or rows, kept as RUN_DIR/inputs/dataset.jsonl.
        rubric: A pointwise or binary rubric.
        generator: The LiteLLM model string of the model that writes the answers (through
            `api_base` too, with the judges' limits, cache and budget).
        model: The judge, or a list for a panel (None: the rubric's).
        api_base: An OpenAI-compatible server's endpoint.
        out: The run directory (None: a new runs/<UTC time>-refine-<rubric>).
        cache: False: no reply cache.
        success_rating: The score an answer must reach (default: the rubric's pass_at).
        max_attempts: Answers generated per case at most.
        feedback_template: Text added to the input for a retry; `{answer}` is the previous
            answer, `{feedback}` the judges' advice.
        system: The generator's system message (a case's own `system` wins).
        generator_temperature: The generator's sampling temperature.
        on_result: Called with each case's result as it is written.
        **settings: The judging flags (no cascade, repeats, score mode or scale-out).

    Returns:
        The finished run (`summary.pass_rate_final`, `summary.lift`, ...).
    """
    read = read_settings(
        {"model": model, "api_base": api_base, "out": out, "cache": cache, **settings},
        caller="refine_dataset",
        flags=offered(CASCADE_FLAGS | SCALE_OUT_FLAGS | REPEAT_FLAGS | CHECKLIST_FLAGS),
        own=("dataset", "rubric", "generator", "success_rating", "max_attempts"),
    )
    generating = Generating(
        generator=generator,
        success_rating=success_rating,
        max_attempts=max_attempts,
        feedback_template=feedback_template,
        system=system,
        temperature=generator_temperature,
    )
    with Preparing("refine", rubric, read.flags) as prep:
        path = prep.dataset(dataset, "dataset")
        job = prepare_refine(path, prep.rubric, prep.flags, generating)
        argv = command_line(
            "refine",
            [path],
            prep.flags,
            None,
            ("--rubric", prep.rubric_word, None),
            ("--generator", generator, None),
            ("--success-rating", success_rating, None),
            ("--max-attempts", max_attempts, 3),
            ("--feedback-template", feedback_template, None),
            ("--system", system, None),
            ("--generator-temperature", generator_temperature, 0.0),
        )
        return run_prepared(job, argv=argv, on_result=on_result)
