"""store/lock.py and the store's writes: one writer per run directory (a lock another
process is refused, that a fork shares and a child's exit does not free), and writes the
file system refuses leaving no half line and no temporary file.

Issue 29: two processes could write one run directory (every case counted twice), and a
full disk left a torn line, a 0-byte `.run.json.tmp` and a traceback.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from judgecli.errors import InputError, RunDirectoryError, RunInUseError, RunStorageError
from judgecli.result import CaseResult, CaseStatus
from judgecli.store import RESULTS, RUN_INFO, RunStore, check_replaceable, write_atomic
from judgecli.store.disk import directory_error, how_to_continue, storage_error
from judgecli.store.lines import LineFile
from judgecli.store.lock import (
    HELD,
    LOCK,
    hold_run_dir,
    release_run_dir,
    release_run_dirs,
)

WAIT_S = 60.0
# A process that holds a run directory's lock until its stdin closes; it says "held" first.
HOLDER = """
import sys
from pathlib import Path
from judgecli.store.lock import hold_run_dir
hold_run_dir(Path(sys.argv[1]))
print("held", flush=True)
sys.stdin.read()
"""
# A process that only tries to take it: prints "taken", or the error and exits 2.
TAKER = """
import sys
from pathlib import Path
from judgecli.errors import RunInUseError
from judgecli.store.lock import hold_run_dir
try:
    hold_run_dir(Path(sys.argv[1]))
except RunInUseError as err:
    print(err.message)
    sys.exit(2)
print("taken")
"""


@pytest.fixture(autouse=True)
def no_locks_left() -> Iterator[None]:
    """Each test starts and ends holding no lock (the CLI releases them as a command ends)."""
    yield
    release_run_dirs()


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding tmp_path/run's lock until the test ends."""
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(run)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "held"
    yield process
    if process.stdin is not None:
        process.stdin.close()
    process.wait(timeout=WAIT_S)


def try_lock(run: Path) -> tuple[int, str]:
    """Another process's attempt at `run`'s lock: its exit code and what it printed."""
    done = subprocess.run(
        [sys.executable, "-c", TAKER, str(run)], capture_output=True, text=True, timeout=WAIT_S
    )
    return done.returncode, done.stdout.strip()


def result(case_id: str) -> CaseResult:
    return CaseResult(id=case_id, status=CaseStatus.FAILED, error="x", rubric_hash="h")


def test_another_process_is_refused_with_the_holders_pid_and_command(tmp_path, holder):
    with pytest.raises(RunInUseError) as refused:
        hold_run_dir(tmp_path / "run")
    assert f"pid {holder.pid}" in refused.value.message
    assert f"kill {holder.pid}" in (refused.value.hint or "")
    written = json.loads((tmp_path / "run" / LOCK).read_text())
    assert written["pid"] == holder.pid


def test_the_lock_is_free_once_its_holder_ends_even_by_sigkill(tmp_path, holder):
    holder.kill()
    holder.wait(timeout=WAIT_S)
    assert hold_run_dir(tmp_path / "run")


