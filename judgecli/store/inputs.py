"""What the Python API keeps in a run directory before the run starts: a dataset given as
rows in memory (a list of dicts), written once as RUN_DIR/inputs/NAME.jsonl, and a rubric
given as a loaded Rubric, as RUN_DIR/inputs/NAME.yaml; and a run directory of its own for
each run it starts without `out`.

The run then reads the file as it reads any JSONL dataset (the same scan, the same errors,
the sides of a pair found again by offset), `judge resume RUN_DIR` finds it where the run's
command line names it, and the run keeps what it judged. Each file is written under the
run directory's lock (store/lock.py: a run another process writes is refused before
anything of it is touched) to a temporary sibling, then renamed: a reader never sees half
a dataset.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from judgecli.errors import InputError, RunDirectoryError
from judgecli.store import INPUTS, RESULTS
from judgecli.store.disk import directory_error, problem
from judgecli.store.lock import hold_run_dir


def fresh_run_dir(command: str, rubric_name: str, *, root: Path = Path("runs")) -> Path:
    """A new, empty run directory runs/<UTC time>-<command>-<rubric>, made now: with a
    `-2`, `-3`... suffix when that name is taken (two runs started in the same second, by
    one script or several threads, never share one).
    """
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    base = root / f"{stamp}-{command}-{rubric_name}"
    for number in range(1, 10_000):
        path = base if number == 1 else base.with_name(f"{base.name}-{number}")
        try:
            path.mkdir(parents=True)
        except FileExistsError:
            continue
        except OSError as err:
            raise RunDirectoryError(
                f"cannot create run directory {path}: {problem(err)}",
                hint="pass out= a directory you can write to",
            ) from None
        return path
    raise RunDirectoryError(f"cannot find a free run directory name beside {base}")


def keep_rows(run_dir: Path, name: str, rows: Iterable[str], *, reuse: bool) -> Path:
    """Write `rows` (each one JSON object's text) as RUN_DIR/inputs/NAME.jsonl, holding the
    run directory's lock from now on. Unless `reuse` (a resume, or a run started over), a
    directory that already holds a run is refused (InputError) and nothing is written.
    """
    return keep(run_dir, f"{name}.jsonl", (f"{row}\n" for row in rows), reuse=reuse)


def keep_text(run_dir: Path, name: str, text: str, *, reuse: bool) -> Path:
    """Write `text` as RUN_DIR/inputs/NAME, as keep_rows does."""
    return keep(run_dir, name, iter([text]), reuse=reuse)


def keep(run_dir: Path, name: str, parts: Iterator[str], *, reuse: bool) -> Path:
    """Write RUN_DIR/inputs/NAME from `parts`, atomically, under the run's lock."""
    hold_run_dir(run_dir, make=True)
    results = run_dir / RESULTS
    if not reuse and results.exists() and results.stat().st_size > 0:
        raise InputError(
            f"{run_dir} already holds a run ({RESULTS} is not empty)",
            hint="choose another out directory, or start it over with force=True",
        )
    folder = run_dir / INPUTS
    target = folder / name
    tmp = folder / f".{name}.tmp"
    try:
        folder.mkdir(exist_ok=True)
        with tmp.open("w", encoding="utf-8") as handle:
            for part in parts:
                handle.write(part)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.replace(target)
    except OSError as err:
        raise directory_error(run_dir, target, err) from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return target


def drop_kept(run_dir: Path, paths: Iterable[Path]) -> None:
    """Remove files keep_rows and keep_text wrote (the run turned out not to be runnable:
    nothing of it may stay), and the inputs folder when nothing else is left in it.
    """
    for path in paths:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        (run_dir / INPUTS).rmdir()
