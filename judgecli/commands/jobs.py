"""Each judging command's job, prepared from what it was asked: the rubric's kind checked,
the shared settings made one RunConfig, the gate read, the dataset scanned, the Job built.

The command line (cli/) and the Python API (api/) both call these and then run the job on
the spine (`running.job.run_job`): a run is prepared one way whoever asked for it, so the
same settings give the same run, the same checks (exit 2 before anything is called) and the
same numbers. What a caller adds is only its own: typer's flags and the progress bar, or
keyword arguments and a `Run`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgecli.commands.setup import (
    FoundRubric,
    GateAsked,
    check_images,
    check_planned_n,
    decision_inputs,
    judge_config,
)
from judgecli.grading.debias import FlipPolicy

if TYPE_CHECKING:
    from judgecli.commands.arena.gate import ArenaGateSpec
    from judgecli.commands.arena.schedule import Matchup, Schedule
    from judgecli.commands.calibrate import LabelSource
    from judgecli.deciding.gate import GateSpec
    from judgecli.inputs.dataset import Case
    from judgecli.inputs.pairs import Pair
    from judgecli.inputs.rows import DataPath
    from judgecli.running.job import Job, Outcome
    from judgecli.settings.flags import JudgeFlags
    from judgecli.summary.arena import ArenaSummary
    from judgecli.summary.calibrate import CalibrateSummary
    from judgecli.summary.pairwise import PairwiseSummary
    from judgecli.summary.refine import RefineSummary
    from judgecli.summary.score import ScoreSummary


@dataclass(frozen=True)
class Sides:
    """How the two answers of a case are compared (pairwise, arena): in both orders or
    one, what a judge's disagreement between its orders means, and whether ids found on
    one side only are left out rather than refused.
    """

    flip: bool = True
    flip_policy: FlipPolicy = FlipPolicy.TIE
    allow_partial: bool = False


def prepare_score(
    dataset: DataPath, found: FoundRubric, flags: JudgeFlags, asked: GateAsked
) -> Job[Case, ScoreSummary]:
    """`judge score DATASET`: every case graded with a pointwise or binary rubric."""
    from judgecli.commands import score
    from judgecli.inputs.dataset import scan_dataset

    rubric = found.rubric
    score.check_rubric_kind(rubric, found.where)
    score.check_gate(asked.gate, rubric)
    score.check_labels(asked.labels, rubric)
    config = judge_config("score", rubric, flags)
    decides = decision_inputs(asked, rubric, config, cases=Path(dataset))
    scan = scan_dataset(
        dataset,
        requires=rubric.requires,
        field_map=config.field_map,
        limit=flags.limit,
        sample=flags.sample_size,
        seed=flags.seed,
        shard=config.shard,
    )
    check_planned_n(flags, scan.total, scan.name)
    check_images(config, rubric, scan.images)
    return score.score_job(config, rubric, scan, decides)


def prepare_pairwise(
    old: DataPath,
    new: DataPath,
    found: FoundRubric,
    flags: JudgeFlags,
    asked: GateAsked,
    sides: Sides,
) -> Job[Pair, PairwiseSummary]:
    """`judge pairwise OLD NEW`: every pair joined on id, judged with a pairwise rubric."""
    from judgecli.commands import pairwise
    from judgecli.inputs.pairs import scan_pairs

    rubric = found.rubric
    pairwise.check_rubric_kind(rubric, found.where)
    pairwise.check_consistency_floor(asked.gate, flip=sides.flip)
    config = judge_config("pairwise", rubric, flags)
    decides = decision_inputs(asked, rubric, config, cases=Path(old))
    scan = scan_pairs(
        old,
        new,
        requires=rubric.requires,
        field_map=config.field_map,
        allow_partial=sides.allow_partial,
        limit=flags.limit,
        sample=flags.sample_size,
        seed=flags.seed,
        shard=config.shard,
    )
    check_planned_n(flags, scan.total, f"{scan.old.name} and {scan.new.name}")
    check_images(config, rubric, scan.images)
    return pairwise.pairwise_job(
        config, rubric, scan, decides, flip=sides.flip, flip_policy=sides.flip_policy
    )


@dataclass(frozen=True)
class Labelled:
    """Where `judge calibrate` finds what it judges: the labels, and the cases they label
    (the labels file itself, --cases, or a pairwise rubric's --old and --new).
    """

    source: LabelSource
    cases: Path | None = None
    old: Path | None = None
    new: Path | None = None


def label_source(labels: Path | None, label_map: str | None, key: Path | None) -> LabelSource:
    """The human labels to calibrate against (ConfigError when none are given)."""
    from judgecli.commands.calibrate import LabelSource
    from judgecli.errors import ConfigError
    from judgecli.inputs.labels import parse_label_map

    if labels is None:
        raise ConfigError(
            "no labels file",
            hint="judge calibrate LABELS.jsonl --rubric R, or "
            "--results RESULTS.jsonl --labels LABELS.jsonl",
        )
    return LabelSource(labels, label_map=parse_label_map(label_map), key=key)


def prepare_calibration(
    found: FoundRubric | None, flags: JudgeFlags, labelled: Labelled, gate: GateSpec
) -> Job[Any, CalibrateSummary]:
    """`judge calibrate LABELS --rubric R`: every labelled case judged now, then the
    judge's agreement with the labels.
    """
    from judgecli.commands import calibrate
    from judgecli.commands.setup import check_repeat_gate
    from judgecli.errors import ConfigError

    if found is None:
        raise ConfigError(
            "judging needs --rubric",
            hint="or pass --results RESULTS.jsonl to calibrate a finished run",
        )
    config = judge_config("calibrate", found.rubric, flags)
    check_repeat_gate(gate, config, found.rubric)
    return calibrate.calibration_job(
        config,
        found.rubric,
        labelled.source,
        cases=labelled.cases,
        old=labelled.old,
        new=labelled.new,
        gate=gate,
    )


def calibrate_finished(
    results: Path,
    source: LabelSource,
    found: FoundRubric | None,
    flags: JudgeFlags,
    gate: GateSpec,
    *,
    argv: list[str],
    step_summary: Path | None = None,
    warnings: list[str] | None = None,
) -> Outcome[CalibrateSummary]:
    """`judge calibrate --results RESULTS --labels LABELS`: the agreement of verdicts
    already made, into a run directory of its own; no judge is called.
    """
    from judgecli.commands import calibrate
    from judgecli.store import default_run_dir

    rubric = found.rubric if found else None
    return calibrate.calibrate_results(
        results,
        source,
        rubric=rubric,
        out=flags.out or default_run_dir("calibrate", rubric.name if rubric else "results"),
        argv=argv,
        gate=gate,
        seed=flags.seed,
        step_summary=step_summary,
        warnings=warnings or [],
        replace=flags.force,
    )


@dataclass(frozen=True)
class Generating:
    """How `judge refine` generates answers and when it stops (its Generate options)."""

    generator: str
    """The LiteLLM model string of the model that writes the answers."""
    success_rating: float | None = None
    max_attempts: int = 3
    feedback_template: str | None = None
    system: str | None = None
    temperature: float = 0.0


def prepare_refine(
    dataset: DataPath, found: FoundRubric, flags: JudgeFlags, generating: Generating
) -> Job[Case, RefineSummary]:
    """`judge refine DATASET --generator M`: answer, judge, retry with the judge's feedback."""
    from judgecli.commands import refine
    from judgecli.grading.feedback import DEFAULT_FEEDBACK_TEMPLATE, check_template, success_bar
    from judgecli.inputs.dataset import scan_dataset
    from judgecli.settings.judges import model_settings

    template = generating.feedback_template or DEFAULT_FEEDBACK_TEMPLATE
    check_template(template)
    rubric = found.rubric
    success_bar(rubric, generating.success_rating)
    config = judge_config("refine", rubric, flags)
    [generator] = model_settings(
        [generating.generator], api_base=flags.api_base, price=flags.price, json_schema=None
    )
    if config.max_cost is not None:  # as judge_config checked the judges
        from judgecli.judge.provider import check_prices

        check_prices([generator])
    settings = refine.RefineSettings(
        generator=generator,
        success_rating=generating.success_rating,
        max_attempts=generating.max_attempts,
        feedback_template=template,
        system=generating.system,
        temperature=generating.temperature,
        max_tokens=config.max_tokens,
    )
    scan = scan_dataset(
        dataset,
        requires=["input"],
        field_map=config.field_map,
        limit=flags.limit,
        sample=flags.sample_size,
        seed=flags.seed,
    )
    if scan.images is not None:
        from judgecli.errors import ConfigError

        # The generator is sent the input's text: its images would be lost (issue 32).
        raise ConfigError(
            f"{scan.images.first}: the case shows images, and judge refine generates an "
            "answer to an input's text",
            hint="grade cases with images with judge score or judge pairwise",
        )
    return refine.refine_job(config, rubric, scan, settings)


@dataclass(frozen=True)
class Tournament:
    """An arena's own options: the systems' names, the schedule and its budget, the style
    control, and the gate on one system's place.
    """

    names: list[str] | None = None
    baseline: str | None = None
    schedule: Schedule | None = None
    budget: int | None = None
    max_pairs_per_case: int | None = None
    style_control: bool = False
    gate: ArenaGateSpec | None = field(default=None)


def prepare_arena(
    files: list[Path], found: FoundRubric, flags: JudgeFlags, tournament: Tournament, sides: Sides
) -> Job[Matchup, ArenaSummary]:
    """`judge arena A B C ...`: the systems compared pair by pair, on one leaderboard."""
    from judgecli.commands.arena.run import arena_job
    from judgecli.commands.arena.setup import set_up_arena
    from judgecli.commands.pairwise import check_rubric_kind

    rubric = found.rubric
    check_rubric_kind(rubric, found.where)
    config = judge_config("arena", rubric, flags)
    arena = set_up_arena(
        config,
        rubric,
        files,
        names=tournament.names,
        baseline=tournament.baseline,
        schedule=tournament.schedule,
        budget=tournament.budget,
        max_pairs_per_case=tournament.max_pairs_per_case,
        style_control=tournament.style_control,
        gate=tournament.gate,
        flip=sides.flip,
        flip_policy=sides.flip_policy,
        allow_partial=sides.allow_partial,
        limit=flags.limit,
        sample=flags.sample_size,
    )
    return arena_job(arena)
