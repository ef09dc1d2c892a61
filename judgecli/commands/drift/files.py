"""A drift's files: the two runs it reads, and its own directory (summary.json, flips.jsonl,
report.md, report.html; with --anchor also the re-judged run in `rejudged/`).

A drift's directory is not a run (it has no run.json or results.jsonl), and no run's
directory is taken for one: a drift never writes over a run's summary.json.
"""

from __future__ import annotations

from pathlib import Path

from judgecli.commands.drift.audit import AuditedRun
from judgecli.errors import InputError, RunIncompleteError
from judgecli.report.drift import render_drift_html, render_drift_markdown
from judgecli.store import (
    BATCH_INFO,
    REPORT_HTML,
    REPORT_MD,
    RESULTS,
    RUN_INFO,
    SUMMARY,
    RunStore,
    read_results,
    read_run_info,
)
from judgecli.store.step_summary import append_step_summary
from judgecli.summary.drift import Drift
from judgecli.summary.run import read_summary

FLIPS = "flips.jsonl"
REJUDGED = "rejudged"
"""With --anchor: the re-judged run, inside the drift's directory."""
DRIFT_FILES = (SUMMARY, FLIPS, REPORT_MD, REPORT_HTML)


def read_audited_run(path: Path) -> AuditedRun:
    """A finished, complete run: InputError (exit 2) when `path` is no run at all,
    RunIncompleteError (exit 3) when it is one that has not finished or whose summary says
    it is incomplete: its numbers cannot stand for a verdict, so neither can their drift.
    """
    hint = "pass the directory of a finished score, pairwise or calibrate run"
    if not path.is_dir():
        raise InputError(f"{path}: no such run directory", hint=hint)
    has_info = (path / RUN_INFO).is_file()
    if not (path / SUMMARY).is_file():
        if not has_info:
            raise InputError(f"{path}: not a judge run (no {RUN_INFO} or {SUMMARY})", hint=hint)
        finish = (
            f"judge collect {path}" if (path / BATCH_INFO).is_file() else f"judge resume {path}"
        )
        raise RunIncompleteError(
            f"{path}: the run has not finished (no {SUMMARY})", hint=f"finish it first: {finish}"
        )
    summary = read_summary(path / SUMMARY)
    if summary.incomplete:
        raise RunIncompleteError(
            f"{path}: the run is incomplete ({summary.incomplete})",
            hint=f"finish it first: judge resume {path} --retry-failed",
        )
    info = read_run_info(path, hint=hint) if has_info else {}
    return AuditedRun(
        path=path, summary=summary, results=list(read_results(path / RESULTS)), info=info
    )


def check_drift_dir(out: Path, *, replace: bool) -> None:
    """Refuse an --out that holds a judge run, or an earlier drift unless `replace`
    (--force): checked before anything is judged or written.
    """
    if (out / RUN_INFO).exists() or (out / RESULTS).exists():
        raise InputError(
            f"--out {out} holds a judge run, not a drift",
            hint="choose another --out directory (a drift writes its own summary.json)",
        )
    if not replace and any((out / name).exists() for name in DRIFT_FILES):
        raise InputError(
            f"{out} already holds a drift",
            hint="choose another --out directory, or replace it with --force",
        )


def write_drift(out: Path, drift: Drift, *, step_summary: Path | None = None) -> Path:
    """Write the drift's summary.json, flips.jsonl and reports into `out` (and report.md
    appended to a CI step summary); returns `out`.
    """
    store = RunStore.create(out, with_results=False, then="run the drift again with --force")
    store.write_jsonl(FLIPS, [flip.model_dump(mode="json") for flip in drift.flips])
    markdown = render_drift_markdown(drift)
    store.write_text(REPORT_MD, markdown)
    if step_summary is not None:
        append_step_summary(step_summary, markdown)
    store.write_text(REPORT_HTML, render_drift_html(drift))
    # Last: a summary.json is what says the drift finished.
    store.write_json(SUMMARY, drift.summary.model_dump(mode="json"))
    return out


def remove_if_empty(path: Path) -> None:
    """Remove a directory a drift made for nothing (its re-judging refused its input)."""
    if path.is_dir() and not any(path.iterdir()):
        path.rmdir()
