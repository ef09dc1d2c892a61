"""`judge calibrate`: how far can we trust the judge? Its agreement with human labels.

Two ways in: judge the human-labelled cases now (same runner, store and limits as
`score`/`pairwise`), or take the verdicts of a finished run (`--results`) and call nothing.
Either way the numbers come from results.jsonl and the labels file alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgecli.commands.setup import check_images
from judgecli.deciding.gate import GateSpec
from judgecli.errors import ConfigError, DatasetError, InputError
from judgecli.grading.debias import FlipPolicy
from judgecli.grading.grade import GradingPlan, grade_pairwise, grade_pointwise
from judgecli.inputs.dataset import DatasetScan, iter_cases, scan_dataset, scan_labelled_cases
from judgecli.inputs.labels import Label, LabelSpace, check_labels_match, dataset_ids, read_labels
from judgecli.inputs.pairs import PairScan, iter_pairs, scan_pairs
from judgecli.result import CaseResult, CaseStatus
from judgecli.rubric import Rubric, RubricKind
from judgecli.running.job import Ending, Job, Outcome, conclude, open_unjudged_run
from judgecli.settings.config import RunConfig
from judgecli.store import DISAGREEMENTS, RESULTS, RunStore, read_results
from judgecli.store.sheets import REVIEW_KEY, read_review_key
from judgecli.summary.calibrate import (
    CalibrateSummary,
    disagreements,
    label_results,
    summarize_calibration,
)


def infer_kind(results: list[CaseResult]) -> RubricKind:
    """The verdict kind of a results file, from its first graded case."""
    for r in results:
        if r.status is CaseStatus.OK:
            if r.winner is not None or r.consistent is not None:
                return RubricKind.PAIRWISE
            if r.choice is not None:
                return RubricKind.BINARY
            if r.score is not None:
                return RubricKind.POINTWISE
    raise InputError("the results file has no graded case to calibrate against")


@dataclass(frozen=True)
class LabelSource:
    """Where the human labels come from, and how to read them."""

    path: Path
    label_map: dict[str, str] = field(default_factory=dict)
    """--label-map: labels translated before they are read (A=old, 1=new...)."""
    key: Path | None = None
    """The review-key.json of a blind pairwise sheet."""

    def read(self, space: LabelSpace, *, results: Path | None = None) -> list[Label]:
        """The labels, checked against `space`. A blind sheet's key is --key, else the
        review-key.json beside the results being calibrated, if there is one.
        """
        beside = results.parent / REVIEW_KEY if results else None
        key = self.key or (beside if beside and beside.exists() else None)
        review_key = read_review_key(key) if key else None
        return read_labels(self.path, space, label_map=self.label_map, key=review_key)


def calibration_ending(
    labels: list[Label],
    space: LabelSpace,
    *,
    rubric: Rubric | None,
    rubric_hash: str,
    seed: int,
    gate: GateSpec,
) -> Ending[CalibrateSummary]:
    """Agreement with the labels as a command's ending: the numbers, a warning for labels
    without a verdict, results.jsonl rewritten with each case's human labels and whether
    the judge agrees, and disagreements.jsonl.
    """

    def summarize(results: list[CaseResult]) -> CalibrateSummary:
        return summarize_calibration(
            results,
            labels,
            space,
            seed=seed,
            rubric_name=rubric.name if rubric else "(from results)",
            rubric_version=rubric.version if rubric else "-",
            rubric_hash=rubric_hash,
        )

    def unmatched(summary: CalibrateSummary) -> list[str]:
        if not summary.n_unmatched_labels:
            return []
        return [
            f"{summary.n_unmatched_labels} label(s) have no judge verdict (no such id in the "
            "results, or the case failed) and are left out"
        ]

    def write_labelled(store: RunStore, results: list[CaseResult]) -> list[CaseResult]:
        labelled = label_results(results, labels, space.kind)
        store.write_text(
            RESULTS, "".join(r.model_dump_json(exclude_none=True) + "\n" for r in labelled)
        )
        store.write_jsonl(DISAGREEMENTS, disagreements(results, labels, space.kind))
        return labelled

    return Ending(summarize, gate=gate, warnings_of=unmatched, write_files=write_labelled)


def calibrate_results(
    results_path: Path,
    source: LabelSource,
    *,
    rubric: Rubric | None,
    out: Path,
    argv: list[str],
    gate: GateSpec,
    seed: int = 0,
    step_summary: Path | None = None,
    warnings: Sequence[str] = (),
    replace: bool = False,
) -> Outcome[CalibrateSummary]:
    """Agreement of verdicts already made (`--results`): no judge is called. Without a
    rubric the labels are read as the results' kind of verdict; `replace` (--force) starts
    an existing `out` over.
    """
    results = list(read_results(results_path))
    if gate.on_repeats and not any(r.repeats for r in results):
        raise InputError(
            f"{results_path}: {' and '.join(gate.on_repeats)} need verdicts judged with "
            "--repeats K, and these have one each",
            hint="judge with --repeats 3 (and a temperature above 0), or drop the flag",
        )
    space = LabelSpace.of(rubric) if rubric else LabelSpace(kind=infer_kind(results))
    labels = source.read(space, results=results_path)
    check_labels_match(labels, [r.id for r in results], source.path, results_path)
    hashes = sorted({r.rubric_hash for r in results})
    run_dir = open_unjudged_run(
        out, command="calibrate", argv=argv, read=results_path, replace=replace
    )
    ending = calibration_ending(
        labels,
        space,
        rubric=rubric,
        rubric_hash=rubric.content_hash if rubric else ",".join(hashes),
        seed=seed,
        gate=gate,
    )
    return conclude(run_dir, results, ending, warnings=warnings, step_summary=step_summary)


def calibration_job(
    config: RunConfig,
    rubric: Rubric,
    source: LabelSource,
    *,
    cases: Path | None = None,
    old: Path | None = None,
    new: Path | None = None,
    gate: GateSpec,
) -> Job[Any, CalibrateSummary]:
    """Judge every labelled case now, then measure agreement with the labels. The cases
    are --cases (or the labels file itself); a pairwise rubric's are --old and --new (so the
    job's items are cases or pairs, which only the job's own grader sees).
    """
    space = LabelSpace.of(rubric)
    labels = source.read(space)
    plan = GradingPlan.of(config, rubric, flip_policy=FlipPolicy.TIE)
    ending = calibration_ending(
        labels, space, rubric=rubric, rubric_hash=rubric.content_hash, seed=config.seed, gate=gate
    )
    if rubric.kind is RubricKind.PAIRWISE:
        if old is None or new is None:
            raise ConfigError("a pairwise rubric needs --old OLD.jsonl --new NEW.jsonl")
        pairs = labelled_pairs(source.path, old, new, labels, rubric, config.field_map)
        check_images(config, rubric, pairs.images)
        return Job(
            config=config,
            plan=plan,
            items=iter_pairs(pairs, requires=rubric.requires, field_map=config.field_map),
            total=len(pairs.pairs),
            grade=grade_pairwise,
            ending=ending,
        )
    scan = labelled_cases(source.path, cases, labels, rubric, config.field_map)
    check_images(config, rubric, scan.images)
    return Job(
        config=config,
        plan=plan,
        items=iter_cases(scan, requires=rubric.requires, field_map=config.field_map),
        total=len(scan.lines),
        grade=grade_pointwise,
        ending=ending,
    )


def labelled_cases(
    labels_path: Path,
    cases_path: Path | None,
    labels: list[Label],
    rubric: Rubric,
    field_map: dict[str, str],
) -> DatasetScan:
    """The cases to judge: from `--cases` (only the labelled ids), else the labels file."""
    if cases_path is None:
        return scan_labelled_cases(labels_path, requires=rubric.requires, field_map=field_map)
    scan = scan_dataset(
        cases_path,
        requires=rubric.requires,
        field_map=field_map,
        only={label.id for label in labels},
    )
    if not scan.lines:
        check_labels_match(labels, dataset_ids(cases_path, field_map), labels_path, cases_path)
    return scan


def labelled_pairs(
    labels_path: Path,
    old: Path,
    new: Path,
    labels: list[Label],
    rubric: Rubric,
    field_map: dict[str, str],
) -> PairScan:
    """The pairs to judge: OLD and NEW joined on id, only the labelled ids (an id in one
    file only is left out, as it has no verdict to compare).
    """
    try:
        return scan_pairs(
            old,
            new,
            requires=rubric.requires,
            field_map=field_map,
            allow_partial=True,
            only={label.id for label in labels},
        )
    except DatasetError:
        # Labels of other cases leave no pair to judge: say that, rather than what the
        # join found. OLD is read again only here, on the way to an error.
        check_labels_match(labels, dataset_ids(old, field_map), labels_path, old)
        raise
