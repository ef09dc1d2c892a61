"""`judge refine`: a generator answers each case, the judges grade the answer, and an answer
below the bar is regenerated with the judges' feedback until it passes or the attempts run
out (the self-refine loop of Spring AI's SelfRefineEvaluationAdvisor). The loop's rules (the
feedback template, the judges' advice, the success bar) are `grading.feedback`'s, shared
with the Python API's runtime guard.

Generator calls go through the same JudgeClient as the judges' (limits, retries, cache,
budget), without a response_format, and a generator reply is never parsed as a verdict.
Each case is one results.jsonl line: the last answer's verdict, every judge call of every
attempt in `judgements`, and every attempt (answer, verdict, feedback, spend) in `attempts`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judgecli.errors import InputError
from judgecli.grading.feedback import (
    DEFAULT_FEEDBACK_TEMPLATE,
    check_template,
    feedback_of,
    reaches_bar,
    render_feedback,
    self_preference_warning,
    success_bar,
)
from judgecli.grading.grade import GradingPlan, grade_pointwise
from judgecli.inputs.conversation import refuse_conversations
from judgecli.inputs.dataset import Case, DatasetScan, iter_cases
from judgecli.judge.protocol import JudgeCallError, JudgeClient, JudgeRequest, Message
from judgecli.result import CaseResult, CaseStatus, Judgement
from judgecli.rubric import Rubric
from judgecli.running.job import Ending, Job
from judgecli.settings.config import RunConfig
from judgecli.settings.judges import ModelSettings
from judgecli.store import ANSWERS, RunStore
from judgecli.summary.facts import Usage
from judgecli.summary.refine import RefineSummary, summarize_refine
from judgecli.usage import Metered


class GenerationHead(BaseModel):
    """A generation's first key, in a base of its own so that it stays first in an attempt's
    `generation` object (pydantic lays out base fields first).
    """

    model: str


class Generation(Metered, GenerationHead):
    """What one generator call cost (tokens, cost and latency from Metered)."""

    model_config = ConfigDict(frozen=True)

    calls: int = 0
    """HTTP calls made, transport retries included (0 when served from the cache)."""
    cached: bool = False


class Attempt(BaseModel):
    """One answer of a case and the judges' verdict on it (an item of `attempts`)."""

    model_config = ConfigDict(frozen=True)

    attempt: int
    """0 for the case's own `output`, then 1, 2, ... for generated answers."""
    answer: str | None = None
    score: float | None = None
    choice: str | None = None
    passed: bool | None = None
    """Whether the answer met the success bar."""
    feedback: str | None = None
    """What the judges said to improve (their `feedback`, else their reasoning)."""
    error: str | None = None
    generation: Generation | None = None
    judgements: list[Judgement] = Field(default_factory=list)

    @property
    def cost_generation_usd(self) -> float:
        """What generating this answer cost."""
        return self.generation.cost_usd if self.generation else 0.0

    @property
    def cost_judging_usd(self) -> float:
        """What judging this answer cost."""
        return sum(j.cost_usd for j in self.judgements)


@dataclass(frozen=True)
class RefineSettings:
    """How answers are generated and when the loop stops."""

    generator: ModelSettings
    success_rating: float | None
    """Pointwise: the score an answer must reach; None = the rubric's pass_at."""
    max_attempts: int
    """Generated answers per case at most."""
    feedback_template: str = DEFAULT_FEEDBACK_TEMPLATE
    system: str | None = None
    """The generator's system message when the case has no `system` of its own."""
    temperature: float = 0.0
    max_tokens: int | None = None


def generator_messages(
    case: Case, settings: RefineSettings, previous: Attempt | None
) -> list[Message]:
    """The generator's request: the case's (or --system) system message, the input, and
    after a failed attempt the previous answer and its feedback in the template.
    """
    system = case.metadata.get("system")
    system = system if isinstance(system, str) else settings.system
    user = case.input or ""
    if previous is not None:
        extra = render_feedback(
            settings.feedback_template,
            answer=previous.answer or "",
            feedback=previous.feedback or "",
        )
        user = f"{user}\n\n{extra}"
    messages: list[Message] = [{"role": "system", "content": system}] if system else []
    return [*messages, {"role": "user", "content": user}]


async def generate(
    client: JudgeClient, settings: RefineSettings, messages: list[Message]
) -> tuple[str, Generation]:
    """One generated answer (JudgeCallError when the call fails for good)."""
    request = JudgeRequest(
        model=settings.generator.name,
        messages=messages,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
    )
    reply = await client.complete(request)
    # Cached like a verdict: a re-run (or --resume) asks the same request and pays nothing.
    client.remember(request, reply)
    return reply.text, Generation(
        model=request.model,
        **reply.token_fields(),
        latency_s=reply.latency_s,
        calls=reply.attempts,
        cached=reply.cached,
    )


async def judge_answer(
    client: JudgeClient,
    plan: GradingPlan,
    bar: float | None,
    case: Case,
    number: int,
    answer: str,
    generation: Generation | None,
) -> Attempt:
    """Grade one answer with the rubric; passed means it reached the bar."""
    graded = await grade_pointwise(client, plan, case.model_copy(update={"output": answer}))
    common: dict[str, Any] = {
        "attempt": number,
        "answer": answer,
        "generation": generation,
        "judgements": graded.judgements,
    }
    if graded.status is CaseStatus.FAILED:
        return Attempt(error=graded.error, **common)
    passed = reaches_bar(bar, score=graded.score, passed=graded.passed)
    return Attempt(
        score=graded.score,
        choice=graded.choice,
        passed=passed,
        feedback=feedback_of(graded.judgements),
        **common,
    )


