"""A guarded call's attempts (api.guard): what it returns (`GuardResult`, each `Attempt`)
and its loop without I/O (`Tries`): what to tell the generation function next, each answer's
verdict judged against the bar, the answer to return. The rules are `judge refine`'s
(`grading.feedback`).
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from judgecli.api.verdicts import Usage, Verdict, usage_of
from judgecli.grading.feedback import feedback_of, reaches_bar, render_feedback
from judgecli.inputs.dataset import Case


@dataclass(frozen=True)
class Rules:
    """A guard's loop: when an answer passes, how many it generates, what a retry is told."""

    max_attempts: int
    """Answers generated per call at most."""
    bar: float | None
    """The score an answer must reach (None: a binary rubric's pass_choice decides)."""
    feedback_template: str
    """What a retry is told: `{answer}` the previous answer, `{feedback}` the advice."""


class Attempt(BaseModel):
    """One answer a guarded call generated, and the judges' verdict on it."""

    model_config = ConfigDict(frozen=True)

    number: int
    """1 for the first answer, 2 for the first retry, ..."""
    answer: str
    """What the generation function returned."""
    verdict: Verdict
    """The judges' verdict on the answer (score, choice, reasoning, judgements, usage)."""
    passed: bool
    """Whether the answer reached the bar: `success_rating`, else the rubric's pass_at (or a
    binary rubric's pass_choice)."""
    feedback: str
    """The judges' advice on the answer (their `feedback`, else their reasoning): what the
    next attempt, if any, was asked to act on."""


class GuardResult(BaseModel):
    """What a guarded call returns: the answer chosen, whether it passed, and every attempt."""

    model_config = ConfigDict(frozen=True)

    answer: str
    """The first answer that passed; when none did, the best scored (the latest of equal
    scores; a binary rubric's last)."""
    passed: bool
    """Whether `answer` reached the bar. False: every attempt was judged below it."""
    verdict: Verdict
    """The judges' verdict on `answer`."""
    attempts: list[Attempt]
    """Every answer generated, in order, with its verdict (at most `max_attempts`)."""
    usage: Usage
    """What judging every attempt cost (the generation function's own calls are not in it)."""


class Tries:
    """One guarded call's loop, without its I/O: what to ask the generation function next,
    each answer's verdict recorded, and the answer to return.
    """

    def __init__(self, rules: Rules, case: Case) -> None:
        self.rules = rules
        self.case = case
        self.attempts: list[Attempt] = []

    @property
    def going(self) -> bool:
        """Whether to generate again: no answer passed yet, and attempts remain."""
        passed = bool(self.attempts) and self.attempts[-1].passed
        return not passed and len(self.attempts) < self.rules.max_attempts

    def feedback(self) -> str | None:
        """What the next generation is told: None the first time, then the feedback
        template filled with the last answer and the judges' advice on it.
        """
        if not self.attempts:
            return None
        last = self.attempts[-1]
        template = self.rules.feedback_template
        return render_feedback(template, answer=last.answer, feedback=last.feedback)

    def answered(self, answer: object) -> Case:
        """The case to judge: the prompt and this answer (TypeError for a non-str answer)."""
        if inspect.isawaitable(answer):
            if inspect.iscoroutine(answer):
                answer.close()
            raise TypeError(
                "guard(): generate returned an awaitable, not a str: define it with `async "
                "def` (guard then returns an AsyncGuard, whose calls are awaited)"
            )
        if not isinstance(answer, str):
            raise TypeError(f"guard(): generate returned {type(answer).__name__}, not a str")
        return self.case.model_copy(update={"output": answer})

    def judged(self, case: Case, verdict: Verdict) -> None:
        """Record an answer's verdict: passed by the guard's bar, the judges' advice."""
        reached = reaches_bar(self.rules.bar, score=verdict.score, passed=verdict.passed)
        self.attempts.append(
            Attempt(
                number=len(self.attempts) + 1,
                answer=case.output or "",
                verdict=verdict,
                passed=bool(reached),
                feedback=feedback_of(verdict.result.judgements),
            )
        )

    def result(self) -> GuardResult:
        """The answer chosen (the one that passed, else the best scored) and every attempt."""
        chosen = self.attempts[-1]
        if not chosen.passed and self.rules.bar is not None:
            # max keeps the first of equals: reversed, the latest (it saw the most feedback).
            chosen = max(reversed(self.attempts), key=score_of)
        judgements = [j for a in self.attempts for j in a.verdict.judgements]
        return GuardResult(
            answer=chosen.answer,
            passed=chosen.passed,
            verdict=chosen.verdict,
            attempts=self.attempts,
            usage=usage_of(judgements),
        )


def score_of(attempt: Attempt) -> float:
    """An attempt's score, for choosing the best (none: below every score)."""
    score = attempt.verdict.score
    return -math.inf if score is None else score
