"""`judge align` end to end: the labels read, the split sealed and written first, the
choosing on train, baseline and aligned judged on the sealed test, the gain with its
interval, and the run directory (`files`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from judgecli.commands.align.candidates import Candidate, Method, TrainCase
from judgecli.commands.align.choosing import (
    DEFAULT_FOLDS,
    Choice,
    Optimizer,
    Rater,
    TrainRater,
    choose,
)
from judgecli.commands.align.files import write_run, write_split
from judgecli.commands.align.outcomes import Verdict, categories, human_outcome, outcome
from judgecli.commands.align.split import Split, majority, seal_split
from judgecli.errors import ConfigError, InputError, TooManyFailuresError
from judgecli.inputs.dataset import Case
from judgecli.inputs.labels import Label
from judgecli.rubric import Rubric
from judgecli.settings.config import DEFAULT_MAX_FAILURES, FailureLimit
from judgecli.stats.paired_gain import paired_gain
from judgecli.summary.align import AlignSummary, SplitRecord, decide, gains_record


@dataclass(frozen=True)
class AlignPlan:
    """What an align run was asked."""

    rubric: Rubric
    rubric_ref: str
    """How rubric.yaml's `extends:` names the base (its path, or a library name)."""
    labels: list[Label]
    labels_hash: str
    model: str
    optimizer_model: str | None
    test_share: float = 0.3
    seed: int = 0
    folds: int = DEFAULT_FOLDS
    min_gain: float | None = None
    confidence: float = 0.95
    resamples: int = 2000
    max_failures: FailureLimit = DEFAULT_MAX_FAILURES
    reasons: dict[str, str] = field(default_factory=dict)
    """A rater's reason per case id, where the labels give one."""


def file_hash(path: Path) -> str:
    """sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


class CheckedRater:
    """A rater whose rounds may lose at most `--max-failures` of their cases (exit 3)."""

    def __init__(self, rater: Rater, limit: FailureLimit) -> None:
        """Check ``rater``'s rounds against ``limit``."""
        self.rater = rater
        self.limit = limit

    async def __call__(self, rubric: Rubric, ids: Sequence[str]) -> dict[str, Verdict]:
        """The verdicts, or TooManyFailuresError."""
        verdicts = await self.rater(rubric, ids)
        failed = [v for v in verdicts.values() if v.failed]
        if len(failed) > self.limit.allowed(len(ids)):
            first = next((v.error for v in failed if v.error), "no verdict")
            raise TooManyFailuresError(
                f"{len(failed)} of {len(ids)} cases failed (--max-failures {self.limit}); "
                f"first: {first}",
                hint="check the judge's endpoint and key; the split is in DIR/split.json",
            )
        return verdicts


def human_outcomes(labels: Sequence[Label], base: Rubric) -> dict[str, str]:
    """Each case's majority label in the terms verdicts are compared in."""
    return majority(labels, lambda label: human_outcome(label.value, base))


def train_cases(
    split: Split,
    cases: dict[str, Case],
    plan: AlignPlan,
    judged: dict[str, Verdict],
) -> list[TrainCase]:
    """The train cases as the choosing sees them (the rater's reason from the labels, else
    the case's own `reason` field).
    """
    human = human_outcomes(plan.labels, plan.rubric)
    shown = majority(plan.labels)
    found = []
    for case_id in split.train:
        case = cases[case_id]
        reason = plan.reasons.get(case_id) or case.metadata.get("reason")
        verdict = judged[case_id]
        found.append(
            TrainCase(
                id=case_id,
                input=case.input or "",
                output=case.output or "",
                label=human[case_id],
                shown=shown[case_id],
                reason=reason if isinstance(reason, str) else None,
                judged=outcome(verdict, plan.rubric),
                judge_reason=verdict.reason,
                score=verdict.score,
            )
        )
    return found


async def align(
    plan: AlignPlan,
    cases: dict[str, Case],
    rater: Rater,
    optimizer: Optimizer | None,
    out: Path,
) -> AlignSummary:
    """Align the rubric and measure the gain on the sealed test; write the run directory."""
    missing = sorted({label.id for label in plan.labels} - set(cases))
    if missing:
        raise InputError(
            f"{len(missing)} labelled case(s) are not in the dataset, e.g. {missing[0]!r}",
            hint="label cases of --dataset (their ids must match)",
        )
    try:
        split = seal_split(
            human_outcomes(plan.labels, plan.rubric), test_share=plan.test_share, seed=plan.seed
        )
    except ValueError as err:
        raise ConfigError(
            f"cannot split the labels: {err}",
            hint="label more cases, or pick --test-share between 0.1 and 0.5",
        ) from None
    write_split(out, split, test_share=plan.test_share, seed=plan.seed)
    checked = CheckedRater(rater, plan.max_failures)
    train_rater = TrainRater(checked, split.train)
    judged = await train_rater(plan.rubric, split.train)
    choice = await choose(
        plan.rubric,
        train_cases(split, cases, plan, judged),
        train_rater,
        optimizer=optimizer,
        folds=plan.folds,
        seed=plan.seed,
    )
    # The one place the sealed test is judged: the choice is made.
    before = await checked(plan.rubric, split.test)
    aligned = choice.chosen.rubric(plan.rubric)
    after = await checked(aligned, split.test) if choice.chosen.asks_differently else before
    return conclude(plan, split, choice, before, after, out)


def conclude(
    plan: AlignPlan,
    split: Split,
    choice: Choice,
    before: dict[str, Verdict],
    after: dict[str, Verdict],
    out: Path,
) -> AlignSummary:
    """The numbers and the run directory's files."""
    test = set(split.test)
    rows = [label for label in plan.labels if label.id in test]
    aligned = choice.chosen.rubric(plan.rubric)
    gains = paired_gain(
        [r.id for r in rows],
        [human_outcome(r.value, plan.rubric) for r in rows],
        [outcome(before[r.id], plan.rubric) for r in rows],
        [outcome(after[r.id], aligned) for r in rows],
        categories=categories(plan.rubric),
        resamples=plan.resamples,
        seed=plan.seed,
        confidence=plan.confidence,
    )
    decision, passed = decide(gains, plan.min_gain)
    better = decision.value == "better"
    kept = choice.chosen if better else Candidate(Method.BASELINE)
    baseline, aligned_numbers, gain, gain_ci = gains_record(gains)
    summary = AlignSummary(
        rubric=plan.rubric.name,
        rubric_hash=plan.rubric.content_hash,
        aligned_rubric_hash="",  # rubric.yaml's, once written (files.write_run)
        labels_hash=plan.labels_hash,
        model=plan.model,
        optimizer_model=plan.optimizer_model,
        seed=plan.seed,
        split=SplitRecord(
            train=split.train,
            test=split.test,
            test_hash=split.test_hash,
            test_share=plan.test_share,
            seed=plan.seed,
        ),
        folds=choice.folds,
        cv_accuracy={m.value: v for m, v in choice.cv_accuracy.items()},
        method=choice.chosen.method.value,
        pass_at=choice.chosen.pass_at,
        confidence=plan.confidence,
        n_test_labels=len(rows),
        baseline=baseline,
        aligned=aligned_numbers,
        gain=gain,
        gain_ci=gain_ci,
        primary_metric="kappa",
        decision=decision,
        kept="aligned" if better else "baseline",
        min_gain=plan.min_gain,
        passed=passed,
    )
    return write_run(out, plan.rubric_ref, plan.rubric, summary, kept, rows)
