"""Agreement read as classification: the judge's label is the prediction, the human's the truth.

A ratio that is 0/0 — precision of a class the judge never predicted, recall of a class
no human used — is ``None`` (shown as "n/a"), not 0. scikit-learn's ``zero_division=0``
default reports such a class as a 0.0 that looks measured, and pulls a macro average down
for a class that was simply absent; ``None`` keeps "no evidence" apart from "always wrong".
"""

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judgecli.stats.agreement import confusion_matrix, percent_agreement
from judgecli.stats.intervals import FloatArray, Values

Outcomes = Sequence[bool] | npt.NDArray[np.bool_]

# Rounding allowance of accuracy_within: 1.1 − 0.9 is 0.20000000000000007 in floats.
RELATIVE_SLACK = 1e-9


@dataclass(frozen=True)
class ClassReport:
    """Precision, recall and F1 of the judge for one label."""

    label: Hashable
    """The label, as given in ``labels``."""
    precision: float | None
    """TP / (TP + FP): of the items the judge gave this label, the share humans did too;
    ``None`` when the judge never gave it."""
    recall: float | None
    """TP / (TP + FN): of the items humans gave this label, the share the judge found;
    ``None`` when humans never gave it (support 0)."""
    f1: float | None
    """2·TP / (2·TP + FP + FN), the harmonic mean of precision and recall; ``None`` only
    when neither humans nor the judge used the label."""
    support: int
    """Number of items humans gave this label (TP + FN)."""


def per_class_report(
    truth: Sequence[Hashable], pred: Sequence[Hashable], *, labels: Sequence[Hashable]
) -> list[ClassReport]:
    """Precision, recall, F1 and support of every label, in ``labels`` order.

    F1 is written 2·TP / (2·TP + FP + FN), equal to 2PR / (P + R) whenever both are
    defined, and also defined (as 0) when only one of them is: a label humans used but
    the judge never predicted (or the reverse) is a class the judge fails entirely.
    Reference: C. J. van Rijsbergen (1979), "Information Retrieval", ch. 7. Where every
    ratio is defined this matches ``sklearn.metrics.precision_recall_fscore_support(
    truth, pred, labels=labels)``; elsewhere scikit-learn substitutes ``zero_division``.

    Args:
        truth: Human labels.
        pred: Judge labels, aligned with ``truth``.
        labels: Every label on the scale, in report order; unused labels get a report too.

    Raises:
        ValueError: If the inputs differ in length, or hold a label not in ``labels``.
    """
    matrix = np.asarray(confusion_matrix(truth, pred, labels), dtype=np.int64).reshape(
        len(labels), len(labels)
    )
    true_positive = np.diag(matrix)
    support = matrix.sum(axis=1)  # rows are truth
    predicted = matrix.sum(axis=0)
    return [
        ClassReport(
            label=label,
            precision=_ratio(int(true_positive[k]), int(predicted[k])),
            recall=_ratio(int(true_positive[k]), int(support[k])),
            f1=_ratio(2 * int(true_positive[k]), int(support[k] + predicted[k])),
            support=int(support[k]),
        )
        for k, label in enumerate(labels)
    ]


def macro_f1(reports: Sequence[ClassReport]) -> float | None:
    """Unweighted mean F1 over the labels that occur: in the human labels or the judge's.

    A label with support 0 that the judge never predicted has ``f1 = None`` and is left
    out; a label present on only one side has F1 = 0 and counts. Matches
    ``sklearn.metrics.f1_score(truth, pred, labels=labels, average="macro",
    zero_division=numpy.nan)`` (which leaves nan classes out of the average), and its
    ``zero_division=0`` default whenever every label occurs. Reference: Y. Yang (1999),
    "An evaluation of statistical approaches to text categorization", Information
    Retrieval 1 (macro-averaging).

    Returns:
        The mean, or ``None`` when no label occurs (no items).
    """
    scores = [report.f1 for report in reports if report.f1 is not None]
    return sum(scores) / len(scores) if scores else None


def accuracy(truth: Sequence[Hashable], pred: Sequence[Hashable]) -> float | None:
    """Share of items on which the judge gave the human's label (exact agreement).

    Same as ``agreement.percent_agreement``. ``None`` for no items.

    Raises:
        ValueError: If the inputs differ in length.
    """
    return percent_agreement(truth, pred)


def accuracy_within(truth: Values, pred: Values, *, tolerance: float = 1.0) -> float | None:
    """Share of items whose judge score is within ``tolerance`` of the human score.

    Counts |t − p| ≤ tolerance ("adjacent agreement" on a rating scale with the default
    1.0). A difference equal to the tolerance up to floating-point rounding (relative
    1e-9) counts as within, so 1.1 against 0.9 is within 0.2.

    Returns:
        The share, or ``None`` for no items.

    Raises:
        ValueError: If the inputs differ in length, hold nan, or ``tolerance`` < 0.
    """
    within = within_tolerance(truth, pred, tolerance=tolerance)
    return int(np.count_nonzero(within)) / within.size if within.size else None


def within_tolerance(
    truth: Values, pred: Values, *, tolerance: float = 1.0
) -> npt.NDArray[np.bool_]:
    """Per item, whether the judge score is within ``tolerance`` of the human score, as
    ``accuracy_within`` counts it.

    Raises:
        ValueError: As ``accuracy_within``.
    """
    if not tolerance >= 0.0:
        raise ValueError(f"tolerance must be at least 0, got {tolerance}")
    t, p = np.asarray(truth, dtype=np.float64).ravel(), np.asarray(pred, dtype=np.float64).ravel()
    if t.size != p.size:
        raise ValueError(f"truth and pred differ in length: {t.size} and {p.size}")
    if np.isnan(t).any() or np.isnan(p).any():
        raise ValueError("truth and pred must not hold nan (leave unscored items out)")
    difference = np.abs(t - p)
    # d ≤ tolerance, or d above it by at most 1e-9·d (math.isclose's relative rule).
    return np.asarray(
        (difference <= tolerance) | (difference - tolerance <= RELATIVE_SLACK * difference)
    )


def accuracy_resampled(
    hits: Outcomes, counts: FloatArray, *, kept: Outcomes | None = None
) -> FloatArray:
    """``accuracy`` (or ``accuracy_within``) of every bootstrap resample at once.

    Args:
        hits: Whether each row counts as agreement (labels equal, or within tolerance).
        counts: How many times each row is in each resample, shape (resamples, rows)
            (see ``stats.resampling``).
        kept: The rows to count at all (e.g. neither label a tie); default every row.

    Returns:
        Per resample, the count-weighted share of kept rows that hit; nan for a resample
        with no kept row.
    """
    weights = counts if kept is None else counts * np.asarray(kept, dtype=np.float64)
    total = weights.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = weights @ np.asarray(hits, dtype=np.float64) / total
    return np.asarray(np.where(total > 0, share, np.nan), dtype=np.float64)


def _ratio(numerator: int, denominator: int) -> float | None:
    return None if denominator == 0 else numerator / denominator