async def refine_case(
    client: JudgeClient, plan: GradingPlan, settings: RefineSettings, case: Case
) -> CaseResult:
    """Generate and judge until an answer passes or `max_attempts` answers were generated;
    the last answer is kept either way. A failed call makes the case failed (--retry-failed).
    """
    bar = success_bar(plan.rubric, settings.success_rating)
    attempts: list[Attempt] = []
    if case.output is not None:
        attempts.append(await judge_answer(client, plan, bar, case, 0, case.output, None))
    generated = 0
    while generated < settings.max_attempts and not (attempts and attempts[-1].passed):
        if attempts and attempts[-1].error:
            break
        messages = generator_messages(case, settings, attempts[-1] if attempts else None)
        generated += 1
        try:
            answer, generation = await generate(client, settings, messages)
        except JudgeCallError as err:
            attempts.append(Attempt(attempt=generated, error=f"generator: {err.reason}"))
            break
        attempts.append(await judge_answer(client, plan, bar, case, generated, answer, generation))
    return case_result(plan, case, attempts)


def case_result(plan: GradingPlan, case: Case, attempts: list[Attempt]) -> CaseResult:
    """The results.jsonl line of a refined case: the last attempt's verdict, every attempt."""
    last = attempts[-1]
    common: dict[str, Any] = {
        "id": case.id,
        "category": case.category,
        "rubric_hash": plan.rubric.content_hash,
        "judgements": [j for a in attempts for j in a.judgements],
        "attempts": [a.model_dump(mode="json", exclude_none=True) for a in attempts],
    }
    if last.error is not None:
        return CaseResult(status=CaseStatus.FAILED, error=last.error, **common)
    return CaseResult(
        status=CaseStatus.OK, score=last.score, choice=last.choice, passed=last.passed, **common
    )


def attempts_of(result: CaseResult) -> list[Attempt]:
    """A results line's attempts as models (InputError when the line is not a refine run's)."""
    try:
        return [Attempt.model_validate(a) for a in result.attempts or []]
    except ValidationError as err:
        raise InputError(
            f"case {result.id!r}: not a refine results line ({err.errors()[0]['msg']})",
            hint="resume a run that `judge refine` made",
        ) from None


def generation_usage(attempts: list[list[Attempt]]) -> Usage:
    """Calls, tokens and cost of every generator call (the judges' are in `judgements`)."""
    usage = Usage()
    for g in (a.generation for case in attempts for a in case if a.generation is not None):
        usage.calls += g.calls
        usage.retries += max(g.calls - 1, 0)
        usage.cached += g.cached
        usage.add_tokens(g)
    return usage


def answer_row(case: Case, result: CaseResult) -> dict[str, Any] | None:
    """answers.jsonl: the case with its final answer (a dataset `judge score` reads)."""
    attempts = attempts_of(result)
    if result.status is not CaseStatus.OK or not attempts:
        return None
    row: dict[str, Any] = {"id": case.id, "input": case.input, "output": attempts[-1].answer}
    for name in ("reference", "context", "category"):
        if (value := getattr(case, name)) is not None:
            row[name] = value
    generated = sum(1 for a in attempts if a.attempt > 0)
    return row | {
        "passed": bool(result.passed),
        "attempts": generated,
        "outcome": "passed" if result.passed else "exhausted",
    }


def refine_job(
    config: RunConfig, rubric: Rubric, scan: DatasetScan, settings: RefineSettings
) -> Job[Case, RefineSummary]:
    """Refine every scanned case; answers.jsonl holds the final answers, the summary how
    many passed and after how many attempts.
    """
    check_template(settings.feedback_template)
    bar = success_bar(rubric, settings.success_rating)
    judges = config.model_names
    warning = self_preference_warning(settings.generator.name, judges)
    plan = GradingPlan.of(config, rubric)
    # The generator rides in the run's client: one cache, limiter (rpm/tpm are per model),
    # retry policy and budget for every call.
    if settings.generator.name not in judges:
        config = config.model_copy(update={"models": [*config.models, settings.generator]})

    async def refine(client: JudgeClient, plan: GradingPlan, case: Case) -> CaseResult:
        return await refine_case(client, plan, settings, case)

    def cases() -> Iterator[Case]:
        return iter_cases(scan, requires=["input"], field_map=config.field_map)

    refuse_conversations(cases(), scan.source)

    def summarize(results: list[CaseResult]) -> RefineSummary:
        attempts = [attempts_of(r) for r in results]
        return summarize_refine(
            results,
            attempts,
            rubric=rubric,
            judges=judges,
            generator=settings.generator.name,
            generation_usage=generation_usage(attempts),
            max_attempts=settings.max_attempts,
            success_rating=bar,
            seed=config.seed,
        )

    def write_answers(store: RunStore, results: list[CaseResult]) -> list[CaseResult]:
        by_id = {r.id: r for r in results}
        rows = [
            row
            for case in cases()
            if case.id in by_id and (row := answer_row(case, by_id[case.id])) is not None
        ]
        store.write_jsonl(ANSWERS, rows)
        return results

    return Job(
        config=config,
        plan=plan,
        items=cases(),
        total=len(scan.lines),
        grade=refine,
        ending=Ending(summarize, write_files=write_answers),
        warnings=[*scan.warnings, *([warning] if warning else [])],
    )
