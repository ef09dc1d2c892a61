"""--labels with inclusion probabilities (issue 33): the labels a plan drew are weighed by
the inverse of their probability (active inference), and the summary records the design
under `corrections.design`.
"""

from __future__ import annotations

import pytest

from judgecli.deciding.corrected import HumanLabels, corrected_fields
from judgecli.errors import InputError
from judgecli.inputs.labels import Label, LabelSpace
from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.rubric import RubricKind
from judgecli.stats.active import active_mean
from judgecli.summary.facts import CorrectedEstimate, LabelDesign
from judgecli.summary.gate_records import GateMetric

SPACE = LabelSpace(kind=RubricKind.PAIRWISE)
WINNERS = ["new", "new", "old", "tie", "new", "old", "new", "new", "tie", "old"]
HUMANS = {"c0": "new", "c2": "new", "c3": "old", "c5": "old", "c8": "new"}
PROBS = {"c0": 0.5, "c2": 0.8, "c3": 0.25, "c5": 0.4, "c8": 0.6}
OUTCOME = {"new": 1.0, "tie": 0.5, "old": 0.0}


def results() -> list[CaseResult]:
    return [
        CaseResult(id=f"c{i}", status=CaseStatus.OK, winner=Winner(w), rubric_hash="h")
        for i, w in enumerate(WINNERS)
    ]


def planned(extra: list[Label] | None = None) -> HumanLabels:
    labels = [
        Label(
            id=i,
            value=v,
            annotator="ana",
            line=n,
            inclusion_probability=PROBS[i],
            strategy="uncertainty",
            budget=4,
        )
        for n, (i, v) in enumerate(HUMANS.items(), start=1)
    ]
    return HumanLabels(labels=labels + (extra or []), space=SPACE)


def test_planned_labels_are_weighed_by_their_inclusion_probability():
    fields = corrected_fields(results(), planned(), [GateMetric.WIN_RATE])
    index = {f"c{i}": i for i in range(10)}
    expected = active_mean(
        [OUTCOME[w] for w in WINNERS],
        {index[i]: (OUTCOME[v], PROBS[i]) for i, v in HUMANS.items()},
    )
    # By hand: 0.6 + ((1−1)/.5 + (1−0)/.8 + (0−.5)/.25 + (0−0)/.4 + (1−.5)/.6)/10
    assert expected.estimate == pytest.approx(0.6 + (1.25 - 2 + 0.5 / 0.6) / 10)
    assert fields["win_rate_corrected"] == pytest.approx(expected.estimate)
    low, high = fields["win_rate_corrected_ci"]
    assert low == pytest.approx(max(expected.ci[0], 0.0))
    assert high == pytest.approx(min(expected.ci[1], 1.0))
    found = fields["corrections"]["win_rate"]
    assert isinstance(found, CorrectedEstimate)
    assert (found.n_labeled, found.n_unlabeled, found.lam) == (5, 5, 1.0)


def test_the_summary_records_the_design():
    design = corrected_fields(results(), planned(), [GateMetric.WIN_RATE])["corrections"]["design"]
    assert design == LabelDesign(
        strategy="uncertainty",
        budget=4,
        weighted=True,
        n_weighted=5,
        n_unplanned=0,
        estimator=design.estimator,
    )
    assert "Zrnic" in design.estimator


def test_labels_made_outside_the_plan_are_left_out_and_counted():
    free = [Label(id="c9", value="new", annotator="bo", line=1)]
    with_free = corrected_fields(results(), planned(free), [GateMetric.WIN_RATE])
    without = corrected_fields(results(), planned(), [GateMetric.WIN_RATE])
    assert with_free["win_rate_corrected"] == without["win_rate_corrected"]
    assert with_free["corrections"]["design"].n_unplanned == 1


def test_labels_without_probabilities_keep_ppi_and_no_design():
    labels = [Label(id=i, value=v, annotator=None, line=1) for i, v in HUMANS.items()]
    fields = corrected_fields(
        results(), HumanLabels(labels=labels, space=SPACE), [GateMetric.WIN_RATE]
    )
    assert "design" not in fields["corrections"]
    assert (
        fields["win_rate_corrected"]
        != corrected_fields(results(), planned(), [GateMetric.WIN_RATE])["win_rate_corrected"]
    )


def test_one_case_with_two_probabilities_is_two_plans_and_refused():
    other = [Label(id="c0", value="new", annotator="bo", line=9, inclusion_probability=0.2)]
    with pytest.raises(InputError, match="two inclusion probabilities"):
        corrected_fields(results(), planned(other), [GateMetric.WIN_RATE])


def test_a_summary_with_a_design_reads_back_as_written():
    from judgecli.summary.pairwise import PairwiseSummary

    fields = corrected_fields(results(), planned(), [GateMetric.WIN_RATE])
    corrections = fields["corrections"]
    parsed = PairwiseSummary.model_fields["corrections"].annotation
    from pydantic import TypeAdapter

    dumped = {k: v.model_dump() for k, v in corrections.items()}
    back = TypeAdapter(parsed).validate_python(dumped)
    assert isinstance(back["design"], LabelDesign)
    assert isinstance(back["win_rate"], CorrectedEstimate)
