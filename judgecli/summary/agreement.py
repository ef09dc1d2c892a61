"""Agreement over (case, label) pairs: judge against human, or one annotator against another.
Every measure that fits the labels' kind (accuracy, Cohen's κ and its quadratic-weighted form,
within one point, Spearman, Kendall, Pearson, agreement with and without ties, Krippendorff's
α, per-class precision/recall/F1, the confusion matrix), with their intervals by the rule of
`stats.interval_rule`: the proportions (accuracy, within one, agreement) Wilson's over cases
when each case has one label, else a cluster bootstrap (Wilson's when it is degenerate); κ
and the correlations a cluster bootstrap, and none (with the reason in `no_interval`) when
too few cases inform them.

Every (case, human label) pair counts once, so a case with three labels weighs three times
(the MT-Bench paper's definition). Intervals resample cases, not pairs: the labels of one
case share its verdict and are not independent. Pure: results and labels in, numbers out.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.rubric import RubricKind
from judgecli.stats.agreement import (
    cohen_kappa,
    cohen_kappa_resampled,
    confusion_matrix,
    kendall_tau_b,
    kendall_tau_b_resampled,
    pearson,
    pearson_resampled,
    spearman,
    spearman_resampled,
)
from judgecli.stats.classification import (
    accuracy,
    accuracy_resampled,
    accuracy_within,
    macro_f1,
    per_class_report,
    within_tolerance,
)
from judgecli.stats.interval_rule import (
    NoIntervalReasons,
    bootstrap_bounded,
    proportion_interval,
    too_few_informative,
)
from judgecli.stats.intervals import Interval
from judgecli.stats.krippendorff import krippendorff_alpha
from judgecli.stats.resampling import BatchStatistic, cluster_bootstrap, clusters_of
from judgecli.summary.parts import Part, Record

if TYPE_CHECKING:
    # As in summary.calibrate: annotations only, labels are read where they are used.
    from judgecli.inputs.labels import Label, LabelSpace, Value

PAIRWISE_LABELS: list[Hashable] = [Winner.OLD.value, Winner.NEW.value, Winner.TIE.value]


class ClassScores(Record):
    """One label read as a class: the judge's label the prediction, the human's the truth."""

    precision: float | None
    """None when the judge never gave the label (0/0: no evidence, not 0)."""
    recall: float | None
    f1: float | None
    support: int


class Confusion(Part):
    """Counts of (human label, judge label) pairs."""

    labels: list[str]
    rows: str
    """Whose labels the rows are: "human"."""
    columns: str
    """Whose labels the columns are: "judge"."""
    matrix: list[list[int]]


class AgreementSummary(Record):
    """How two sides agree, measure by measure: the `human_human` and `judge_vs_majority` of a
    calibrate summary. A measure that does not fit the labels' kind is absent; one without a
    value is null. `agreement` computes these fields, in this order.
    """

    n_labels: int
    """(case, label) pairs compared."""
    n_labelled_cases: int
    accuracy: float | None = None
    accuracy_ci: Interval | None = None
    cohen_kappa: float | None = None
    cohen_kappa_ci: Interval | None = None
    weighted_kappa: float | None = None
    """Ordinal scales: quadratic-weighted κ."""
    weighted_kappa_ci: Interval | None = None
    within_one: float | None = None
    """Scores: the share of pairs at most one point apart."""
    within_one_ci: Interval | None = None
    spearman: float | None = None
    spearman_ci: Interval | None = None
    kendall: float | None = None
    kendall_ci: Interval | None = None
    pearson: float | None = None
    pearson_ci: Interval | None = None
    agreement_with_ties: float | None = None
    """Pairwise: the share of pairs with the same winner, a tie counting as a label."""
    agreement_with_ties_ci: Interval | None = None
    agreement_without_ties: float | None = None
    """Pairwise: the same over the pairs where neither side said tie."""
    agreement_without_ties_ci: Interval | None = None
    krippendorff_alpha: float | None = None
    per_class: dict[str, ClassScores] | None = None
    macro_f1: float | None = None
    confusion: Confusion | None = None
    annotators: list[str] | None = None
    """human_human: the annotators compared (every pair of them, on shared cases)."""
    no_interval: dict[str, str] | None = None
    """Why an interval here is null while its measure has a value (as the summary's)."""


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


BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Measure:
    """An agreement measure's value over the rows, and its form for bootstrap resamples."""

    value: float | None
    batch: BatchStatistic
    share_of: BoolArray | None = None
    """A proportion: the rows it is a share of (its interval is a proportion's); None for
    κ and the correlations."""


def measures(
    pairs: Pairs, space: LabelSpace, labels: list[Hashable] | None, ordinal: bool
) -> dict[str, Measure]:
    """Every agreement measure that applies to the rows' kind of label."""
    human, judge = pairs.human, pairs.judge
    hits = np.array([h == j for h, j in zip(human, judge, strict=True)], dtype=np.bool_)
    every = np.ones(hits.size, dtype=np.bool_)
    found: dict[str, Measure] = {}
    if labels is not None:
        k = len(labels)
        index = {label: i for i, label in enumerate(labels)}
        hc = np.array([index[h] for h in human], dtype=np.intp)
        jc = np.array([index[j] for j in judge], dtype=np.intp)
        found["accuracy"] = Measure(
            accuracy(human, judge), partial(accuracy_resampled, hits), share_of=every
        )
        found["cohen_kappa"] = Measure(
            cohen_kappa(human, judge, labels=labels),
            lambda counts: cohen_kappa_resampled(hc, jc, counts, k=k),
        )
        if ordinal:
            found["weighted_kappa"] = Measure(
                cohen_kappa(human, judge, labels=labels, weights="quadratic"),
                lambda counts: cohen_kappa_resampled(hc, jc, counts, k=k, weights="quadratic"),
            )
    if space.kind is RubricKind.POINTWISE:
        x, y = np.asarray(human, dtype=np.float64), np.asarray(judge, dtype=np.float64)
        found["within_one"] = Measure(
            accuracy_within(x, y),
            partial(accuracy_resampled, within_tolerance(x, y)),
            share_of=every,
        )
        found["spearman"] = Measure(spearman(x, y), partial(spearman_resampled, x, y))
        found["kendall"] = Measure(kendall_tau_b(x, y), partial(kendall_tau_b_resampled, x, y))
        found["pearson"] = Measure(pearson(x, y), partial(pearson_resampled, x, y))
    if space.kind is RubricKind.PAIRWISE:
        tie = Winner.TIE.value
        untied = np.array([tie not in pair for pair in zip(human, judge, strict=True)], dtype=bool)
        found["agreement_with_ties"] = Measure(
            accuracy(human, judge), partial(accuracy_resampled, hits), share_of=every
        )
        found["agreement_without_ties"] = Measure(
            without_ties(human, judge),
            partial(accuracy_resampled, hits, kept=untied),
            share_of=untied,
        )
    return found


SIDES = ("judge", "human")
"""What the two sides of `agreement` are, as its reasons name them."""


def agreement(
    pairs: Pairs,
    space: LabelSpace,
    *,
    seed: int,
    intervals: bool = True,
    sides: tuple[str, str] = SIDES,
) -> dict[str, Any]:
    """Agreement of judge with human (or the two `sides` named) over the rows: accuracy, κ,
    correlations, α, ... as AgreementSummary's fields (in its order), keyed by name, with
    `no_interval` saying why a measure with a value has no interval.

    A proportion's interval is Wilson's over the cases when each case has one row (the rows
    are then independent trials, and Wilson is honest at small n where a percentile
    bootstrap is not: 9 of 10 is [59.6%, 98.2%], the bootstrap's [70%, 100%]); with several
    rows to a case, which are not independent, a cluster bootstrap, Wilson's over the cases
    when it is degenerate. κ and the correlations: a cluster bootstrap, none with too few
    informative cases (``interval_rule.too_few_informative``) or a degenerate bootstrap.
    """
    labels, ordinal = label_set(space, [*pairs.human, *pairs.judge])
    out: dict[str, Any] = {
        "n_labels": len(pairs.human),
        "n_labelled_cases": len(set(pairs.case_ids)),
    }
    found = measures(pairs, space, labels, ordinal)
    clusters = clusters_of(pairs.case_ids)
    independent = len(clusters) == len(pairs.case_ids)
    # One pass over the resamples for every measure: they all see the same resamples, as
    # when each drew its own from the same seed.
    batches = {name: m.batch for name, m in found.items() if m.share_of is None or not independent}
    boots = cluster_bootstrap(batches, clusters, seed=seed) if intervals else {}
    what = "score" if space.kind is RubricKind.POINTWISE else "label"
    values = dict(zip(sides, (pairs.judge, pairs.human), strict=True))
    too_few = too_few_informative(values, pairs.case_ids, what=what)
    reasons = NoIntervalReasons()
    for name, m in found.items():
        out[name] = m.value
        if not intervals:
            continue
        if m.share_of is not None:
            boot = boots[name].ci if name in boots else None
            out[f"{name}_ci"] = share_interval(m, pairs.case_ids, boot)
        else:
            bounded = bootstrap_bounded(boots[name], too_few=too_few)
            out[f"{name}_ci"] = reasons.ci(name, m.value, bounded)
    out["krippendorff_alpha"] = alpha(pairs, space, labels, ordinal)
    if labels is not None:
        reports = per_class_report(pairs.human, pairs.judge, labels=labels)
        out["per_class"] = {
            fmt_label(r.label): ClassScores(
                precision=r.precision, recall=r.recall, f1=r.f1, support=r.support
            )
            for r in reports
        }
        out["macro_f1"] = macro_f1(reports)
        out["confusion"] = Confusion(
            labels=[fmt_label(x) for x in labels],
            rows="human",
            columns="judge",
            matrix=confusion_matrix(pairs.human, pairs.judge, labels),
        )
    if intervals:
        out["no_interval"] = reasons.mapping()
    return out


def share_interval(m: Measure, case_ids: list[str], bootstrap: Interval | None) -> Interval:
    """A proportion's interval: ``bootstrap`` (several rows to a case) unless degenerate,
    else Wilson's with the cases it is over as the trials.
    """
    assert m.share_of is not None
    cases = len({case for case, kept in zip(case_ids, m.share_of, strict=True) if kept})
    successes = min(max((m.value or 0.0) * cases, 0.0), cases)
    return proportion_interval(successes, cases, bootstrap=bootstrap)


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


ANNOTATORS = ("first annotator", "second annotator")
"""The sides of human_human, as its reasons name them (each pair of annotators in turn)."""


def human_human(labels: list[Label], space: LabelSpace, seed: int) -> AgreementSummary | None:
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
    out = agreement(Pairs(ids, first, second), space, seed=seed, sides=ANNOTATORS)
    return AgreementSummary.model_validate(out | {"annotators": sorted(by_annotator)})
