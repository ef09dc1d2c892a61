"""A write of the run directory that the file system refused, said as the user's problem to
fix (no space, a quota, a read-only file system, no permission), not as a crash.

Before anything was called, the run directory could not be made or opened: a
RunDirectoryError (exit 2, nothing judged). Once the run has started: a RunStorageError
(exit 3), the results written so far kept whole, and the run continued once the cause is
fixed.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path

from judgecli.errors import RunDirectoryError, RunStorageError

FIXES = {
    errno.ENOSPC: "free space on its file system",
    errno.EDQUOT: "free space within your disk quota (or raise it)",
    errno.EFBIG: "the file is larger than the file system allows: write to another one",
    errno.EROFS: "its file system is mounted read-only: remount it writable",
    errno.EACCES: "you may not write there: fix its permissions",
    errno.EPERM: "you may not write there: fix its permissions",
    errno.ENOLCK: "its file system cannot lock files (NFS without a lock service?)",
    errno.EIO: "the disk reported an I/O error: check it",
    errno.EMFILE: "this process has too many open files: raise the limit (ulimit -n), or lower "
    "--concurrency or --workers",
    errno.ENFILE: "the system has too many open files: close some, or lower --concurrency or "
    "--workers",
}
"""The failures of the machine a command runs on, each with its fix: the one table the run
directory's errors and the command line's last net (`cli.app.world_failure`) read."""


def problem(err: OSError) -> str:
    """The system's words for what went wrong (`No space left on device`)."""
    return err.strerror or type(err).__name__


def fix_for(err: OSError) -> str:
    """What the user can do about it."""
    return machine_fix(err) or "make it writable"


def machine_fix(err: OSError) -> str | None:
    """The fix of a failure of the machine (no space, no permission, a read-only file
    system, too many open files); None for any other OSError (a bug's, say).
    """
    return FIXES.get(err.errno or 0)


def directory_error(
    run_dir: Path, path: Path, err: OSError, *, doing: str = "write"
) -> RunDirectoryError:
    """`path` in `run_dir` could not be written (or locked) before the run started."""
    return RunDirectoryError(
        f"cannot {doing} {path}: {problem(err)}",
        hint=f"{fix_for(err)}, or choose another --out (nothing was judged)",
    )


def storage_error(path: Path, err: OSError, *, then: str) -> RunStorageError:
    """`path` could not be written once the run had started; `then`: how to go on after
    the fix (`continue with: judge resume RUN`).
    """
    return RunStorageError(
        f"cannot write {path}: {problem(err)}; what was written before is kept",
        hint=f"{fix_for(err)}, then {then}",
    )


def how_to_continue(run_dir: Path, run_info: Path) -> str:
    """How a run stopped by a failed write goes on once the cause is fixed: a judged run is
    resumed; numbers from verdicts already made (calibrate --results, whose `run_info` names
    no judges) are made again.
    """
    try:
        judged = "models" in json.loads(run_info.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        judged = False
    if judged:
        return f"continue with: judge resume {run_dir}"
    return "run the same command again with --force"