def test_a_process_takes_its_own_lock_again_without_waiting(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    assert hold_run_dir(run)
    assert not hold_run_dir(run)  # resume, merge and collect run a command in-process
    assert try_lock(run)[0] == 2


def test_release_removes_the_lock_file_and_frees_the_lock(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    hold_run_dir(run)
    release_run_dir(run)
    assert not (run / LOCK).exists()
    assert try_lock(run) == (0, "taken")


def test_a_forked_childs_exit_leaves_the_parents_lock_held(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    hold_run_dir(run)
    child = os.fork()
    if child == 0:  # a --workers child: it ends, and the kernel closes what it had open
        os._exit(0)
    assert os.waitpid(child, 0)[1] == 0
    code, said = try_lock(run)
    assert code == 2
    assert f"pid {os.getpid()}" in said


def test_a_forked_child_does_not_keep_the_lock_after_its_parent_lets_go(tmp_path):
    # A worker orphaned by a kill -9 of its parent must not keep the run locked: the child
    # closes its copy at the fork (flock's lock is the open file's, which a fork shares).
    run = tmp_path / "run"
    run.mkdir()
    hold_run_dir(run)
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(write_end)
        os.read(read_end, 1)  # alive until the parent says so
        os._exit(0 if not HELD else 1)
    os.close(read_end)
    try:
        release_run_dir(run)
        assert try_lock(run) == (0, "taken")
    finally:
        os.close(write_end)
        assert os.waitpid(child, 0)[1] == 0  # and it held nothing of its own


def test_create_takes_the_lock_before_it_looks_at_an_empty_results_file(tmp_path, holder):
    # The window two `--out X` started together went through: results.jsonl still empty.
    run = tmp_path / "run"
    (run / RESULTS).write_text("")
    (run / RUN_INFO).write_text('{"command": "score"}')
    with pytest.raises(RunInUseError):
        RunStore.create(run)
    assert (run / RUN_INFO).read_text() == '{"command": "score"}'


def test_force_deletes_nothing_of_a_live_run(tmp_path, holder):
    run = tmp_path / "run"
    (run / RESULTS).write_text('{"id": "a"}\n')
    (run / RUN_INFO).write_text("{}")
    with pytest.raises(RunInUseError):
        RunStore.create(run, replace=True)
    assert (run / RESULTS).read_text() == '{"id": "a"}\n'
    assert (run / RUN_INFO).exists()


def test_reopen_of_a_live_run_is_refused_before_its_torn_line_is_cut(tmp_path, holder):
    run = tmp_path / "run"
    (run / RUN_INFO).write_text('{"command": "score"}')
    (run / RESULTS).write_text('{"id": "a", "sta')  # the holder is writing this line
    with pytest.raises(RunInUseError):
        RunStore.reopen(run, retry_failed=False)
    assert (run / RESULTS).read_text() == '{"id": "a", "sta'


def test_a_directory_holding_only_a_lock_file_may_be_replaced(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / LOCK).write_text("{}")
    check_replaceable(run)  # no error: the lock file is nobody's run
    (run / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not a judge run directory"):
        check_replaceable(run)


def test_a_new_run_made_for_nothing_leaves_no_directory_and_no_lock(tmp_path):
    store = RunStore.create(tmp_path / "new")
    store.discard()
    assert not (tmp_path / "new").exists()


def test_the_lock_file_cannot_be_made_in_a_directory_that_refuses_it(tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.mkdir()
    real_open = os.open

    def refuse(path, flags, *args):
        if str(path).endswith(LOCK):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(RunDirectoryError) as refused:
        RunStore.create(run)
    assert refused.value.message == f"cannot write {run / LOCK}: Read-only file system"
    assert "remount it writable, or choose another --out" in (refused.value.hint or "")


def test_a_refused_atomic_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "run.json"
    target.write_text("old")

    def full(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]


def test_a_line_the_disk_takes_only_half_of_is_cut_back(tmp_path, monkeypatch):
    path = tmp_path / RESULTS
    lines = LineFile(path)
    lines.append('{"id": "a"}\n', flush=True)
    real_write = os.write
    calls = []

    def half_then_full(descriptor: int, data: bytes) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(descriptor, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(OSError, match="No space left"):
        lines.append('{"id": "b", "long": "' + "x" * 100 + '"}\n', flush=True)
    monkeypatch.setattr(os, "write", real_write)
    lines.abandon()
    assert path.read_text() == '{"id": "a"}\n'


def test_a_full_disk_mid_run_is_a_storage_error_naming_the_file_and_the_resume(
    tmp_path, monkeypatch
):
    run = tmp_path / "run"
    store = RunStore.create(run)
    store.write_json(RUN_INFO, {"command": "score", "models": [], "argv": ["judge"]})
    store.append_result(result("a"))

    def full(descriptor: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(RunStorageError) as stopped:
        store.append_result(result("b"))
    assert stopped.value.message == (
        f"cannot write {run / RESULTS}: No space left on device; what was written before is kept"
    )
    assert stopped.value.hint == (
        f"free space on its file system, then continue with: judge resume {run}"
    )
    store.close()  # nothing left to write, no second error
    assert [json.loads(line)["id"] for line in (run / RESULTS).read_text().splitlines()] == ["a"]


def test_a_full_disk_while_a_run_opens_is_exit_2_and_leaves_nothing(tmp_path, monkeypatch):
    run = tmp_path / "new"
    store = RunStore.create(run)

    def full(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(RunDirectoryError) as refused, store.opening():
        store.write_json(RUN_INFO, {})
    assert refused.value.exit_code == 2
    assert refused.value.message == f"cannot write {run / RUN_INFO}: No space left on device"
    assert not run.exists()


@pytest.mark.parametrize(
    ("code", "fix"),
    [
        (errno.ENOSPC, "free space on its file system"),
        (errno.EDQUOT, "free space within your disk quota (or raise it)"),
        (errno.EROFS, "its file system is mounted read-only: remount it writable"),
        (errno.EACCES, "you may not write there: fix its permissions"),
    ],
)
def test_each_refusal_of_the_file_system_names_its_own_fix(tmp_path, code, fix):
    err = OSError(code, os.strerror(code))
    before = directory_error(tmp_path, tmp_path / RUN_INFO, err)
    assert before.exit_code == 2
    assert before.message == f"cannot write {tmp_path / RUN_INFO}: {os.strerror(code)}"
    assert before.hint == f"{fix}, or choose another --out (nothing was judged)"
    after = storage_error(tmp_path / RESULTS, err, then="continue with: judge resume R")
    assert after.exit_code == 3
    assert after.hint == f"{fix}, then continue with: judge resume R"


def test_a_run_that_judged_nothing_is_made_again_rather_than_resumed(tmp_path):
    (tmp_path / RUN_INFO).write_text('{"command": "calibrate", "results": "r.jsonl"}')
    assert (
        how_to_continue(tmp_path, tmp_path / RUN_INFO) == "run the same command again with --force"
    )
    (tmp_path / RUN_INFO).write_text('{"command": "score", "models": []}')
    assert (
        how_to_continue(tmp_path, tmp_path / RUN_INFO) == f"continue with: judge resume {tmp_path}"
    )
