"""--workers not given: how many processes judge the run (docs/scale.md, "Workers by
default").

A fork pays off only when the run is bound by LiteLLM's CPU (a few milliseconds a call) and
the machine has a core to spare: a run with enough calls left that the reply cache cannot
answer. Which calls those are is found without sending any: the first cases still to judge
are graded against `CacheProbe`, a client that answers from the cache and counts every
call it could not, and their share scales to the cases left.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from itertools import islice
from typing import TypeVar

from judgecli.judge.cached import CachedJudge
from judgecli.judge.protocol import JudgeCallError, JudgeClient, JudgeReply, JudgeRequest
from judgecli.result import CaseResult
from judgecli.settings.config import RunConfig, cache_dir
from judgecli.settings.judges import ModelSettings
from judgecli.settings.scale_flags import usable_cores
from judgecli.store.cache import ReplyCache

AUTO_MIN_CALLS = 1000
"""Uncached calls from which a run takes one process per core. Measured on 2 cores against
a server answering in 100 ms at --concurrency 64 (`make bench`, tests/bench/bench_workers.py
and bench_clients.py): at 300 calls two processes gain nothing (the ~2 s of `import
litellm` dominate), at 1,000 a few percent, at 2,000 about a quarter; a fork costs
milliseconds, so below this the second process only splits the same wait in two."""

PROBE_CASES = 50
"""Cases graded against the cache to learn the share of calls it cannot answer."""


ItemT = TypeVar("ItemT")


class CacheProbe:
    """A judge client that sends nothing: a call the reply cache answers gets its cached
    reply, every other call is counted (`missed`) and fails at once. Grading a case
    against it tells how many calls judging that case would send.
    """

    def __init__(self, cache: ReplyCache | None, models: list[ModelSettings]) -> None:
        self._models = {m.name: m for m in models}
        self._cached = CachedJudge(self._no_client, cache, models) if cache else None
        self.missed = 0

    @staticmethod
    def _no_client() -> JudgeClient:
        raise AssertionError("the probe never builds a real client")  # recall needs none

    def accepts_schema(self, model: str) -> bool:
        """The settings' answer; a model only LiteLLM can answer for is a call to send."""
        decided = self._models[model].schema_decision()
        if decided is None:
            self.missed += 1
            raise JudgeCallError("the response format is LiteLLM's to decide", attempts=0)
        return decided

    def recall(self, request: JudgeRequest) -> JudgeReply | None:
        """The cached reply, else None (a checklist then asks for what is missing)."""
        return self._cached.recall(request) if self._cached else None

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """The cached reply, else a counted miss."""
        stored = self.recall(request)
        if stored is None:
            self.missed += 1
            raise JudgeCallError("not in the reply cache", attempts=0)
        return stored

    def remember(self, request: JudgeRequest, reply: JudgeReply) -> None:
        """Nothing to keep: the probe's replies came from the cache."""


@dataclass(frozen=True)
class WorkersChoice:
    """How many processes judge the run, and the uncached calls that decided it."""

    workers: int
    uncached_calls: int

    def describe(self) -> str:
        """One line for the start of the run (only said when it forks)."""
        return (
            f"judging in {self.workers} processes: ~{self.uncached_calls:,} calls the reply "
            f"cache cannot answer (from {AUTO_MIN_CALLS:,}, one process per core; "
            "--workers 1 keeps one)"
        )


def uncached_calls(
    items: Iterable[ItemT],
    grade: Callable[[JudgeClient, ItemT], Awaitable[CaseResult]],
    *,
    cache: ReplyCache | None,
    models: list[ModelSettings],
    pending: int,
) -> int:
    """The calls judging `pending` cases would send, estimated from the first
    PROBE_CASES of `items` (the cases still to judge) graded against the cache. Nothing
    is sent, written or cached.
    """
    sample = list(islice(items, PROBE_CASES))
    if not sample:
        return 0
    probe = CacheProbe(cache, models)

    async def grade_all() -> None:
        for item in sample:
            before = probe.missed
            try:
                await grade(probe, item)
            except Exception:  # noqa: BLE001 - any failure is a case the cache did not answer
                probe.missed = max(probe.missed, before + 1)

    asyncio.run(grade_all())
    return round(probe.missed / len(sample) * pending)


def choose_workers(uncached: int, *, cores: int | None = None) -> WorkersChoice:
    """One process per core when there are cores to spare and AUTO_MIN_CALLS uncached
    calls to share, else one.
    """
    cores = usable_cores() if cores is None else cores
    forks = cores > 1 and uncached >= AUTO_MIN_CALLS
    return WorkersChoice(workers=cores if forks else 1, uncached_calls=uncached)


def forkable() -> bool:
    """Whether this process may fork its workers here: from its main thread (a fork copies
    only the thread that makes it), with no event loop running in it (the Python API may
    judge inside a caller's loop, whose tasks a fork would copy half-done).
    """
    if threading.current_thread() is not threading.main_thread():
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return True
    return False


def choose_workers_for(
    config: RunConfig,
    todo: Iterable[ItemT],
    grade: Callable[[JudgeClient, ItemT], Awaitable[CaseResult]],
    *,
    pending: int,
) -> WorkersChoice:
    """The processes a run without --workers takes: one where it may not fork
    (`forkable`), on one core, or under --rpm, --tpm or --max-cost, else as
    `choose_workers` says of the calls the cache cannot answer among the `pending` cases of
    `todo` (the cases still to judge, read afresh: the run's own pass over them has not
    begun).
    """
    cores = usable_cores()
    if not forkable() or cores < 2:
        return WorkersChoice(workers=1, uncached_calls=0)
    if any(limit is not None for limit in (config.rpm, config.tpm, config.max_cost)):
        # A run a rate limit holds back is not bound by CPU, and a budget split in even
        # shares could stop one process before the run has spent the whole of it.
        return WorkersChoice(workers=1, uncached_calls=0)
    cache = ReplyCache(cache_dir()) if config.use_cache else None
    try:
        uncached = uncached_calls(
            todo, grade, cache=cache, models=config.all_models, pending=pending
        )
    finally:
        if cache is not None:
            cache.close()
    return choose_workers(uncached, cores=cores)
