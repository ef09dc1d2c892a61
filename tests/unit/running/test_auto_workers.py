"""Issue 36: a run without --workers forks one process per core only when the calls the reply
cache cannot answer are enough to pay for it; the estimate sends nothing."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from judgecli.judge.cached import CachedJudge
from judgecli.judge.protocol import JudgeCallError, JudgeClient, JudgeReply, JudgeRequest
from judgecli.result import CaseResult, CaseStatus
from judgecli.running import auto_workers
from judgecli.running.auto_workers import (
    AUTO_MIN_CALLS,
    PROBE_CASES,
    CacheProbe,
    choose_workers,
    choose_workers_for,
    uncached_calls,
)
from judgecli.settings.config import RunConfig
from judgecli.settings.judges import ModelSettings
from judgecli.store.cache import ReplyCache

MODEL = ModelSettings(name="openai/sim", api_base="http://127.0.0.1:9/v1")


@dataclass(frozen=True)
class Item:
    id: str


def request(item: Item, order: int = 0) -> JudgeRequest:
    return JudgeRequest(
        model=MODEL.name, messages=[{"role": "user", "content": f"{item.id} {order}"}]
    )


def grader(calls: int):
    """A grading that asks `calls` prompts of a case at once (both orders: 2) and fails
    the case when a call fails, as ask_judge does."""

    async def grade(client: JudgeClient, item: Item) -> CaseResult:
        assert client.accepts_schema(MODEL.name)
        status = CaseStatus.OK
        for order in range(calls):
            try:
                await client.complete(request(item, order))
            except JudgeCallError:
                status = CaseStatus.FAILED
        return CaseResult(id=item.id, status=status, rubric_hash="sha256:0")

    return grade


def cache_with(tmp_path: Path, items: list[Item], calls: int) -> ReplyCache:
    cache = ReplyCache(tmp_path)
    keyed = CachedJudge(lambda: None, cache, [MODEL])  # type: ignore[arg-type,return-value]
    for item in items:
        for order in range(calls):
            keyed.remember(request(item, order), JudgeReply(text='{"score": 1}'))
    return cache


def test_the_probe_answers_from_the_cache_and_counts_every_call_it_could_not(tmp_path):
    items = [Item(f"c{i}") for i in range(4)]
    cache = cache_with(tmp_path, items[:3], calls=2)
    probe = CacheProbe(cache, [MODEL])
    for item in items:
        asyncio.run(grader(2)(probe, item))
    assert probe.missed == 2  # the uncached case's two orders
    cache.close()


def test_the_estimate_scales_the_sampled_share_of_uncached_calls_to_the_cases_left(tmp_path):
    items = [Item(f"c{i}") for i in range(200)]
    # The first half of the sample is cached: half of its calls would be sent.
    cache = cache_with(tmp_path, items[: PROBE_CASES // 2], calls=2)
    estimate = uncached_calls(
        iter(items), grader(2), cache=cache, models=[MODEL], pending=len(items)
    )
    assert estimate == len(items)  # 200 cases x 2 calls x one half
    assert uncached_calls(iter(items), grader(2), cache=None, models=[MODEL], pending=3000) == 6000
    assert uncached_calls(iter([]), grader(2), cache=cache, models=[MODEL], pending=0) == 0
    cache.close()


def test_a_fully_cached_run_sends_no_call_and_so_keeps_one_process(tmp_path):
    items = [Item(f"c{i}") for i in range(PROBE_CASES)]
    cache = cache_with(tmp_path, items, calls=1)
    estimate = uncached_calls(iter(items), grader(1), cache=cache, models=[MODEL], pending=5000)
    assert estimate == 0
    assert choose_workers(estimate, cores=8).workers == 1
    cache.close()


def test_a_model_only_litellm_can_say_takes_a_schema_from_counts_as_a_call_to_send():
    unknown = ModelSettings(name="openai/gpt-4o-mini")
    probe = CacheProbe(None, [unknown])
    with pytest.raises(JudgeCallError):
        probe.accepts_schema(unknown.name)
    assert probe.missed == 1


@pytest.mark.parametrize(
    ("uncached", "cores", "workers"),
    [
        (AUTO_MIN_CALLS - 1, 4, 1),
        (AUTO_MIN_CALLS, 4, 4),
        (10 * AUTO_MIN_CALLS, 2, 2),
        (10 * AUTO_MIN_CALLS, 1, 1),
    ],
)
def test_one_process_per_core_from_the_threshold_on_a_machine_with_cores_to_spare(
    uncached, cores, workers
):
    assert choose_workers(uncached, cores=cores).workers == workers


def config(tmp_path: Path) -> RunConfig:
    return RunConfig(command="score", models=[MODEL], out=tmp_path / "run", use_cache=False)


def test_a_run_outside_the_main_thread_never_forks(tmp_path, monkeypatch):
    # The Python API judges in a thread of its own; a fork would copy only that thread.
    monkeypatch.setattr(auto_workers, "usable_cores", lambda: 4)
    items = [Item(f"c{i}") for i in range(10)]
    chosen: list[int] = []

    def choose() -> None:
        chosen.append(
            choose_workers_for(config(tmp_path), iter(items), grader(2), pending=5000).workers
        )

    thread = threading.Thread(target=choose)
    thread.start()
    thread.join()
    assert chosen == [1]
    # The same run in the main thread forks: 5,000 cases of two uncached calls each.
    assert choose_workers_for(config(tmp_path), iter(items), grader(2), pending=5000).workers == 4


@pytest.mark.parametrize("limit", [{"rpm": 600}, {"tpm": 100_000}, {"max_cost": 5.0}])
def test_a_run_under_a_rate_limit_or_a_budget_keeps_one_process(tmp_path, monkeypatch, limit):
    monkeypatch.setattr(auto_workers, "usable_cores", lambda: 4)
    items = [Item(f"c{i}") for i in range(10)]
    limited = config(tmp_path).model_copy(update=limit)
    assert choose_workers_for(limited, iter(items), grader(2), pending=5000).workers == 1


def test_a_run_inside_a_running_event_loop_never_forks():
    # The Python API may judge inside its caller's loop: a fork would copy its tasks.
    assert auto_workers.forkable()

    async def inside() -> bool:
        return auto_workers.forkable()

    assert asyncio.run(inside()) is False
