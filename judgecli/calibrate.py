"""`judge calibrate`: how far can we trust the judge? Its agreement with human labels.

Two ways in: judge the human-labelled cases now (same runner, store and limits as
`score`/`pairwise`), or take the verdicts of a finished run (`--results`) and call nothing.
Either way the numbers come from results.jsonl and the labels file alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from judgecli.cascade import tiered
from judgecli.config import DEFAULT_MAX_FAILURES, FailureLimit, RunConfig
from judgecli.dataset import (
    DatasetScan,
    iter_cases,
    iter_lines,
    parse_case,
    scan_dataset,
    scan_labelled_cases,
)
from judgecli.debias import FlipPolicy
from judgecli.errors import DatasetError, InputError
from judgecli.gate import GateResult, GateSpec, evaluate_gate, gate_dict
from judgecli.grading import GradingPlan, grade_pairwise, grade_pointwise
from judgecli.labels import Label, LabelSpace
from judgecli.pairs import PairScan, iter_pairs, named, scan_pairs
from judgecli.result import CaseResult, CaseStatus
from judgecli.rubric import Rubric, RubricKind
from judgecli.run import finish_run, judge_all, now_iso
from judgecli.store import DISAGREEMENTS, RESULTS, RUN_INFO, RunStore, read_results
from judgecli.summary.calibrate import disagreements, label_results, summarize_calibration
from judgecli.summary.run import RunSummary, run_facts


@dataclass(frozen=True)
class CalibrateOutcome:
    """A finished calibration."""

    run_dir: Path
    summary: RunSummary
    gate: GateResult | None


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


def summarize(
    results: list[CaseResult],
    labels: list[Label],
    space: LabelSpace,
    *,
    rubric_name: str,
    rubric_version: int | str,
    rubric_hash: str,
    seed: int,
    warnings: list[str],
) -> RunSummary:
    """The calibrate summary: run facts plus every agreement number."""
    models = sorted({j.model for r in results for j in r.judgements})
    facts = run_facts(results, command="calibrate", rubric=None, models=models)
    facts |= {"rubric": rubric_name, "rubric_version": rubric_version, "rubric_hash": rubric_hash}
    numbers = summarize_calibration(results, labels, space, seed=seed)
    if numbers["n_unmatched_labels"]:
        warnings.append(
            f"{numbers['n_unmatched_labels']} label(s) have no judge verdict (no such id in the "
            "results, or the case failed) and are left out"
        )
    return RunSummary(**facts, **numbers, warnings=warnings)


def finish(
    run_dir: Path,
    summary: RunSummary,
    results: list[CaseResult],
    labels: list[Label],
    space: LabelSpace,
    gate: GateSpec,
    step_summary: Path | None,
    *,
    judged: tuple[FailureLimit, int] | None = None,
) -> CalibrateOutcome:
    """Gate, then write results.jsonl (each case with its human labels and whether the
    judge agrees), summary.json, the reports and disagreements.jsonl. `judged`: the
    failure limit and case count of cases judged now (a run that lost too many is
    incomplete).
    """
    result = evaluate_gate(summary, gate)
    if result is not None:
        summary.gate = gate_dict(result)
    labelled = label_results(results, labels, space.kind)
    store = RunStore(run_dir)
    store.write_text(
        RESULTS, "".join(r.model_dump_json(exclude_none=True) + "\n" for r in labelled)
    )
    store.write_jsonl(DISAGREEMENTS, disagreements(results, labels, space.kind))
    limit, total = judged or (DEFAULT_MAX_FAILURES, None)
    finish_run(run_dir, summary, step_summary=step_summary, results=labelled,
               failure_limit=limit, total=total)  # fmt: skip
    return CalibrateOutcome(run_dir=run_dir, summary=summary, gate=result)


def calibrate_existing(
    results: list[CaseResult],
    labels: list[Label],
    space: LabelSpace,
    *,
    sources: tuple[Path, Path],
    rubric: Rubric | None,
    out: Path,
    argv: list[str],
    gate: GateSpec,
    seed: int = 0,
    step_summary: Path | None = None,
    warnings: list[str] | None = None,
    replace: bool = False,
) -> CalibrateOutcome:
    """Agreement of verdicts already made (`--results`): no judge is called. `sources` is
    (labels file, results file), for messages and run.json; `replace` (--force) starts
    an existing --out over.
    """
    labels_path, results_path = sources
    check_labels_match(labels, [r.id for r in results], labels_path, results_path)
    hashes = sorted({r.rubric_hash for r in results})
    store = RunStore.create(out, with_results=False, replace=replace)
    store.write_json(RUN_INFO, {
        "command": "calibrate", "argv": argv, "results": str(results_path),
        "started": now_iso(),
    })  # fmt: skip
    summary = summarize(
        results, labels, space,
        rubric_name=rubric.name if rubric else "(from results)",
        rubric_version=rubric.version if rubric else "-",
        rubric_hash=rubric.content_hash if rubric else ",".join(hashes),
        seed=seed, warnings=warnings or [],
    )  # fmt: skip
    return finish(store.path, summary, results, labels, space, gate, step_summary)


def calibrate_by_judging(
    config: RunConfig,
    rubric: Rubric,
    labels: list[Label],
    items: DatasetScan | PairScan,
    *,
    argv: list[str],
    on_result: Callable[[CaseResult], None],
    gate: GateSpec,
    warnings: list[str],
    step_summary: Path | None = None,
) -> CalibrateOutcome:
    """Judge every labelled case now, then measure agreement with the labels."""
    plan = GradingPlan.of(config, rubric, flip_policy=FlipPolicy.TIE)
    run_dir: Path
    if isinstance(items, PairScan):
        total = len(items.pairs)
        pairs = iter_pairs(items, requires=rubric.requires, field_map=config.field_map)
        run_dir = judge_all(config, rubric, pairs, tiered(grade_pairwise, plan, None), argv=argv,
                            on_result=on_result, warnings=warnings, total=total)  # fmt: skip
    else:
        total = len(items.lines)
        cases = iter_cases(items, requires=rubric.requires, field_map=config.field_map)
        run_dir = judge_all(config, rubric, cases, tiered(grade_pointwise, plan, None), argv=argv,
                            on_result=on_result, warnings=warnings, total=total)  # fmt: skip
    results = list(read_results(run_dir / RESULTS))
    space = LabelSpace.of(rubric)
    summary = summarize(
        results, labels, space, rubric_name=rubric.name, rubric_version=rubric.version,
        rubric_hash=rubric.content_hash, seed=config.seed, warnings=warnings,
    )  # fmt: skip
    return finish(run_dir, summary, results, labels, space, gate, step_summary,
                  judged=(config.max_failures, total))  # fmt: skip


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
    scan = scan_dataset(cases_path, requires=rubric.requires, field_map=field_map,
                        only={label.id for label in labels})  # fmt: skip
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
    check_labels_match(labels, dataset_ids(old, field_map), labels_path, old)
    return scan_pairs(old, new, requires=rubric.requires, field_map=field_map,
                      allow_partial=True, only={label.id for label in labels})  # fmt: skip


def check_labels_match(
    labels: list[Label], case_ids: list[str], labels_path: Path, cases_path: Path
) -> None:
    """InputError unless some label's id is a case id. Labels of other cases (another
    run's, or ids spelled differently) would give an all-n/a report that looks like a
    result; the message shows both sides' ids, so the mismatch is visible at once.
    """
    known = set(case_ids)
    if any(label.id in known for label in labels):
        return
    label_ids = sorted({label.id for label in labels})
    raise DatasetError(
        labels_path, None, f"none of the {len(labels)} labels match a case id of {cases_path} "
        f"(labels: {named(label_ids)}; cases: {named(sorted(known)) or 'none'})",
        hint='labels are joined to cases on "id": pass the labels of these cases',
    )  # fmt: skip


def dataset_ids(path: Path, field_map: dict[str, str]) -> list[str]:
    """The case ids of a dataset, in file order."""
    return [parse_case(path, number, text, field_map=field_map, requires=[]).id
            for number, _, text in iter_lines(path)]  # fmt: skip
