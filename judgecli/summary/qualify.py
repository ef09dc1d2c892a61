"""Judge verdicts on labelled judge sets → the QualifySummary of a `qualify` run: per set,
the judge's agreement with the human labels (every (case, label) pair counted, as calibrate
counts them: `summary.agreement`), Cohen's κ, position consistency (both orders) and length
preference, each with its interval; and the gate on the agreement's lower bound. Pure.

Intervals: agreement and κ as calibrate's (`summary.agreement.agreement`: Wilson's over the
cases with one label each, else a cluster bootstrap over cases); position consistency
Wilson's over the asks whose two orders were both read (one per judge and case); length
preference Wilson's over the decided cases whose answers differ in length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.rubric import Rubric, RubricKind
from judgecli.stats.intervals import Interval, wilson_interval
from judgecli.summary.agreement import agreement, pair_up
from judgecli.summary.facts import FailedCase, Usage
from judgecli.summary.head import run_facts
from judgecli.summary.pairwise import order_agreements
from judgecli.summary.parts import Part, Record

if TYPE_CHECKING:
    from judgecli.inputs.labels import Label, LabelSpace


class SetQualification(Record):
    """One judge set's numbers: summary.json's `sets[]`. A Record: the stable keys (`name`,
    `n`, `agreement`, `agreement_ci`, `kappa`, `position_consistency`) are always written,
    null when there is no value (a pointwise rubric has no position consistency); the
    pairwise diagnostics' other keys only for a pairwise rubric, `passed` only with a floor.
    """

    name: str
    n: int
    """(case, human label) pairs with a verdict: every rater's label counts."""
    n_cases: int
    """Cases (ids) in the set."""
    n_failed: int
    """Cases the judge could not grade (left out of the numbers)."""
    agreement: float | None = None
    """Share of (case, label) pairs where the judge's verdict equals the label (a tie is a
    label of its own)."""
    agreement_ci: Interval | None = None
    kappa: float | None = None
    """Cohen's κ of judge and labels (chance-corrected agreement)."""
    kappa_ci: Interval | None = None
    position_consistency: float | None = None
    """Pairwise: share of asks whose two orders gave the same verdict."""
    position_consistency_ci: Interval | None = None
    longer_wins_rate: float | None = None
    """Pairwise length preference: among decided cases whose answers differ in length, how
    often the longer one won (0.5: no preference)."""
    longer_wins_rate_ci: Interval | None = None
    passed: bool | None = None
    """With --min-agreement: whether the agreement's lower bound reaches it."""
    file: str
    sha256: str
    bundled: bool


class QualifyGate(Record):
    """The gate on every set's agreement lower bound (--min-agreement)."""

    passed: bool
    decided: bool
    min_agreement: float
    failed_sets: list[str]
    """Sets whose agreement's lower bound is below the floor."""
    undecided: str | None = None
    """Why the gate cannot decide (a set with no interval); null when it decides."""
    hint: str | None = None


class QualifySummary(Part):
    """summary.json of `judge qualify`."""

    command: Literal["qualify"] = "qualify"
    rubric: str
    rubric_version: int | str
    rubric_hash: str
    models: list[str]
    judge_version: str
    n_cases: int
    n_ok: int
    n_failed: int
    usage: Usage
    min_agreement: float | None = None
    sets: list[SetQualification]
    failures: list[FailedCase] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    gate: QualifyGate | None = None
    incomplete: str | None = None


@dataclass(frozen=True)
class SetLabels:
    """What the summary needs of one judge set: its name, labels (ids `SET/ID`), case
    count and file.
    """

    name: str
    labels: list[Label]
    n_cases: int
    file: str
    sha256: str
    bundled: bool


def wilson_share(flags: Sequence[bool]) -> tuple[float | None, Interval | None]:
    """A share of true flags and its Wilson interval (None, None without flags)."""
    if not flags:
        return None, None
    return sum(flags) / len(flags), wilson_interval(sum(flags), len(flags))


