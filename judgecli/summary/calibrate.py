"""Judge verdicts + human labels → the numbers of a `calibrate` run.

Every (case, human label) pair counts once, so a case with three labels weighs three times
(the MT-Bench paper's definition). Intervals resample cases, not pairs: the labels of one
case share its verdict and are not independent. Pure: results and labels in, numbers out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import combinations
from typing import Any

import numpy as np

from judgecli.debias import to_winner
from judgecli.labels import Label, LabelSpace, Value
from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.rubric import RubricKind
from judgecli.stats.agreement import (
    cohen_kappa,
    cohen_kappa_resampled,
    confusion_matrix,
    kendall_tau_b,
    kendall_tau_b_resampled,
    krippendorff_alpha,
    pearson,
    pearson_resampled,
    spearman,
    spearman_resampled,
)
from judgecli.stats.calibration import brier_score, expected_calibration_error, reliability_table
from judgecli.stats.classification import (
    accuracy,
    accuracy_resampled,
    accuracy_within,
    macro_f1,
    per_class_report,
    within_tolerance,
)
from judgecli.stats.resampling import BatchStatistic, cluster_bootstrap_intervals, clusters_of

PAIRWISE_LABELS: list[Hashable] = [Winner.OLD.value, Winner.NEW.value, Winner.TIE.value]


@dataclass(frozen=True)
class Pairs:
    """Aligned rows: one per (case, human label) with a judge verdict."""

    case_ids: list[str]
    human: list[Value]
    judge: list[Value]


def case_verdict(result: CaseResult, kind: RubricKind) -> Value | None:
    """The case's aggregated verdict as a label value; a position-inconsistent pairwise
    verdict the drop policy left empty counts as a tie (as in the MT-Bench paper).
    """
    if result.status is not CaseStatus.OK:
        return None
    if kind is RubricKind.POINTWISE:
        return result.score
    if kind is RubricKind.BINARY:
        return result.choice
    if result.winner is None and result.consistent is False:
        return Winner.TIE.value
    return None if result.winner is None else result.winner.value


def pair_up(results: dict[str, CaseResult], labels: list[Label], kind: RubricKind) -> Pairs:
    """Join labels to verdicts on id; labels without a verdict are left out (and counted)."""
    ids, human, judge = [], [], []
    for label in labels:
        result = results.get(label.id)
        verdict = None if result is None else case_verdict(result, kind)
        if verdict is not None:
            ids.append(label.id)
            human.append(label.value)
            judge.append(verdict)
    return Pairs(ids, human, judge)


def label_set(space: LabelSpace, values: Sequence[Value]) -> tuple[list[Hashable] | None, bool]:
    """The categories for κ and confusion, and whether they are ordered. None when scores
    are not all on whole points (means of raters, a panel's mean): then only correlations.
    """
    if space.kind is RubricKind.PAIRWISE:
        return PAIRWISE_LABELS, False
    if space.kind is RubricKind.BINARY:
        return list(space.choices or sorted({str(v) for v in values})), False
    numbers = [float(v) for v in values]
    if not numbers or not all(x.is_integer() for x in numbers):
        return None, True
    lo, hi = space.scale if space.scale else (min(numbers), max(numbers))
    return [float(x) for x in range(int(lo), int(hi) + 1)], True


Measure = tuple[float | None, BatchStatistic]
"""An agreement measure's value over the rows, and its form for bootstrap resamples."""


def measures(
    pairs: Pairs, space: LabelSpace, labels: list[Hashable] | None, ordinal: bool
) -> dict[str, Measure]:
    """Every agreement measure that applies to the rows' kind of label."""
    human, judge = pairs.human, pairs.judge
    hits = np.array([h == j for h, j in zip(human, judge, strict=True)], dtype=np.bool_)
    found: dict[str, Measure] = {}
    if labels is not None:
        k = len(labels)
        index = {label: i for i, label in enumerate(labels)}
        hc = np.array([index[h] for h in human], dtype=np.intp)
        jc = np.array([index[j] for j in judge], dtype=np.intp)
        found["accuracy"] = (accuracy(human, judge), partial(accuracy_resampled, hits))
        found["cohen_kappa"] = (
            cohen_kappa(human, judge, labels=labels),
            lambda counts: cohen_kappa_resampled(hc, jc, counts, k=k),
        )
        if ordinal:
            found["weighted_kappa"] = (
                cohen_kappa(human, judge, labels=labels, weights="quadratic"),
                lambda counts: cohen_kappa_resampled(hc, jc, counts, k=k, weights="quadratic"),
            )
    if space.kind is RubricKind.POINTWISE:
        x, y = np.asarray(human, dtype=np.float64), np.asarray(judge, dtype=np.float64)
        found["within_one"] = (accuracy_within(x, y),
                               partial(accuracy_resampled, within_tolerance(x, y)))  # fmt: skip
        found["spearman"] = (spearman(x, y), partial(spearman_resampled, x, y))
        found["kendall"] = (kendall_tau_b(x, y), partial(kendall_tau_b_resampled, x, y))
        found["pearson"] = (pearson(x, y), partial(pearson_resampled, x, y))
    if space.kind is RubricKind.PAIRWISE:
        tie = Winner.TIE.value
        untied = np.array([tie not in pair for pair in zip(human, judge, strict=True)], dtype=bool)
        found["agreement_with_ties"] = (accuracy(human, judge), partial(accuracy_resampled, hits))
        found["agreement_without_ties"] = (
            without_ties(human, judge),
            partial(accuracy_resampled, hits, kept=untied),
        )
    return found


def agreement(
    pairs: Pairs, space: LabelSpace, *, seed: int, intervals: bool = True
) -> dict[str, Any]:
    """Agreement of judge with human over the rows: accuracy, κ, correlations, α, ..."""
    labels, ordinal = label_set(space, [*pairs.human, *pairs.judge])
    out: dict[str, Any] = {
        "n_labels": len(pairs.human),
        "n_labelled_cases": len(set(pairs.case_ids)),
    }
    found = measures(pairs, space, labels, ordinal)
    # One pass over the resamples for every measure: they all see the same resamples, as
    # when each drew its own from the same seed.
    batches = {name: batch for name, (_, batch) in found.items()}
    clusters = clusters_of(pairs.case_ids)
    cis = cluster_bootstrap_intervals(batches, clusters, seed=seed) if intervals else {}
    for name, (value, _) in found.items():
        out[name] = value
        if intervals:
            out[f"{name}_ci"] = cis[name]
    out["krippendorff_alpha"] = alpha(pairs, space, labels, ordinal)
    if labels is not None:
        reports = per_class_report(pairs.human, pairs.judge, labels=labels)
        out["per_class"] = {fmt_label(r.label): {"precision": r.precision, "recall": r.recall,
                            "f1": r.f1, "support": r.support} for r in reports}  # fmt: skip
        out["macro_f1"] = macro_f1(reports)
        out["confusion"] = {
            "labels": [fmt_label(x) for x in labels], "rows": "human", "columns": "judge",
            "matrix": confusion_matrix(pairs.human, pairs.judge, labels),
        }  # fmt: skip
    return out


def without_ties(human: list[Value], judge: list[Value]) -> float | None:
    """Pairwise agreement over rows where neither human nor judge said tie."""
    kept = [(h, j) for h, j in zip(human, judge, strict=True) if Winner.TIE.value not in (h, j)]
    return accuracy([h for h, _ in kept], [j for _, j in kept])


def alpha(
    pairs: Pairs, space: LabelSpace, labels: list[Hashable] | None, ordinal: bool
) -> float | None:
    """Krippendorff's α with judge and human as the two coders of each (case, label) unit:
    ordinal for scales (interval when scores are not whole points), nominal for choices.
    """
    if labels is None and space.kind is RubricKind.POINTWISE:
        rows = [[float(x) for x in pairs.judge], [float(x) for x in pairs.human]]
        return krippendorff_alpha(rows, level="interval")
    codes = {label: float(i) for i, label in enumerate(labels or [])}
    rows = [[codes[x] for x in pairs.judge], [codes[x] for x in pairs.human]]
    return krippendorff_alpha(rows, level="ordinal" if ordinal else "nominal")


def fmt_label(value: Hashable) -> str:
    """A label as a JSON key: 4.0 → "4"."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def human_human(labels: list[Label], space: LabelSpace, seed: int) -> dict[str, Any] | None:
    """The same measures between annotators (every pair of annotators, on shared cases)."""
    by_annotator: dict[str, dict[str, Value]] = {}
    for label in labels:
        if label.annotator is not None:
            by_annotator.setdefault(label.annotator, {})[label.id] = label.value
    if len(by_annotator) < 2:
        return None
    ids, first, second = [], [], []
    for a, b in combinations(sorted(by_annotator), 2):
        for case_id in sorted(set(by_annotator[a]) & set(by_annotator[b])):
            ids.append(case_id)
            first.append(by_annotator[a][case_id])
            second.append(by_annotator[b][case_id])
    if not ids:
        return None
    out = agreement(Pairs(ids, first, second), space, seed=seed)
    out["annotators"] = sorted(by_annotator)
    return out


def majority_labels(labels: list[Label]) -> list[Label]:
    """One label per case: the most common value (no label when the top values tie)."""
    grouped: dict[str, list[Label]] = {}
    for label in labels:
        grouped.setdefault(label.id, []).append(label)
    chosen = []
    for case_labels in grouped.values():
        ranked = Counter(x.value for x in case_labels).most_common()
        if len(ranked) == 1 or ranked[0][1] > ranked[1][1]:
            chosen.append(Label(case_labels[0].id, ranked[0][0], "majority", case_labels[0].line))
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
        "reliability": [vars(b) for b in reliability_table(confidence, correct)],
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
    results: list[CaseResult], labels: list[Label], space: LabelSpace, *, seed: int = 0
) -> dict[str, Any]:
    """Every calibrate number, as summary.json fields."""
    by_id = {r.id: r for r in results}
    pairs = pair_up(by_id, labels, space.kind)
    out = agreement(pairs, space, seed=seed)
    out["n_labels_total"] = len(labels)
    out["n_unmatched_labels"] = len(labels) - len(pairs.human)
    out |= calibration(by_id, labels, space.kind)
    out["human_human"] = human_human(labels, space, seed)
    if out["human_human"] is not None:
        majority = pair_up(by_id, majority_labels(labels), space.kind)
        out["judge_vs_majority"] = agreement(majority, space, seed=seed, intervals=False)
    if space.kind is RubricKind.PAIRWISE:
        out["by_order"] = per_order(by_id, labels)
    return out


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
        confidences = [j.verdict.confidence for j in result.judgements
                       if j.verdict is not None and j.verdict.confidence is not None]  # fmt: skip
        gap = abs(float(verdict) - float(label.value)) if kind is RubricKind.POINTWISE else None
        reasoning = next((j.verdict.reasoning for j in result.judgements if j.verdict), None)
        rows.append({
            "id": label.id, "annotator": label.annotator, "human": label.value, "judge": verdict,
            "gap": gap, "confidence": max(confidences) if confidences else None,
            "reasoning": reasoning, "models": sorted({j.model for j in result.judgements}),
        })  # fmt: skip
    rows.sort(key=lambda r: (-(r["gap"] or 0.0), -(r["confidence"] or 0.0), r["id"]))
    return rows
