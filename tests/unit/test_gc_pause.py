"""The process's collector around start-up (gc_pause.py): paused only by the command line's
entry, resumed once, and never changed for code that imports judgecli as a library."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from judgecli import gc_pause


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    """Each test leaves this process's collector enabled and gc_pause's flag clear."""
    yield
    gc_pause._paused_by_main = False
    gc.enable()


def test_the_entry_pauses_the_collector_and_the_work_resumes_it():
    gc_pause.pause_gc_for_startup()
    assert not gc.isenabled()
    gc_pause.resume_gc()
    assert gc.isenabled()


def test_resume_is_a_no_op_for_a_library_caller():
    gc.disable()  # the caller's own choice: judgecli must not undo it
    gc_pause.resume_gc()
    assert not gc.isenabled()


def test_resuming_twice_changes_nothing_the_second_time():
    gc_pause.pause_gc_for_startup()
    gc_pause.resume_gc()
    gc.disable()  # as a caller might, after start-up
    gc_pause.resume_gc()
    assert not gc.isenabled()


def test_a_paused_import_leaves_the_collector_as_it_found_it():
    with gc_pause.gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    with gc_pause.gc_paused():
        pass
    assert not gc.isenabled()


def test_a_paused_block_that_raises_still_restores_the_collector():
    with pytest.raises(RuntimeError), gc_pause.gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
