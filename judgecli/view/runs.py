"""The runs `judge view` serves: the paths it was given, scanned anew on each request (a
folder's new runs appear without a restart), each run found by its name only.

A path is a run directory (it holds run.json or results.jsonl) or a folder of them. A run
is reachable by the name the scan gave it and by nothing else: no URL names a path, so no
URL can reach a file outside the served runs. A run that cannot be read (unfinished, or
written by a judge whose files this one cannot read) is listed with one line saying why.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgecli import __version__
from judgecli.errors import InputError, JudgeError
from judgecli.result import CaseResult, natural_key
from judgecli.store import RESULTS, RUN_INFO, SUMMARY, read_results
from judgecli.summary.run import RunSummary, read_summary


@dataclass(frozen=True)
class RunEntry:
    """One served run: its name and folder, and its summary or why it has none."""

    name: str
    path: Path
    info: dict[str, Any]
    """Its run.json ({} when it has none or it cannot be read)."""
    summary: RunSummary | None
    problem: str | None = None
    """Why the run cannot be shown (None when it can)."""

    @property
    def started(self) -> str:
        """When the run started (run.json's `started`), "" when unknown."""
        return str(self.info.get("started") or "")

    @property
    def written_by(self) -> str | None:
        """The judge version that wrote the run, when run.json says."""
        versions = self.info.get("versions")
        return str(versions.get("judgecli")) if isinstance(versions, dict) else None


def is_run(path: Path) -> bool:
    """A directory a judge command wrote (a drift's folder, with neither file, is not one)."""
    return (path / RUN_INFO).is_file() or (path / RESULTS).is_file()


def run_dirs(roots: list[Path]) -> list[Path]:
    """The run directories under the given paths: each path a run, or a folder of runs."""
    found: list[Path] = []
    for root in roots:
        if is_run(root):
            found.append(root)
        elif root.is_dir():
            with os.scandir(root) as entries:
                found += [Path(e.path) for e in entries if e.is_dir() and is_run(Path(e.path))]
    return found


def names_for(paths: list[Path]) -> dict[str, Path]:
    """Each run's name: its folder's name, with its parent's before it where two share one."""
    seen: dict[str, int] = {}
    for path in paths:
        seen[path.name] = seen.get(path.name, 0) + 1
    named: dict[str, Path] = {}
    for path in paths:
        name = path.name if seen[path.name] == 1 else f"{path.parent.name}-{path.name}"
        while name in named:
            name += "_"
        named[name] = path
    return named


def read_info(path: Path) -> dict[str, Any]:
    """A run's run.json, {} when there is none or it is not a JSON object."""
    try:
        info = json.loads((path / RUN_INFO).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def version_note(info: dict[str, Any]) -> str:
    """` (written by judge 0.2.0; this is judge 0.1.0)` when another version wrote the run."""
    versions = info.get("versions")
    other = versions.get("judgecli") if isinstance(versions, dict) else None
    if other is None or str(other) == __version__:
        return ""
    return f" (written by judge {other}; this is judge {__version__})"


def entry_of(name: str, path: Path) -> RunEntry:
    """A run as the list shows it: its summary, or the one line that says why not."""
    info = read_info(path)
    if not (path / SUMMARY).is_file():
        problem = f"not finished (no {SUMMARY}): continue it with judge resume {path}"
        return RunEntry(name, path, info, None, problem)
    shown_elsewhere = report_only(info.get("command") or summary_command(path / SUMMARY))
    if shown_elsewhere is not None:
        return RunEntry(name, path, info, None, shown_elsewhere)
    try:
        summary = read_summary(path / SUMMARY)
    except JudgeError as err:
        return RunEntry(
            name, path, info, None, f"cannot be read: {err.message}{version_note(info)}"
        )
    return RunEntry(name, path, info, summary)


REPORT_ONLY = frozenset({"arena", "drift", "align", "qualify", "probe"})
"""Commands whose runs have no cases to browse or label here (a leaderboard, a drift, a
rubric's alignment, a qualification, bias probes): their own report says what they found."""


def summary_command(path: Path) -> object:
    """The `command` a summary.json names (None when it cannot be read as a JSON object:
    read_summary then says why).
    """
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return found.get("command") if isinstance(found, dict) else None


def report_only(command: object) -> str | None:
    """The line for a run of a command the viewer does not browse (its report.html is the
    place to read it), else None.
    """
    if command not in REPORT_ONLY:
        return None
    return (
        f"a judge {command} run: the viewer browses score, pairwise, calibrate and refine "
        f"runs; open its report.md or report.html"
    )


@dataclass
class ServedRuns:
    """The paths given to `judge view`, and the results of each run read once per change of
    its results.jsonl (a run that is being written is read again when it grows).
    """

    roots: list[Path]
    cache: dict[Path, tuple[tuple[int, int], list[CaseResult]]] = field(default_factory=dict)

    def named(self) -> dict[str, Path]:
        """Every run by name, scanned now."""
        return names_for(run_dirs(self.roots))

    def entries(self) -> list[RunEntry]:
        """Every run, newest first (those without a start time last, by name)."""
        runs = [entry_of(name, path) for name, path in self.named().items()]
        runs.sort(key=lambda e: (e.started == "", e.name))
        runs.sort(key=lambda e: e.started, reverse=True)
        return runs

    def entry(self, name: str) -> RunEntry | None:
        """The run of that name, None when no served run has it."""
        path = self.named().get(name)
        return None if path is None else entry_of(name, path)

    def results(self, entry: RunEntry) -> list[CaseResult]:
        """A run's results in id order (InputError naming file:line for a bad line)."""
        path = entry.path / RESULTS
        try:
            stat = path.stat()
        except FileNotFoundError:
            return []
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = self.cache.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            results = sorted(read_results(path), key=lambda r: natural_key(r.id))
        except InputError as err:
            raise InputError(f"{err.message}{version_note(entry.info)}", hint=err.hint) from None
        self.cache[path] = (stamp, results)
        return results
