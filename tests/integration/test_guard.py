"""Issue 31: the runtime guard against the simulator, through real LiteLLM over HTTP.

The generation function is the simulator's own generator (`judgecli.simulator.generator`,
what `judge refine --generator openai/gen` is answered with), called in-process: vague at
first, better with each round of feedback that quotes its previous answer. The judge is
the simulated `openai/sim`, which grades it deterministically.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

import pytest

from judgecli import Guard, GuardResult, guard
from judgecli.errors import BudgetExceededError, GradeError
from judgecli.simulator.generator import generated_answer

REFINED = "How do I keep basil alive on a windowsill?"
"""The simulated judge fails the first two drafts of this one and passes the third."""
STUCK = "Why is the sky blue?"
"""No draft of this one reaches 3 with the simulated judge."""
QUESTIONS = [
    REFINED,
    STUCK,
    "How do I cook rice?",
    "What makes sourdough bread rise?",
    "How should I water a cactus in winter?",
    "Why do cats purr when they are content?",
    "How can I remove rust from garden tools?",
    "What is the best way to store fresh herbs?",
]


class SimulatedWriter:
    """The simulator's generator as a generation function: the feedback is appended to the
    prompt, as `judge refine` sends a retry. Records what each prompt was told (from any
    thread)."""

    def __init__(self) -> None:
        self.told: dict[str, list[str | None]] = defaultdict(list)
        self.lock = threading.Lock()

    def __call__(self, prompt: str, feedback: str | None) -> str:
        with self.lock:
            self.told[prompt].append(feedback)
        content = prompt if feedback is None else f"{prompt}\n\n{feedback}"
        return generated_answer([{"role": "user", "content": content}])


@pytest.fixture
def sim(judge_server, monkeypatch) -> dict[str, str]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    return {"model": "openai/sim", "api_base": f"{judge_server.url}/v1"}


def test_an_answer_is_regenerated_with_the_feedback_until_the_judge_passes_it(sim, judge_server):
    writer = SimulatedWriter()
    with guard(writer, rubric="helpfulness", **sim) as guarded:
        result = guarded(REFINED)
    assert result.passed
    assert [a.passed for a in result.attempts] == [False, False, True]
    assert result.answer == result.attempts[-1].answer
    assert result.answer.startswith("Regarding keep, basil, alive")
    first, second, third = writer.told[REFINED]
    assert first is None
    assert second is not None
    assert third is not None
    assert result.attempts[0].answer in second
    assert result.attempts[0].feedback in second
    assert result.attempts[1].answer in third
    assert len(judge_server.requests) == 3
    assert result.usage.calls == 3


def test_when_no_answer_passes_the_guard_stops_at_max_attempts_and_says_so(sim, judge_server):
    with guard(SimulatedWriter(), rubric="helpfulness", max_attempts=3, **sim) as guarded:
        result = guarded(STUCK)
    assert not result.passed
    assert len(result.attempts) == 3
    assert not any(a.passed for a in result.attempts)
    best = max(a.verdict.score or 0 for a in result.attempts)
    assert result.verdict.score == best
    assert len(judge_server.requests) == 3


def test_a_second_identical_call_is_answered_by_the_cache_and_pays_nothing(sim, judge_server):
    with guard(SimulatedWriter(), rubric="helpfulness", price=(20, 80), **sim) as guarded:
        first = guarded(REFINED)
        asked = len(judge_server.requests)
        second = guarded(REFINED)
    assert first.usage.calls == 3
    assert first.usage.cost_usd > 0
    assert (second.usage.calls, second.usage.cached, second.usage.cost_usd) == (0, 3, 0.0)
    assert second.answer == first.answer
    assert second.passed == first.passed
    assert len(judge_server.requests) == asked


def test_max_cost_spans_every_call_of_the_guard(sim):
    # Each call costs far less than the cap; only their sum can reach it.
    cap = 0.1
    done: list[GuardResult] = []

    def ask_until_stopped(guarded: Guard) -> None:
        for n in range(100):
            done.append(guarded(f"Question {n}: how do I cook rice?"))

    settings = {"price": (20, 80), "max_tokens": 256, "max_cost": cap, "cache": False}
    with (
        guard(SimulatedWriter(), rubric="helpfulness", max_attempts=1, **settings, **sim) as g,
        pytest.raises(BudgetExceededError, match=r"of --max-cost \$0.1"),
    ):
        ask_until_stopped(g)
    assert len(done) >= 2
    assert max(r.usage.cost_usd for r in done) < cap / 2
    assert sum(r.usage.cost_usd for r in done) <= cap


def test_the_sync_guard_from_eight_threads_at_once_keeps_each_call_its_own(sim, judge_server):
    def run(writer: SimulatedWriter, threads: int) -> list[GuardResult]:
        with (
            guard(writer, rubric="helpfulness", cache=False, **sim) as guarded,
            ThreadPoolExecutor(threads) as pool,
        ):
            return list(pool.map(guarded, QUESTIONS))

    alone = run(SimulatedWriter(), 1)
    asked_alone = len(judge_server.requests)
    writer = SimulatedWriter()
    together = run(writer, 8)
    assert [r.answer for r in together] == [r.answer for r in alone]
    assert [[a.verdict.score for a in r.attempts] for r in together] == [
        [a.verdict.score for a in r.attempts] for r in alone
    ]
    assert {r.passed for r in together} == {True, False}  # both outcomes were exercised
    for question, result in zip(QUESTIONS, together, strict=True):
        told = writer.told[question]
        assert len(told) == len(result.attempts)
        for attempt, feedback in zip(result.attempts, told[1:], strict=False):
            assert feedback is not None
            assert attempt.answer in feedback
    assert len(judge_server.requests) == 2 * asked_alone


def test_an_async_generation_function_is_awaited_from_the_callers_loop(sim, judge_server):
    writer = SimulatedWriter()

    async def generate(prompt: str, feedback: str | None) -> str:
        await asyncio.sleep(0)
        return writer(prompt, feedback)

    async def main() -> list[GuardResult]:
        async with guard(generate, rubric="helpfulness", **sim) as guarded:
            return await asyncio.gather(*(guarded(q) for q in QUESTIONS[:4]))

    results = asyncio.run(main())
    assert [r.passed for r in results[:2]] == [True, False]
    assert len(judge_server.requests) == sum(len(r.attempts) for r in results)


def test_an_answer_the_judge_cannot_grade_raises_and_is_not_retried(sim, judge_server):
    for _ in range(2):
        judge_server.enqueue("The answer is fine, I'd say 3.")
    writer = SimulatedWriter()
    with (
        guard(writer, rubric="helpfulness", max_retries=1, **sim) as guarded,
        pytest.raises(GradeError) as raised,
    ):
        guarded(REFINED)
    assert raised.value.raw == ("The answer is fine, I'd say 3.",)
    assert writer.told[REFINED] == [None]
    assert len(judge_server.requests) == 2  # the re-ask, then no guess and no retry
