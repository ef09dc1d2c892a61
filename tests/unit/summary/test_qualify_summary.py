"""summary.qualify: each judge set's numbers against hand-computed answers (issue 34)."""

from __future__ import annotations

import pytest

from judgecli.inputs.labels import Label, LabelSpace
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.result import CaseResult, CaseStatus, Judgement, Order, Winner
from judgecli.rubric import RubricKind
from judgecli.summary.qualify import SetLabels, qualify_gate, summarize_qualify
from judgecli.verdict import Position, Verdict

RUBRIC = parse_rubric(
    "name: pw\nkind: pairwise\nprompt:\n  user: '{input} {output_a} {output_b}'\n", source="pw"
)
SPACE = LabelSpace(kind=RubricKind.PAIRWISE)


def case(i: int, winner: Winner, slots: tuple[str, str], *, lengths=(10, 20)) -> CaseResult:
    """Case s/i judged in both orders; `slots`: the positions picked (old-new, new-old)."""
    judgements = [
        Judgement(model="m", order=order, verdict=Verdict(reasoning="r", winner=Position(s)))
        for order, s in zip((Order.OLD_NEW, Order.NEW_OLD), slots, strict=True)
    ]
    return CaseResult(
        id=f"s/{i}",
        status=CaseStatus.OK,
        winner=winner,
        consistent=slots in {("A", "B"), ("B", "A"), ("tie", "tie")},
        judge_winners={"m": winner},
        lengths={"old": lengths[0], "new": lengths[1]},
        judgements=judgements,
        rubric_hash=RUBRIC.content_hash,
    )


def labels(values: list[str]) -> list[Label]:
    return [Label(id=f"s/{i}", value=v, annotator=None, line=i + 1) for i, v in enumerate(values)]


# Humans: 0-4 old, 5-9 new. The judge agrees on 0-3 (old) and 5-8 (new); on 4 and 9 its
# two orders disagree and the case is a tie.
RESULTS = (
    [case(i, Winner.OLD, ("A", "B")) for i in range(4)]
    + [case(4, Winner.TIE, ("A", "A"))]
    + [case(i, Winner.NEW, ("B", "A")) for i in range(5, 9)]
    + [case(9, Winner.TIE, ("B", "B"))]
)
LABELS = labels(["old"] * 5 + ["new"] * 5)


def summarize(results, set_labels, *, floor=None):
    judged = SetLabels("s", set_labels, len({x.id for x in set_labels}), "s.jsonl", "0" * 64, False)
    return summarize_qualify(
        results,
        [judged],
        SPACE,
        rubric=RUBRIC,
        models=["m"],
        judge_version="t",
        seed=0,
        floor=floor,
    )


def test_agreement_kappa_consistency_and_length_preference_are_the_hand_computed_ones():
    (s,) = summarize(RESULTS, LABELS).sets
    assert s.n == 10
    assert s.agreement == pytest.approx(0.8)
    # Wilson's 95% interval of 8 of 10 (Newcombe 1998's table: 0.490, 0.943).
    assert s.agreement_ci == pytest.approx((0.49016, 0.94333), abs=1e-4)
    # Confusion human × judge: old → (old 4, tie 1), new → (new 4, tie 1).
    # p_o = 0.8, p_e = 0.5·0.4 + 0.5·0.4 + 0·0.2 = 0.4, κ = 0.4 / 0.6.
    assert s.kappa == pytest.approx(2 / 3)
    assert s.kappa_ci is not None
    assert s.position_consistency == pytest.approx(0.8)
    assert s.position_consistency_ci == pytest.approx((0.49016, 0.94333), abs=1e-4)
    # Decided cases: 4 OLD wins (shorter) and 4 NEW wins (longer).
    assert s.longer_wins_rate == pytest.approx(0.5)
    assert s.longer_wins_rate_ci == pytest.approx((0.21521, 0.78479), abs=1e-4)


def test_every_raters_label_counts_and_the_case_once():
    rows = [
        Label(id="s/0", value=v, annotator=None, line=n)
        for n, v in enumerate(("old", "old", "new"))
    ]
    (s,) = summarize([case(0, Winner.OLD, ("A", "B"))], rows).sets
    assert (s.n, s.n_cases) == (3, 1)
    assert s.agreement == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("floor", "passed"),
    [
        pytest.param(0.45, True, id="lower-bound-above"),
        pytest.param(0.5, False, id="lower-bound-below"),
    ],
)
def test_the_gate_reads_the_agreements_lower_bound_not_its_point(floor, passed):
    summary = summarize(RESULTS, LABELS, floor=floor)
    gate = qualify_gate(summary.sets, floor)
    assert (gate.passed, gate.decided) == (passed, True)
    assert gate.failed_sets == ([] if passed else ["s"])


def test_a_set_the_judge_could_not_grade_leaves_the_gate_undecided():
    failed = CaseResult(id="s/0", status=CaseStatus.FAILED, error="x", rubric_hash="h")
    summary = summarize([failed], labels(["old"]), floor=0.5)
    (s,) = summary.sets
    assert (s.n, s.n_failed, s.agreement, s.passed) == (0, 1, None, None)
    # The stable keys are written, null, rather than left out.
    written = summary.model_dump(mode="json", exclude_none=True)["sets"][0]
    for key in ("name", "n", "agreement", "agreement_ci", "kappa", "position_consistency"):
        assert key in written
    gate = qualify_gate(summary.sets, 0.5)
    assert (gate.passed, gate.decided) == (False, False)