def longer_won(results: Sequence[CaseResult]) -> list[bool]:
    """For each decided case whose two answers differ in length: did the longer win?"""
    flags = []
    for r in results:
        old, new = r.lengths.get("old", 0), r.lengths.get("new", 0)
        if r.winner in (Winner.OLD, Winner.NEW) and old != new:
            flags.append((new > old) == (r.winner is Winner.NEW))
    return flags


def qualify_set(
    judged: SetLabels,
    results: list[CaseResult],
    space: LabelSpace,
    *,
    seed: int,
    floor: float | None,
) -> SetQualification:
    """One set's numbers from its cases' results (ids `SET/ID`)."""
    by_id = {r.id: r for r in results}
    pairs = pair_up(by_id, judged.labels, space.kind)
    measured = agreement(pairs, space, seed=seed)
    agreement_ci = measured.get("accuracy_ci")
    fields: dict[str, object] = {
        "name": judged.name,
        "n": len(pairs.human),
        "n_cases": judged.n_cases,
        "n_failed": sum(r.status is CaseStatus.FAILED for r in results),
        "agreement": measured.get("accuracy"),
        "agreement_ci": agreement_ci,
        "kappa": measured.get("cohen_kappa"),
        "kappa_ci": measured.get("cohen_kappa_ci"),
        "position_consistency": None,
        "file": judged.file,
        "sha256": judged.sha256,
        "bundled": judged.bundled,
    }
    if space.kind is RubricKind.PAIRWISE:
        ok = [r for r in results if r.status is CaseStatus.OK]
        share, ci = wilson_share(order_agreements(ok))
        fields |= {"position_consistency": share, "position_consistency_ci": ci}
        share, ci = wilson_share(longer_won(ok))
        fields |= {"longer_wins_rate": share, "longer_wins_rate_ci": ci}
    if floor is not None:
        low = agreement_ci[0] if agreement_ci else None
        fields["passed"] = None if low is None else low >= floor
    return SetQualification.model_validate(fields)


def qualify_gate(sets: list[SetQualification], floor: float) -> QualifyGate:
    """Every set's agreement lower bound against the floor: failed when one is below it,
    undecided when a set has no interval (no graded case of it).
    """
    failed = [s.name for s in sets if s.passed is False]
    unknown = [s.name for s in sets if s.passed is None]
    if unknown and not failed:
        return QualifyGate(
            passed=False,
            decided=False,
            min_agreement=floor,
            failed_sets=[],
            undecided=f"no agreement interval for {', '.join(unknown)} (no graded case)",
            hint="check the set's rows and the judge's failures, then run again",
        )
    return QualifyGate(passed=not failed, decided=True, min_agreement=floor, failed_sets=failed)


def summarize_qualify(
    results: list[CaseResult],
    sets: list[SetLabels],
    space: LabelSpace,
    *,
    rubric: Rubric,
    models: list[str],
    judge_version: str,
    seed: int,
    floor: float | None,
) -> QualifySummary:
    """Every qualify number; the gate is the spine's to set (`qualify_gate`)."""
    grouped: dict[str, list[CaseResult]] = {s.name: [] for s in sets}
    for r in results:
        name = r.id.split("/", 1)[0]
        if name in grouped:
            grouped[name].append(r)
    facts = run_facts(results, rubric=rubric, models=models)
    per_set = [qualify_set(s, grouped[s.name], space, seed=seed, floor=floor) for s in sets]
    return QualifySummary(
        rubric=facts["rubric"],
        rubric_version=facts["rubric_version"],
        rubric_hash=facts["rubric_hash"],
        models=models,
        judge_version=judge_version,
        n_cases=facts["n_cases"],
        n_ok=facts["n_ok"],
        n_failed=facts["n_failed"],
        usage=facts["usage"],
        min_agreement=floor,
        sets=per_set,
        failures=facts["failures"],
    )
