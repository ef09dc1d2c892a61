"""Judge verdicts + human labels → the CalibrateSummary of a `calibrate` run: agreement
(`summary.agreement`) of judge and humans, of the humans among themselves and of the judge
with their majority, calibration of the judge's stated confidence, and per-order accuracy.
Also each case's labels beside its verdict, and the disagreements worst first. Pure.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from judgecli.grading.debias import to_winner
from judgecli.result import CaseResult, CaseStatus
from judgecli.rubric import RubricKind
from judgecli.stats.calibration import (
    ReliabilityBin,
    brier_score,
    expected_calibration_error,
    reliability_table,
)
from judgecli.stats.intervals import Interval
from judgecli.summary.agreement import (
    AgreementSummary,
    ClassScores,
    Confusion,
    agreement,
    case_verdict,
    human_human,
    pair_up,
)
from judgecli.summary.facts import (
    CategorySummary,
    Command,
    CriterionSummary,
    SummaryHead,
    SummaryTail,
)
from judgecli.summary.head import run_facts

if TYPE_CHECKING:
    # Labels are read by the calibrate command (and --labels), which imports labels.py; the
    # report of every run imports this module for CalibrateSummary.
    from judgecli.inputs.labels import Label, LabelSpace, Value


class CalibrateNumbers(SummaryHead):
    """Judge against human, the headline measures: before the tail."""

    criteria: dict[str, CriterionSummary] = Field(default_factory=dict)
    """Always empty: every summary has written the key since there was one model for all."""
    by_category: dict[str, CategorySummary] = Field(default_factory=dict)
    """Always empty, as `criteria`."""
    n_labels: int
    """(case, human label) pairs with a judge verdict; every pair counts."""
    accuracy: float | None = None
    accuracy_ci: Interval | None = None
    cohen_kappa: float | None = None
    cohen_kappa_ci: Interval | None = None
    weighted_kappa: float | None = None
    """Ordinal scales: quadratic-weighted κ."""
    weighted_kappa_ci: Interval | None = None


class CalibrateSummary(SummaryTail, CalibrateNumbers):
    """summary.json of `judge calibrate`. The judge–human measures are AgreementSummary's,
    the first few before the tail (CalibrateNumbers), the rest after it.
    """

    command: Literal[Command.CALIBRATE] = Command.CALIBRATE
    n_labelled_cases: int
    within_one: float | None = None
    within_one_ci: Interval | None = None
    spearman: float | None = None
    spearman_ci: Interval | None = None
    kendall: float | None = None
    kendall_ci: Interval | None = None
    pearson: float | None = None
    pearson_ci: Interval | None = None
    agreement_with_ties: float | None = None
    agreement_with_ties_ci: Interval | None = None
    agreement_without_ties: float | None = None
    agreement_without_ties_ci: Interval | None = None
    krippendorff_alpha: float | None = None
    per_class: dict[str, ClassScores] | None = None
    macro_f1: float | None = None
    confusion: Confusion | None = None
    n_labels_total: int
    """Every label in the labels file."""
    n_unmatched_labels: int
    """Labels without a judge verdict (no such case, or it failed): left out."""
    ece: float | None = None
    """Expected calibration error of the stated confidence, equal-width bins."""
    ece_equal_mass: float | None = None
    brier: float | None = None
    reliability: list[ReliabilityBin] | None = None
    n_confidence: int | None = None
    """Judgements that stated a confidence (once per human label of their case)."""
    human_human: AgreementSummary | None = None
    """The same measures between annotators, when there are several."""
    judge_vs_majority: AgreementSummary | None = None
    """The judge against the annotators' majority label (no intervals)."""
    by_order: dict[str, dict[str, float | None]] | None = None
    """Pairwise: each judge's accuracy in each order alone, and pooled ("mean")."""


def majority_labels(labels: list[Label]) -> list[Label]:
    """One label per case: the most common value (no label when the top values tie)."""
    grouped: dict[str, list[Label]] = {}
    for label in labels:
        grouped.setdefault(label.id, []).append(label)
    chosen = []
    for case_labels in grouped.values():
        ranked = Counter(x.value for x in case_labels).most_common()
        if len(ranked) == 1 or ranked[0][1] > ranked[1][1]:
            chosen.append(replace(case_labels[0], value=ranked[0][0], annotator="majority"))
    return chosen


def confidence_rows(
    results: dict[str, CaseResult], labels: list[Label], kind: RubricKind
) -> tuple[list[float], list[bool]]:
    """(stated confidence, was that judgement right) for every judgement with a confidence,
    once per human label of its case.
    """
    confidence, correct = [], []
    for label in labels:
        result = results.get(label.id)
        if result is None or result.status is not CaseStatus.OK:
            continue
        for j in result.judgements:
            v = j.verdict
            if v is None or v.confidence is None:
                continue
            if kind is RubricKind.PAIRWISE:
                if v.winner is None or j.order is None:
                    continue
                said: Value | None = to_winner(v.winner, j.order).value
            else:
                said = v.score if kind is RubricKind.POINTWISE else v.choice
            confidence.append(v.confidence)
            correct.append(said == label.value)
    return confidence, correct


