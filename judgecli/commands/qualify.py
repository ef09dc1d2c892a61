"""`judge qualify`: may this judge (model(s) and rubric) gate? Its agreement with human labels
on labelled judge sets (bundled ones, `inputs.judge_sets`, or the user's own), each set's
numbers with intervals, a gate on the agreement's lower bound, and a qualification record
that `--require-qualified` holds later runs to.

A job on the spine like every judging command (`running.job.run_job`: the reply cache,
--resume, --max-cost, --max-failures come with it): every set's cases in one run, each case
id `SET/ID`; a pairwise rubric judges both orders (position consistency is one of the
numbers). How the run concludes is `QualifyEnding`: the per-set summary
(`summary.qualify`), the --max-failures rule, the gate and the reports (`report.qualify`).
The record (`inputs.qualification`) is written with the reports when the run is complete.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgecli.errors import ConfigError
from judgecli.grading.debias import FlipPolicy
from judgecli.grading.grade import GradingPlan, grade_pairwise, grade_pointwise
from judgecli.inputs.judge_sets import JudgeSet
from judgecli.inputs.labels import LabelSpace
from judgecli.inputs.qualification import (
    QualificationRecord,
    QualifiedSet,
    check_qualified,
    read_record,
)
from judgecli.report.qualify import render_qualify_html, render_qualify_junit, render_qualify_md
from judgecli.result import CaseResult
from judgecli.rubric import Rubric, RubricKind
from judgecli.running.conclusion import Reports, Shortfall, first_failure
from judgecli.running.job import Job
from judgecli.running.run_dir import now_iso
from judgecli.settings.config import FailureLimit, RunConfig
from judgecli.store import RunStore
from judgecli.summary.qualify import (
    QualifyGate,
    QualifySummary,
    SetLabels,
    qualify_gate,
    summarize_qualify,
)

if TYPE_CHECKING:
    from judgecli.commands.setup import FoundRubric
    from judgecli.settings.flags import JudgeFlags
    from judgecli.summary.run import RunSummary

MAX_FLOOR = 1.0


def judge_version() -> str:
    """This judge's version, as the record keeps it."""
    from judgecli import __version__

    return __version__


@dataclass(frozen=True)
class QualifyEnding:
    """How a qualify run concludes (a `Concluding` of QualifySummary)."""

    sets: list[SetLabels]
    space: LabelSpace
    rubric: Rubric
    models: list[str]
    seed: int
    floor: float | None

    def summarize(self, results: list[CaseResult]) -> QualifySummary:
        """Each set's numbers from its cases' results."""
        return summarize_qualify(
            results,
            self.sets,
            self.space,
            rubric=self.rubric,
            models=self.models,
            judge_version=judge_version(),
            seed=self.seed,
            floor=self.floor,
        )

    def warnings_of(self, summary: QualifySummary) -> list[str]:
        """A set where the judge's two orders disagree on more than a third of the asks."""
        return [
            f"{s.name}: the judge's verdict changed with the answers' order on "
            f"{1 - s.position_consistency:.0%} of its asks: its agreement mixes position "
            "bias with judgement (see docs/qualify.md)"
            for s in summary.sets
            if s.position_consistency is not None and s.position_consistency < 2 / 3
        ]

    def incomplete(
        self, summary: QualifySummary, limit: FailureLimit, total: int | None
    ) -> str | None:
        """The --max-failures rule of every command, in cases."""
        short = Shortfall.of(summary.n_failed, summary.n_cases, limit, total)
        reasons = []
        if short.too_many_failed:
            reasons.append(short.failed_words("cases"))
        if short.not_judged:
            reasons.append(short.stopped_words("cases"))
        if reasons and summary.failures:
            reasons.append(first_failure(summary.failures))
        return "; ".join(reasons) or None

    def verdict(self, summary: QualifySummary) -> QualifyGate | None:
        """The gate on every set's agreement lower bound (None without --min-agreement)."""
        return None if self.floor is None else qualify_gate(summary.sets, self.floor)

    def own_files(self, store: RunStore, results: list[CaseResult]) -> list[CaseResult]:
        """No files of its own before summary.json (the record follows the conclusion)."""
        return results

    def reports(self, summary: QualifySummary, results: Sequence[CaseResult]) -> Reports:
        """report.md, report.html and results.junit.xml (one testcase per set), and the
        record of a complete run (none of an incomplete one: the judge was not measured).
        """
        return QualifyReports(
            markdown=render_qualify_md(summary),
            html=render_qualify_html(summary),
            junit=render_qualify_junit(summary),
            qualified=None if summary.incomplete else summary,
        )


