"""A run directory the file system refuses (full, read-only, no permission), through the
real CLI in subprocesses: one `error:` line naming the path and a `hint:` with the fix, no
traceback; exit 2 when nothing was called yet (and nothing left behind), exit 3 after
(what was written kept whole, and `judge resume` finishing it once space is freed).

Issue 29: a full disk printed three tracebacks and "a bug in judge", and left a torn last
line and a 0-byte `.run.json.tmp`; a read-only --out printed a 60-line traceback.

A full disk is a small tmpfs and a read-only file system a read-only bind mount: both need
root (mount). A directory without write permission binds no root, so root runs judge
without the capabilities that let it write anywhere (setpriv); otherwise the test skips,
saying why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

import pytest

from judgecli.store import RESULTS, RUN_INFO, SUMMARY
from tests.integration.conftest import ids_once, score_args, write_numbered_cases

JUDGE = Path(sys.executable).parent / "judge"
WAIT_S = 300.0
N_CASES = 400  # about 900 bytes of results.jsonl each: more than the 300 KiB disk holds
# Root writes wherever it likes; without these capabilities it meets permissions as anyone.
UNPRIVILEGED = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]


def case(i: int) -> dict[str, str]:
    topic = ("tides", "magnets", "glaciers", "volcanoes")[i % 4]
    return {
        "id": f"disk-{i:03d}",
        "input": f"How do {topic} work? ({i})",
        "output": f"{topic.capitalize()} work through a clear mechanism, step by step. "
        * (1 + i % 4),
    }


def judge(*args: str, prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*(prefix or []), str(JUDGE), *args],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        env={**os.environ, "OPENAI_API_KEY": "sk-test-dummy"},  # JUDGE_CACHE_DIR: the test's
    )


def mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        pytest.skip(f"mount {' '.join(args)} failed: {done.stderr.strip()}")


@pytest.fixture
def mounted() -> Iterator[Callable[..., None]]:
    """mounted(*mount args, DIR): mount, and unmount DIR when the test ends (root only)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small or read-only file system needs root")
    points: list[str] = []

    def mount_at(*args: str) -> None:
        mount(*args)
        points.append(args[-1])

    yield mount_at
    for point in reversed(points):
        subprocess.run(["umount", "-l", point], capture_output=True, timeout=60)


def assert_one_error(stderr: str, message: str, hint: str) -> None:
    """The refusal is one error line and one hint, and nothing else went wrong."""
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {message}"], stderr
    assert f"hint: {hint}" in stderr.splitlines(), stderr
    assert "Traceback" not in stderr
    assert "a bug in judge" not in stderr


def fill(path: Path) -> None:
    """Write `path` until its file system is full."""

    def write_forever(filler: BinaryIO) -> None:
        while True:
            filler.write(b"x" * 4096)

    with path.open("wb", buffering=0) as filler, pytest.raises(OSError, match="No space left"):
        write_forever(filler)


def test_a_disk_full_mid_run_stops_it_with_exit_3_and_resume_finishes_once_freed(
    judge_server, mounted, tmp_path
):
    ids = write_numbered_cases(tmp_path / "cases.jsonl", N_CASES, case)
    disk = tmp_path / "tiny"
    disk.mkdir()
    mounted("-t", "tmpfs", "-o", "size=300k", "tmpfs", str(disk))
    run_dir = disk / "run"
    full = judge(*score_args(judge_server, "cases.jsonl", run_dir, "--quiet"))
    assert full.returncode == 3, full.stderr
    assert_one_error(
        full.stderr,
        f"cannot write {run_dir / RESULTS}: No space left on device; what was written "
        "before is kept",
        f"free space on its file system, then continue with: judge resume {run_dir}",
    )
    judged = ids_once(run_dir)  # whole lines: the one the disk refused was cut back
    assert 0 < len(judged) < N_CASES
    assert sorted(p.name for p in run_dir.iterdir()) == [RESULTS, RUN_INFO]  # no .tmp
    mount("-o", "remount,size=20m", str(disk))  # space is freed
    resumed = judge("resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr
    assert ids_once(run_dir) == ids
    assert json.loads((run_dir / SUMMARY).read_text())["n_cases"] == N_CASES


def test_a_disk_full_before_the_first_call_is_exit_2_and_leaves_nothing(
    judge_server, mounted, tmp_path
):
    write_numbered_cases(tmp_path / "cases.jsonl", 3, case)
    disk = tmp_path / "tiny"
    disk.mkdir()
    mounted("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk))
    fill(disk / "filler")
    run_dir = disk / "run"
    refused = judge(*score_args(judge_server, "cases.jsonl", run_dir))
    assert refused.returncode == 2, refused.stderr
    assert_one_error(
        refused.stderr,
        f"cannot write {run_dir / RUN_INFO}: No space left on device",
        "free space on its file system, or choose another --out (nothing was judged)",
    )
    assert sorted(p.name for p in disk.iterdir()) == ["filler"]
    assert not judge_server.requests


def test_a_read_only_file_system_refuses_a_run_and_its_resume_with_exit_2(
    run_cli, judge_server, mounted, tmp_path
):
    write_numbered_cases(tmp_path / "cases.jsonl", 3, case)
    done = run_cli(judge_server, "score", "cases.jsonl", "--rubric", "helpfulness", "--out", "r")
    assert done.exit_code == 0, done.stderr
    mounted("--bind", str(tmp_path / "r"), str(tmp_path / "r"))
    mount("-o", "remount,bind,ro", str(tmp_path / "r"))
    before = sorted(p.name for p in (tmp_path / "r").iterdir())
    for args in (
        score_args(judge_server, "cases.jsonl", "r", "--force"),
        ("resume", "r"),
        ("report", "r", "--html"),
    ):
        refused = judge(*args)
        assert refused.returncode == 2, refused.stderr
        # (the path as given: resume gives the command it runs the absolute one)
        message = f"cannot write {'r' if args[0] != 'resume' else tmp_path / 'r'}/.lock: "
        assert_one_error(
            refused.stderr,
            message + "Read-only file system",
            "its file system is mounted read-only: remount it writable, or choose another "
            "--out (nothing was judged)",
        )
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == before


def test_an_out_without_write_permission_is_exit_2_and_nothing_is_called(judge_server, tmp_path):
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("as root every folder is writable, and there is no setpriv to drop that")
        prefix = UNPRIVILEGED
    write_numbered_cases(tmp_path / "cases.jsonl", 3, case)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        existing = judge(*score_args(judge_server, "cases.jsonl", "locked"), prefix=prefix)
        beneath = judge(*score_args(judge_server, "cases.jsonl", "locked/run"), prefix=prefix)
    finally:
        locked.chmod(0o755)
    assert existing.returncode == 2, existing.stderr
    assert_one_error(
        existing.stderr,
        "cannot write locked/.lock: Permission denied",
        "you may not write there: fix its permissions, or choose another --out (nothing "
        "was judged)",
    )
    assert beneath.returncode == 2, beneath.stderr
    assert_one_error(
        beneath.stderr,
        "cannot create run directory locked/run: Permission denied",
        "choose another --out (a directory you can write to)",
    )
    assert list(locked.iterdir()) == []
    assert not judge_server.requests