def calibration(
    results: dict[str, CaseResult], labels: list[Label], kind: RubricKind
) -> dict[str, Any]:
    """ECE (equal-width and equal-mass bins), Brier score and the reliability table."""
    confidence, correct = confidence_rows(results, labels, kind)
    if not confidence:
        return {}
    return {
        "ece": expected_calibration_error(confidence, correct, strategy="width"),
        "ece_equal_mass": expected_calibration_error(confidence, correct, strategy="mass"),
        "brier": brier_score(confidence, correct),
        "reliability": reliability_table(confidence, correct),
        "n_confidence": len(confidence),
    }


def per_order(
    results: dict[str, CaseResult], labels: list[Label]
) -> dict[str, dict[str, float | None]]:
    """Pairwise: each judge's accuracy in each order alone (LLMBar's per-order Acc.)."""
    table: dict[str, dict[str, list[bool]]] = {}
    for label in labels:
        result = results.get(label.id)
        if result is None or result.status is not CaseStatus.OK:
            continue
        for j in result.judgements:
            if j.verdict is None or j.verdict.winner is None or j.order is None:
                continue
            said = to_winner(j.verdict.winner, j.order).value
            table.setdefault(j.model, {}).setdefault(j.order.value, []).append(said == label.value)
    out: dict[str, dict[str, float | None]] = {}
    for model, orders in table.items():
        rates: dict[str, float | None] = {o: sum(h) / len(h) for o, h in orders.items()}
        # Pooled, so the mean is the exact fraction (both orders have the same cases).
        rates["mean"] = sum(sum(h) for h in orders.values()) / sum(len(h) for h in orders.values())
        out[model] = rates
    return out


def summarize_calibration(
    results: list[CaseResult],
    labels: list[Label],
    space: LabelSpace,
    *,
    seed: int = 0,
    rubric_name: str = "",
    rubric_version: int | str = "",
    rubric_hash: str = "",
) -> CalibrateSummary:
    """Every calibrate number. The judges are those in the results; the rubric is named by
    the caller (a results file may come without one).
    """
    by_id = {r.id: r for r in results}
    pairs = pair_up(by_id, labels, space.kind)
    models = sorted({j.model for r in results for j in r.judgements})
    fields = run_facts(results, rubric=None, models=models) | {
        "rubric": rubric_name,
        "rubric_version": rubric_version,
        "rubric_hash": rubric_hash,
    }
    fields |= agreement(pairs, space, seed=seed)
    fields["n_labels_total"] = len(labels)
    fields["n_unmatched_labels"] = len(labels) - len(pairs.human)
    fields |= calibration(by_id, labels, space.kind)
    fields["human_human"] = human_human(labels, space, seed)
    if fields["human_human"] is not None:
        majority = pair_up(by_id, majority_labels(labels), space.kind)
        fields["judge_vs_majority"] = AgreementSummary.model_validate(
            agreement(majority, space, seed=seed, intervals=False)
        )
    if space.kind is RubricKind.PAIRWISE:
        fields["by_order"] = per_order(by_id, labels)
    return CalibrateSummary.model_validate(fields)


def label_results(
    results: list[CaseResult], labels: list[Label], kind: RubricKind
) -> list[CaseResult]:
    """The results, each labelled case with `human_labels` and `agrees` set.

    `human_labels` lists the case's labels in the labels file's order. `agrees` says
    whether the judge's verdict, compared as `accuracy` compares it (the exact score, the
    choice, the winner; an inconsistent pairwise case the drop policy left empty counts as
    a tie), equals the humans' label for the case: its most common label. When several
    labels tie for most common the humans are split, and siding with any of them counts
    as agreeing. With one label per case this is exactly "not in disagreements.jsonl".
    None for a case without a verdict (failed) or without a label.
    """
    by_id: dict[str, list[Value]] = {}
    for label in labels:
        by_id.setdefault(label.id, []).append(label.value)
    out = []
    for result in results:
        values = by_id.get(result.id)
        if values is None:  # also drops those of a calibrate run the results came from
            out.append(result.model_copy(update={"human_labels": None, "agrees": None}))
            continue
        verdict = case_verdict(result, kind)
        ranked = Counter(values).most_common()
        top = {value for value, count in ranked if count == ranked[0][1]}
        agrees = None if verdict is None else verdict in top
        out.append(result.model_copy(update={"human_labels": values, "agrees": agrees}))
    return out


def disagreements(
    results: list[CaseResult], labels: list[Label], kind: RubricKind
) -> list[dict[str, Any]]:
    """Every (case, label) where judge and human differ, worst first: the largest score gap,
    then the most confident judge (a confident wrong verdict is the one to look at).
    """
    by_id = {r.id: r for r in results}
    rows: list[dict[str, Any]] = []
    for label in labels:
        result = by_id.get(label.id)
        verdict = None if result is None else case_verdict(result, kind)
        if result is None or verdict is None or verdict == label.value:
            continue
        confidences = [
            j.verdict.confidence
            for j in result.judgements
            if j.verdict is not None and j.verdict.confidence is not None
        ]
        gap = abs(float(verdict) - float(label.value)) if kind is RubricKind.POINTWISE else None
        reasoning = next((j.verdict.reasoning for j in result.judgements if j.verdict), None)
        rows.append(
            {
                "id": label.id,
                "annotator": label.annotator,
                "human": label.value,
                "judge": verdict,
                "gap": gap,
                "confidence": max(confidences) if confidences else None,
                "reasoning": reasoning,
                "models": sorted({j.model for j in result.judgements}),
            }
        )
    rows.sort(key=lambda r: (-(r["gap"] or 0.0), -(r["confidence"] or 0.0), r["id"]))
    return rows