@dataclass(frozen=True)
class QualifyReports(Reports):
    """A qualify run's reports, and its record: written with them, so before summary.json
    (which says the run finished) and under the run directory's lock.
    """

    qualified: QualifySummary | None = None
    """The complete run's summary the record is made of (None: no record)."""

    def write(self, run_dir: Path, *, step_summary: Path | None = None) -> Path:
        """Write the record (if any), then the reports; the HTML report's path."""
        if self.qualified is not None:
            from judgecli.store.qualification import write_record

            write_record(run_dir, qualification_record(self.qualified, run_dir))
        return super().write(run_dir, step_summary=step_summary)


def check_floor(floor: float | None) -> None:
    """--min-agreement is a share."""
    if floor is not None and not 0.0 <= floor <= MAX_FLOOR:
        raise ConfigError(
            f"--min-agreement {floor:g}: an agreement is a share from 0 to 1",
            hint="e.g. --min-agreement 0.7",
        )


def qualify_job(
    config: RunConfig, rubric: Rubric, sets: list[JudgeSet], floor: float | None
) -> Job[Any, QualifySummary]:
    """Every set's cases judged in one run; a pairwise rubric in both orders."""
    check_floor(floor)
    space = LabelSpace.of(rubric)
    ending = QualifyEnding(
        sets=[
            SetLabels(s.name, s.labels, s.n_cases, str(s.path), s.sha256, s.bundled) for s in sets
        ],
        space=space,
        rubric=rubric,
        models=config.model_names,
        seed=config.seed,
        floor=floor,
    )
    items = [item for s in sets for item in s.items]
    pairwise = rubric.kind is RubricKind.PAIRWISE
    return Job(
        config=config,
        plan=GradingPlan.of(config, rubric, flip=pairwise, flip_policy=FlipPolicy.TIE),
        items=items,
        total=len(items),
        grade=grade_pairwise if pairwise else grade_pointwise,
        ending=ending,
    )


def qualification_record(summary: QualifySummary, run_dir: Path) -> QualificationRecord:
    """The record of a complete qualify run."""
    return QualificationRecord(
        judge_version=summary.judge_version,
        models=sorted(summary.models),
        rubric=summary.rubric,
        rubric_version=summary.rubric_version,
        rubric_hash=summary.rubric_hash,
        min_agreement=summary.min_agreement,
        passed=None if summary.gate is None else summary.gate.passed,
        sets=[
            QualifiedSet(
                name=s.name,
                n=s.n,
                agreement=s.agreement,
                agreement_ci=s.agreement_ci,
                kappa=s.kappa,
                position_consistency=s.position_consistency,
                sha256=s.sha256,
            )
            for s in summary.sets
        ],
        created=now_iso(),
        run=str(run_dir),
    )


def require_qualified(record_path: Path, *, models: list[str], rubric: Rubric) -> None:
    """--require-qualified: refuse (exit 2) a judge or rubric the record did not qualify."""
    record = read_record(record_path)
    check_qualified(
        record,
        record_path,
        models=models,
        rubric_name=rubric.name,
        rubric_hash=rubric.content_hash,
    )


def check_job(job: Job[Any, Any], record_path: Path) -> None:
    """--require-qualified on score or pairwise: the prepared job's judge and rubric (as
    the run would use them, the rubric's judge block and JUDGE_MODEL included) against the
    record, before anything is called or written.
    """
    require_qualified(record_path, models=job.config.model_names, rubric=job.rubric)


def check_summary(summary: RunSummary, record_path: Path) -> None:
    """--require-qualified on `judge gate`: the finished run's judge and rubric."""
    record = read_record(record_path)
    check_qualified(
        record,
        record_path,
        models=summary.models,
        rubric_name=summary.rubric,
        rubric_hash=summary.rubric_hash,
    )


def prepare_qualify(
    found: FoundRubric, flags: JudgeFlags, sets: Sequence[str], floor: float | None
) -> Job[Any, QualifySummary]:
    """`judge qualify`: the sets read and checked against the rubric, the RunConfig built,
    the job made (the command line and `qualify_judge` alike); exit 2's errors before any
    call or write.
    """
    from judgecli.commands.setup import judge_config
    from judgecli.inputs.judge_sets import read_sets

    check_floor(floor)
    read = read_sets(list(sets), found.rubric)
    config = judge_config("qualify", found.rubric, flags)
    return qualify_job(config, found.rubric, read, floor)
