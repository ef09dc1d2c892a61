"""Human labels as `judge view` writes them: `RUN/labels/<rater>.jsonl`, one JSON object per
line (docs/view.md, "Files"): `id`, `label`, `rater`, `at`, and when given `note`,
`inclusion_probability`, `strategy`, `budget`. A later line for an id replaces an earlier
one; a line whose label is null withdraws it (that is how undo and relabel work).

Each label is one whole line appended at once: under an exclusive flock(2) on the file, a
torn last line (a writer killed mid-write) is cut off first, then the line is written with
one O_APPEND write and fsync'd before the lock is let go. So two raters, two servers or two
threads writing one file never interleave, and a reload or a crash loses nothing written.
A reader takes no lock: it ignores a last line without its newline.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgecli.errors import InputError

LABELS = "labels"
"""The folder of a run that holds its raters' label files."""
RATER_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
"""What a rater's name may be: it names a file, so letters, digits, `-`, `_` and `.`."""
Value = float | str | None
"""A label: a score, a choice, a winner ("old", "new", "tie"); None withdraws one."""


def check_rater(name: str) -> str:
    """The rater's name, when it is a safe file name; InputError saying what may be one."""
    if not RATER_NAME.fullmatch(name) or name.strip(".") == "":
        raise InputError(
            f"rater {name!r} is not a usable name (it names the file labels/<rater>.jsonl)",
            hint="use letters, digits, '-', '_' and '.' (at most 64), e.g. alice or rater-2",
        )
    return name


def labels_file(run_dir: Path, rater: str) -> Path:
    """`RUN/labels/<rater>.jsonl` (the name checked first)."""
    return run_dir / LABELS / f"{check_rater(rater)}.jsonl"


def now_text() -> str:
    """The current UTC time as the `at` of a label: ISO 8601 with microseconds and `Z`."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def label_line(
    case_id: str,
    label: Value,
    rater: str,
    *,
    at: str | None = None,
    note: str | None = None,
    inclusion_probability: float | None = None,
    strategy: str | None = None,
    budget: int | None = None,
    seed: int | None = None,
) -> dict[str, Any]:
    """One label as its file holds it; optional keys only when given (`seed`: the draw of
    the plan that picked the case, so that labels of two draws are told apart).
    """
    line: dict[str, Any] = {"id": case_id, "label": label, "rater": check_rater(rater)}
    line["at"] = at or now_text()
    if note:
        line["note"] = note
    if inclusion_probability is not None:
        if not 0 < inclusion_probability <= 1:
            raise ValueError(
                f"an inclusion probability lies in (0, 1], not {inclusion_probability}"
            )
        line["inclusion_probability"] = inclusion_probability
    if strategy is not None:
        line["strategy"] = strategy
    if budget is not None:
        line["budget"] = budget
    if seed is not None:
        line["seed"] = seed
    return line


def append_label(run_dir: Path, line: dict[str, Any]) -> Path:
    """Append one label line to its rater's file, whole, under the file's lock; the file.
    OSError if the file system refuses (the file then ends where it did).
    """
    path = labels_file(run_dir, str(line["rater"]))
    path.parent.mkdir(exist_ok=True)
    data = (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")
    descriptor = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        end = cut_torn_tail(descriptor)
        try:
            written = memoryview(data)
            while written:
                written = written[os.write(descriptor, written) :]
            os.fsync(descriptor)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(descriptor, end)
            raise
    finally:
        os.close(descriptor)  # closing the file lets go of its flock
    return path


def cut_torn_tail(descriptor: int) -> int:
    """Cut a last line without its newline (a writer that died mid-line) off an open file;
    where the file now ends. A new line appended after it would otherwise be glued to it.
    """
    size = os.fstat(descriptor).st_size
    if size == 0 or os.pread(descriptor, 1, size - 1) == b"\n":
        return size
    # Back to the newline that ends the last whole line, reading a block at a time.
    at = size
    while at > 0:
        start = max(0, at - 4096)
        block = os.pread(descriptor, at - start, start)
        newline = block.rfind(b"\n")
        if newline >= 0:
            end = start + newline + 1
            os.ftruncate(descriptor, end)
            return end
        at = start
    os.ftruncate(descriptor, 0)
    return 0


def latest_labels(run_dir: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Each rater's standing labels, by case id, as their lines were written: the last line
    of each id, withdrawn ones (label null) left out; the raters are the files of
    `RUN/labels/` (inputs.label_files' one rule of relabel and undo; a torn last line is
    skipped, a bad line is an error naming file:line, as `--labels` would say it).
    """
    from judgecli.inputs.label_files import standing_lines

    folder = run_dir / LABELS
    if not folder.is_dir():
        return {}
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for path in sorted(p for p in folder.glob("*.jsonl") if p.is_file()):
        found[path.stem] = {
            raw.id: dict(raw.fields) for raw in standing_lines([path]) if raw.raw is not None
        }
    return found


def blind_salt(run_dir: Path) -> str:
    """The run's secret salt of blind A/B orders: the one its review-key.json holds (so a
    viewer's order and the review sheets' come from one secret), made and written there,
    with no codes, when the run has no key yet. Never replaces a key another writer made
    first: the new file is linked into place only if none is there.
    """
    from judgecli.store import to_json
    from judgecli.store.sheets import REVIEW_KEY, read_review_key

    path = run_dir / REVIEW_KEY
    if path.exists():
        return read_review_key(path).salt
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(to_json({"salt": secrets.token_hex(16), "codes": {}}), encoding="utf-8")
    try:
        os.link(tmp, path)  # fails if another writer made the key first: its salt stands
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return read_review_key(path).salt
