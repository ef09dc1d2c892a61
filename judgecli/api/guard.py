"""`guard`: a runtime guard around an application's own generation function, the self-refine
loop of `judge refine` (Spring AI's SelfRefineEvaluationAdvisor) as a library.

Each call of a guarded function generates an answer, has a `Judge` grade it, and while it
is below the bar and attempts remain, generates again with the judges' feedback. The loop's
rules are `judge refine`'s (`grading.feedback`: the feedback template, the judges' advice,
the success bar, the self-preference warning); the judging is a `Judge`'s, one per guard,
so its reply cache, rate limits and budget span every call of the guarded function.

The loop itself (`guarded.Tries`) does no I/O: the synchronous `Guard` and the
asynchronous `AsyncGuard` drive the same steps, one calling and waiting, the other awaiting.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, overload

from judgecli.api.cases import as_case
from judgecli.api.guarded import GuardResult, Rules, Tries
from judgecli.api.judge import JUDGE_SETTINGS, Closing, Judge
from judgecli.api.settings import read_settings
from judgecli.errors import ConfigError, JudgeWarning
from judgecli.grading.feedback import (
    DEFAULT_FEEDBACK_TEMPLATE,
    check_template,
    self_preference_warning,
    success_bar,
)
from judgecli.rubric import Rubric
from judgecli.settings.flags import flag_fields

SyncGenerate = Callable[[str, str | None], str]
"""A generation function: (prompt, feedback) → the answer."""
AsyncGenerate = Callable[[str, str | None], Awaitable[str]]
"""The same, as an `async def`."""
Generate = SyncGenerate | AsyncGenerate
GUARD_SETTINGS = JUDGE_SETTINGS - {"field"}
"""A guard's judging flags: a Judge's, but `field` (the guard names the case's fields)."""


class Guarding(Closing):
    """What a Guard and an AsyncGuard share: the Judge, the loop's rules, the checks of a
    call's case, and closing.
    """

    def __init__(self, generate: Generate, judge: Judge, rules: Rules) -> None:
        self.generate = generate
        """The generation function guarded."""
        self.judge = judge
        """The Judge grading every answer (its client, cache, limits and budget are the
        guard's for its life)."""
        self.rules = rules
        """When an answer passes, how many are generated at most, what a retry is told."""

    def tries(
        self, prompt: str, reference: str | None, context: str | Sequence[str] | None
    ) -> Tries:
        """A call's loop, its case checked before anything is generated (DatasetError when
        the rubric requires a field the call did not give).
        """
        fields: dict[str, Any] = {"input": prompt, "output": ""}
        fields |= {"reference": reference} if reference is not None else {}
        if context is not None:
            fields["context"] = context if isinstance(context, str) else list(context)
        case = as_case(fields, field_map={}, requires=self.judge.rubric.requires, name="guard")
        return Tries(self.rules, case)

    def close(self) -> None:
        """Close the guard's Judge (its reply cache connection); a later call reopens it."""
        self.judge.close()

    async def aclose(self) -> None:
        """Close the guard's Judge, from async code (see `close`)."""
        await self.judge.aclose()


class Guard(Guarding):
    """A guarded synchronous generation function (what `guard` returns for a `def`): call it
    with a prompt; it generates, judges and retries, and returns a `GuardResult`. Safe to
    call from many threads at once (they share its Judge: its limits and its budget).
    """

    generate: SyncGenerate

    def __call__(
        self,
        prompt: str,
        *,
        reference: str | None = None,
        context: str | Sequence[str] | None = None,
    ) -> GuardResult:
        """Generate an answer to `prompt`, judge it, and retry with the judges' feedback
        until one passes or `max_attempts` answers were generated.

        Args:
            prompt: The request: passed to the generation function, and judged as the
                case's `input`.
            reference: A reference answer, for rubrics that grade against one (the judges
                see it; the generation function does not).
            context: Retrieved passages, for rubrics that check an answer against them (a
                str or a list of str; the judges see them, the generation function does
                not).

        Returns:
            The answer (the one that passed, else the best scored), whether it passed, every
            attempt with its verdict, and what judging cost.

        Raises:
            judgecli.errors.GradeError: The judges could not grade an answer: no answer is
                ever returned unjudged.
            judgecli.errors.JudgeUnavailableError: The judge cannot be reached or used.
            judgecli.errors.BudgetExceededError: The next judge call would pass `max_cost`.
            judgecli.errors.DatasetError: The rubric requires a field the call did not give.
            TypeError: The generation function returned something other than a str.
        """
        tries = self.tries(prompt, reference, context)
        while tries.going:
            case = tries.answered(self.generate(prompt, tries.feedback()))
            tries.judged(case, self.judge.grade(case))
        return tries.result()


class AsyncGuard(Guarding):
    """A guarded `async def` generation function (what `guard` returns for one): await a
    call with a prompt for a `GuardResult`, as with `Guard`. Calls from one or many event
    loops share its Judge.
    """

    generate: AsyncGenerate

    async def __call__(
        self,
        prompt: str,
        *,
        reference: str | None = None,
        context: str | Sequence[str] | None = None,
    ) -> GuardResult:
        """Generate an answer to `prompt`, judge it, and retry with the judges' feedback
        (see `Guard`'s call: the same arguments, result and errors), awaiting each step.
        """
        tries = self.tries(prompt, reference, context)
        while tries.going:
            case = tries.answered(await self.generate(prompt, tries.feedback()))
            tries.judged(case, await self.judge.agrade(case))
        return tries.result()


@overload
def guard(
    generate: AsyncGenerate,
    *,
    rubric: str | Path | Rubric,
    model: str | Sequence[str] | None = None,
    api_base: str | None = None,
    max_attempts: int = 3,
    success_rating: float | None = None,
    feedback_template: str | None = None,
    generator: str | None = None,
    **settings: Any,
) -> AsyncGuard: ...


@overload
def guard(
    generate: SyncGenerate,
    *,
    rubric: str | Path | Rubric,
    model: str | Sequence[str] | None = None,
    api_base: str | None = None,
    max_attempts: int = 3,
    success_rating: float | None = None,
    feedback_template: str | None = None,
    generator: str | None = None,
    **settings: Any,
) -> Guard: ...


def guard(
    generate: Generate,
    *,
    rubric: str | Path | Rubric,
    model: str | Sequence[str] | None = None,
    api_base: str | None = None,
    max_attempts: int = 3,
    success_rating: float | None = None,
    feedback_template: str | None = None,
    generator: str | None = None,
    **settings: Any,
) -> Guard | AsyncGuard:
    """Guard a generation function with judges: each call generates an answer, has the
    judges grade it, and retries with their feedback until an answer passes or
    `max_attempts` answers were generated, as `judge refine` does for each case.

    `generate(prompt, feedback)` returns the answer. `feedback` is None the first time;
    on a retry it is the feedback template filled with the previous answer and the judges'
    advice, to append to the prompt (as `judge refine` does) or send as a further turn. An
    `async def` makes an AsyncGuard, whose calls are awaited; a `def`, a Guard.

    When no answer passes, the call returns the best scored one with `passed` False; an
    answer the judges could not grade raises GradeError (never returned as if judged).
    Whatever `generate` raises propagates as it is, nothing judged.

    Args:
        generate: The generation function, `def generate(prompt: str, feedback: str |
            None) -> str` or the same `async def`.
        rubric: A pointwise or binary rubric: a library rubric's name, a YAML file, or a
            `Rubric`.
        model: The judge's LiteLLM model string, or a list for a panel (None: the
            rubric's `judge: {model}`).
        api_base: An OpenAI-compatible server's endpoint, as `--api-base`.
        max_attempts: Answers generated per call at most (at least 1).
        success_rating: The score an answer must reach (default: the rubric's pass_at; a
            binary rubric's pass_choice is its bar).
        feedback_template: What a retry is told; `{answer}` is the previous answer,
            `{feedback}` the judges' advice (default: `judge refine`'s).
        generator: The model string `generate` calls, if it is one: a warning
            (JudgeWarning) when that model also judges (self-preference).
        **settings: The judging flags a `Judge` takes (`temperature`, `repeats`,
            `score_mode`, `screen`, `concurrency`, `rpm`, `tpm`, `max_retries`,
            `timeout`, `max_cost`, `seed`, `cache=False`, ...); `max_cost` spans every
            call of the guard.

    Returns:
        A `Guard` (or, for an `async def`, an `AsyncGuard`): call it with a prompt for a
        `GuardResult`.

    Raises:
        TypeError: A setting that does not exist, or a `generate` that is not callable.
        judgecli.errors.InputError: A rubric that cannot be found or read, a pairwise one,
            a success_rating off its scale, a feedback template without `{feedback}`, or
            settings that do not make a runnable configuration.
    """
    if not callable(generate):
        raise TypeError(f"guard() needs a generation function, not {type(generate).__name__}")
    read_settings(
        {"model": model, "api_base": api_base, **settings},
        caller="guard",
        flags=[shared for shared in flag_fields() if shared.name in GUARD_SETTINGS],
        own=("rubric", "max_attempts", "success_rating", "feedback_template", "generator"),
    )
    attempts = checked_attempts(max_attempts)
    template = feedback_template if feedback_template is not None else DEFAULT_FEEDBACK_TEMPLATE
    check_template(template)
    judge = Judge(model, rubric=rubric, api_base=api_base, **settings)
    bar = success_bar(judge.rubric, success_rating)
    if generator is not None:
        judges = [m.name for m in judge.config.all_models]
        if (warning := self_preference_warning(generator, judges)) is not None:
            warnings.warn(JudgeWarning(warning), stacklevel=2)
    kind = AsyncGuard if is_async(generate) else Guard
    return kind(generate, judge, Rules(max_attempts=attempts, bar=bar, feedback_template=template))


def checked_attempts(max_attempts: object) -> int:
    """`max_attempts`, a whole number of at least 1 (TypeError or ConfigError otherwise)."""
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, int):
        raise TypeError(
            f"guard() argument 'max_attempts' must be an int, not {type(max_attempts).__name__}"
        )
    if max_attempts < 1:
        raise ConfigError(f"max_attempts={max_attempts} is out of range: at least 1")
    return max_attempts


def is_async(generate: object) -> bool:
    """Whether a generation function is an `async def` (or an object whose `__call__` is)."""
    call = getattr(generate, "__call__", None)  # noqa: B004 - the method itself is inspected
    return inspect.iscoroutinefunction(generate) or inspect.iscoroutinefunction(call)
