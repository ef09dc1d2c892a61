"""`calibrate_judge`: how far the judge agrees with human labels, as `judge calibrate`
measures it: by judging the labelled cases now, or (`results=`) from a finished run's
verdicts, calling no judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgecli.api.argv import command_line
from judgecli.api.jobs import as_path, offered
from judgecli.api.runs import Dataset, Preparing, Run, run_prepared
from judgecli.api.settings import choice, read_settings
from judgecli.commands.jobs import Labelled, calibrate_finished, label_source, prepare_calibration
from judgecli.deciding.gate import GateOn, GateSpec
from judgecli.deciding.measured import check_calibrate_on
from judgecli.settings.flags import (
    CASCADE_FLAGS,
    CHECKLIST_FLAGS,
    SCALE_OUT_FLAGS,
    SUBSET_FLAGS,
)
from judgecli.settings.gate_flags import CALIBRATE, thresholds_of

if TYPE_CHECKING:
    from judgecli.result import CaseResult
    from judgecli.rubric import Rubric
    from judgecli.summary.calibrate import CalibrateSummary


def calibrate_judge(
    labels: Dataset,
    *,
    rubric: str | Path | Rubric | None = None,
    model: str | Sequence[str] | None = None,
    api_base: str | None = None,
    out: str | Path | None = None,
    cache: bool = True,
    cases: Dataset | None = None,
    old: Dataset | None = None,
    new: Dataset | None = None,
    results: str | Path | None = None,
    label_map: Mapping[str, str] | str | None = None,
    key: str | Path | None = None,
    on: GateOn | str = GateOn.POINT,
    on_result: Callable[[CaseResult], None] | None = None,
    **settings: Any,
) -> Run[CalibrateSummary]:
    """Measure the judge's agreement with human labels (κ, accuracy, calibration), and
    gate on it: `judge calibrate`.

    Args:
        labels: The human labels: a file (JSONL, CSV, Parquet, hf://...) or rows (dicts:
            `{"id": ..., "label": ...}`, with the case's fields unless `cases` holds
            them), kept as RUN_DIR/inputs/labels.jsonl.
        rubric: The rubric to judge with (needed unless `results` is given; with
            `results`, the labels are checked against its scale).
        model: The judge, or a list for a panel (None: the rubric's).
        api_base: An OpenAI-compatible server's endpoint.
        out: The run directory (None: a new runs/<UTC time>-calibrate-<rubric>).
        cache: False: no reply cache.
        cases: The labelled cases' dataset, joined on id (default: the labels' rows).
        old: Pairwise rubrics: OLD's answers.
        new: Pairwise rubrics: NEW's answers.
        results: A finished run's results.jsonl: measure its verdicts, call no judge.
            Without `rubric` the labels are read as its verdicts' kind, unchecked
            against a scale (the command line looks for the run's rubric instead).
        label_map: Labels translated before they are read: `{"A": "old", "B": "new"}`.
        key: The review-key.json of a blind pairwise sheet.
        on: What the thresholds compare: `"point"` or `"lower-bound"`.
        on_result: Called with each case's result as it is written.
        **settings: The judging flags (no cascade, subset or scale-out: calibrate judges
            every labelled case) and the thresholds `min_kappa`, `min_accuracy`,
            `min_stability`.

    Returns:
        The finished run (`summary.cohen_kappa`, `summary.accuracy`, `summary.gate`, ...).
    """
    read = read_settings(
        {"model": model, "api_base": api_base, "out": out, "cache": cache, **settings},
        caller="calibrate_judge",
        flags=offered(CASCADE_FLAGS | SUBSET_FLAGS | SCALE_OUT_FLAGS | CHECKLIST_FLAGS),
        thresholds=thresholds_of(CALIBRATE),
        own=("labels", "rubric", "cases", "old", "new", "results", "label_map", "key", "on"),
    )
    gate = GateSpec.of(read.thresholds, on=choice(GateOn, "on", on))
    check_calibrate_on(gate)
    mapped = label_map_text(label_map)
    with Preparing("calibrate", rubric, read.flags) as prep:
        labels_path = Path(prep.dataset(labels, "labels"))
        source = label_source(labels_path, mapped, as_path(key))
        given = {
            name: prep.dataset(v, name)
            for name, v in (("cases", cases), ("old", old), ("new", new))
            if v is not None
        }
        options = [
            ("--rubric", prep.rubric_word, None),
            ("--results", as_path(results), None),
            *((f"--{name}", Path(path), None) for name, path in given.items()),
            ("--label-map", mapped, None),
            ("--key", as_path(key), None),
            ("--on", gate.on, GateOn.POINT),
        ]
        argv = command_line("calibrate", [labels_path], prep.flags, read.thresholds, *options)
        if results is not None:
            return finished(Path(results), source, prep, gate, argv)
        labelled = Labelled(source, **{name: Path(path) for name, path in given.items()})
        job = prepare_calibration(prep.found, prep.flags, labelled, gate)
        return run_prepared(job, argv=argv, on_result=on_result)


def finished(
    results: Path, source: Any, prep: Preparing, gate: GateSpec, argv: list[str]
) -> Run[CalibrateSummary]:
    """Calibrate a finished run's verdicts into the prepared run directory."""
    from judgecli.store.lock import release_run_dir

    warnings = (
        []
        if prep.found
        else ["the labels are checked against no scale (pass rubric= to check them)"]
    )
    try:
        outcome = calibrate_finished(
            results, source, prep.found, prep.flags, gate, argv=argv, warnings=warnings
        )
    finally:
        release_run_dir(prep.run_dir)
    return Run(summary=outcome.summary, run_dir=outcome.run_dir)


def label_map_text(label_map: Mapping[str, str] | str | None) -> str | None:
    """`label_map` as --label-map writes it: FROM=TO,..."""
    if label_map is None or isinstance(label_map, str):
        return label_map
    return ",".join(f"{given}={meant}" for given, meant in label_map.items())
