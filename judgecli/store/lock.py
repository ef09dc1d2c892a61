"""One writer per run directory: a lock on RUN_DIR/.lock, held by the process that writes
the run for as long as it does.

Two processes writing one run would each append the cases they judge: every case counted
twice, intervals on the doubled n. So every process that writes a run directory (a judging
command, `judge resume`, `merge`, `collect`, `drift --anchor`, `report --html`) takes its
lock first, and a second writer is refused (RunInUseError, exit 2) with the holder's pid,
which the holder writes into the lock file. Readers (`judge report`, `gate`, `drift A B`)
take no lock: every file but results.jsonl is replaced whole, and a torn last line of
results.jsonl is skipped.

The lock is flock(2) on the open lock file, so the kernel frees it when its process ends,
however it ends (kill -9 included): a lock is never stale. flock rather than fcntl/lockf: a
POSIX record lock belongs to the process and is dropped when *any* of its descriptors of
the file is closed, while a flock belongs to the open file, which a forked --workers child
shares: the child's exit leaves the parent's lock held. Each child closes its copy at once
(never LOCK_UN, which would free the parent's lock too), so that a worker orphaned by a
kill -9 of its parent does not keep the run locked.

Re-entrant within a process: `judge resume`, `merge` and `collect` run a recorded command in
the same process, which takes the lock its caller holds. Released (the file removed) when
the command ends (cli/app.py), or when the process exits.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgecli.errors import RunDirectoryError, RunInUseError
from judgecli.store.disk import directory_error

LOCK = ".lock"
"""The lock file in a run directory: not the user's, not the run's (--force leaves it)."""
ATTEMPTS = 20
"""Opens of the lock file before giving up: each retry follows a holder that removed the
file between our open and our lock (it ended just then)."""


@dataclass(frozen=True)
class HeldLock:
    """A run directory's lock this process holds: the lock file and its open descriptor."""

    path: Path
    descriptor: int


HELD: dict[str, HeldLock] = {}
"""This process's locks, by the run directory's real path."""


def hold_run_dir(run_dir: Path, *, make: bool = False) -> bool:
    """Hold `run_dir`'s lock for this process (`make`: create the directory if it is gone).
    True if taken now, False if this process held it already. RunInUseError naming the
    holder when another process holds it; RunDirectoryError when the lock file cannot be
    made (a read-only or full file system, no permission).
    """
    key = os.path.realpath(run_dir)
    if key in HELD:
        return False
    HELD[key] = take_lock(run_dir, make=make)
    return True


def release_run_dir(run_dir: Path) -> None:
    """Release `run_dir`'s lock if this process holds it, and remove its lock file."""
    held = HELD.pop(os.path.realpath(run_dir), None)
    if held is not None:
        let_go(held)


def release_run_dirs() -> None:
    """Release every run directory lock this process holds (its command has ended)."""
    while HELD:
        let_go(HELD.popitem()[1])


def let_go(held: HeldLock) -> None:
    """Remove the lock file, then close it (which frees the lock): a process that opened
    the file meanwhile finds it removed once it holds the lock, and opens the new one.
    """
    with contextlib.suppress(OSError):  # a read-only remount: the kernel frees it anyway
        held.path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        os.close(held.descriptor)


def take_lock(run_dir: Path, *, make: bool) -> HeldLock:
    """Open RUN_DIR/.lock and lock it, or raise (see hold_run_dir)."""
    path = run_dir / LOCK
    for _ in range(ATTEMPTS):
        try:
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except FileNotFoundError as err:
            if not make:
                raise directory_error(run_dir, path, err) from None
            # Another process discarded the directory it had just made (its run's input
            # was bad): make it again.
            with contextlib.suppress(OSError):
                run_dir.mkdir(parents=True, exist_ok=True)
            continue
        except OSError as err:
            raise directory_error(run_dir, path, err) from None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = read_holder(descriptor)
            os.close(descriptor)
            raise in_use(run_dir, holder) from None
        except OSError as err:  # ENOLCK: a network file system without a lock service
            os.close(descriptor)
            raise directory_error(run_dir, path, err, doing="lock") from None
        if same_file(descriptor, path):
            write_holder(descriptor)
            return HeldLock(path, descriptor)
        os.close(descriptor)  # its holder removed it as it ended: lock the one there now
    raise RunDirectoryError(
        f"cannot lock {path}: it keeps being replaced",
        hint="another process is starting and ending runs in this directory: choose another --out",
    )


def same_file(descriptor: int, path: Path) -> bool:
    """Whether `path` still names the file open as `descriptor` (not removed, not replaced)."""
    try:
        named = path.stat()
    except FileNotFoundError:
        return False
    opened = os.fstat(descriptor)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


def write_holder(descriptor: int) -> None:
    """Say in the lock file who holds it (read by a process it refuses)."""
    holder = {
        "pid": os.getpid(),
        "host": os.uname().nodename,
        "command": " ".join(["judge", *sys.argv[1:2]]),
        "since": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    data = (json.dumps(holder) + "\n").encode("utf-8")
    # Written over the old text, then cut to length: a reader never sees an empty file.
    # Best effort: the lock holds without it (a full disk may refuse these bytes, and the
    # run's own first write then says so).
    with contextlib.suppress(OSError):
        os.pwrite(descriptor, data, 0)
        os.ftruncate(descriptor, len(data))


def read_holder(descriptor: int) -> dict[str, Any]:
    """What the holder wrote into the lock file ({} if nothing readable)."""
    try:
        first = os.pread(descriptor, 4096, 0).split(b"\n", 1)[0]
        holder = json.loads(first)
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


def in_use(run_dir: Path, holder: dict[str, Any]) -> RunInUseError:
    """The error for a run directory another process writes."""
    pid = holder.get("pid")
    if not isinstance(pid, int):
        return RunInUseError(
            f"{run_dir} is in use: another process holds its lock ({run_dir / LOCK})",
            hint="wait for that run to end, or choose another --out (two writers would count "
            "its cases twice)",
        )
    host = holder.get("host")
    elsewhere = f" on {host}" if isinstance(host, str) and host != os.uname().nodename else ""
    what = holder.get("command") or "judge"
    since = f", since {holder['since']}" if holder.get("since") else ""
    return RunInUseError(
        f"{run_dir} is in use: {what} (pid {pid}{elsewhere}{since}) is writing it",
        hint=f"wait for it to end, stop it (kill {pid}{elsewhere}), or choose another --out; "
        "two writers would count its cases twice",
    )


def forget_in_child() -> None:
    """After a fork, in the child: close its copies of the locks (the parent holds them)."""
    for held in HELD.values():
        with contextlib.suppress(OSError):
            os.close(held.descriptor)
    HELD.clear()


os.register_at_fork(after_in_child=forget_in_child)
atexit.register(release_run_dirs)
