"""The API's one event loop (issue 31): a synchronous call works from a plain thread,
from a thread whose own loop is running (a notebook's kernel), and from many threads at
once; a call that would wait for itself is refused rather than hanging."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from judgecli.api.loops import ENGINE


async def where() -> str:
    await asyncio.sleep(0)
    return threading.current_thread().name


def test_a_synchronous_call_runs_on_the_engine_thread():
    assert ENGINE.run(where()) == "judgecli-engine"


def test_a_synchronous_call_works_inside_a_running_event_loop():
    async def notebook_cell() -> str:
        return ENGINE.run(where())  # no await: what a notebook's plain call does

    assert asyncio.run(notebook_cell()) == "judgecli-engine"


def test_many_threads_share_the_one_loop():
    with ThreadPoolExecutor(8) as pool:
        names = list(pool.map(lambda _: ENGINE.run(where()), range(32)))
    assert set(names) == {"judgecli-engine"}


def test_an_async_caller_awaits_the_work_done_on_the_engine_loop():
    async def caller() -> tuple[str, str]:
        return threading.current_thread().name, await ENGINE.run_async(where())

    mine, theirs = asyncio.run(caller())
    assert (mine, theirs) == (threading.current_thread().name, "judgecli-engine")


def test_an_error_reaches_the_caller():
    async def fails() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        ENGINE.run(fails())


def test_a_synchronous_call_from_the_engine_loop_is_refused_not_a_deadlock():
    async def nested() -> None:
        ENGINE.run(where())

    with pytest.raises(RuntimeError, match="would wait for itself"):
        ENGINE.run(nested())
