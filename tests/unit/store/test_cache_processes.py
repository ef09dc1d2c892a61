"""The reply cache opened by several processes at once (--workers, runs starting together):
none of them fails with "database is locked", and every reply one writes the others read."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from judgecli.store.cache import ReplyCache

PROCESSES = 6


def open_and_write(directory: str, index: int, start, results) -> None:
    start.wait()  # every process opens the new file at the same moment
    try:
        cache = ReplyCache(Path(directory))
        cache.put(f"key-{index}", "m", '{"text": "x"}')
        cache.close()
        results.put((index, "ok"))
    except Exception as err:  # noqa: BLE001 - reported to the test
        results.put((index, repr(err)))


def test_processes_opening_a_new_cache_together_all_succeed(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    for attempt in range(5):  # several fresh files: the race is at creation
        directory = tmp_path / f"cache-{attempt}"
        start = context.Barrier(PROCESSES)
        results = context.Queue()
        processes = [
            context.Process(target=open_and_write, args=(str(directory), i, start, results))
            for i in range(PROCESSES)
        ]
        for process in processes:
            process.start()
        outcomes = dict(results.get(timeout=120) for _ in processes)
        for process in processes:
            process.join(timeout=60)
        assert outcomes == dict.fromkeys(range(PROCESSES), "ok")
        cache = ReplyCache(directory)
        assert [cache.get(f"key-{i}") for i in range(PROCESSES)] == ['{"text": "x"}'] * PROCESSES
        cache.close()
