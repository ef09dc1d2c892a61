"""`judge probe`'s flip rates from stored results: the position probe from a pair's two
orders, length and verbosity from the debiased verdicts before and after the rewrite.
"""

from __future__ import annotations

import pytest

from judgecli.commands.setup import find_rubric_of
from judgecli.grading.perturb import Probe
from judgecli.result import CaseResult, CaseStatus, Judgement, Order, Winner
from judgecli.summary.probe import as_given, summarize_probe
from judgecli.verdict import Position, Verdict

RUBRIC = find_rubric_of("pairwise").rubric
FLOORS = dict.fromkeys(Probe, 0.05)


def judged(case_id: str, first: Position, second: Position, winner: Winner) -> CaseResult:
    """A pair judged in both orders: `first` shown OLD/NEW, `second` NEW/OLD."""
    return CaseResult(
        status=CaseStatus.OK,
        id=case_id,
        winner=winner,
        rubric_hash=RUBRIC.content_hash,
        judgements=[
            Judgement(
                model="sim",
                order=order,
                verdict=Verdict(reasoning="r", winner=position),
            )
            for order, position in ((Order.OLD_NEW, first), (Order.NEW_OLD, second))
        ],
    )


def test_the_verdict_as_given_is_the_old_new_orders_and_the_swap_maps_back() -> None:
    # OLD/NEW: A is old; NEW/OLD: A is new. A then A = old, then new: the verdict moved.
    assert as_given(judged("p", Position.A, Position.A, Winner.TIE)) == (Winner.OLD, Winner.NEW)
    assert as_given(judged("p", Position.B, Position.A, Winner.NEW)) == (Winner.NEW, Winner.NEW)


def test_flip_rates_count_moved_verdicts_over_probed_pairs() -> None:
    results = [
        judged("p1", Position.A, Position.B, Winner.OLD),  # consistent, old wins
        judged("p2", Position.A, Position.A, Winner.TIE),  # position flip; no loser
        judged("p3", Position.B, Position.A, Winner.NEW),  # consistent, new wins
        judged("p4", Position.B, Position.A, Winner.NEW),
        # p1's loser (new) padded: now new wins -> moved; p3's loser padded: still new.
        judged("p1~length", Position.B, Position.A, Winner.NEW),
        judged("p3~length", Position.B, Position.A, Winner.NEW),
        # p4's rewrite failed: not probed.
        CaseResult(status=CaseStatus.FAILED, id="p4~length", rubric_hash="h", error="boom"),
        judged("p1~verbosity", Position.A, Position.A, Winner.TIE),  # a tie is a move too
    ]
    summary = summarize_probe(
        sorted(results, key=lambda r: r.id),
        rubric=RUBRIC,
        models=["sim"],
        probes=[Probe.POSITION, Probe.LENGTH, Probe.VERBOSITY],
        floors=FLOORS,
    )
    by_name = {p.name: p for p in summary.probes}
    assert (by_name[Probe.POSITION].flips, by_name[Probe.POSITION].n) == (1, 4)
    assert (by_name[Probe.LENGTH].flips, by_name[Probe.LENGTH].n) == (1, 2)
    assert (by_name[Probe.VERBOSITY].flips, by_name[Probe.VERBOSITY].n) == (1, 1)
    length = by_name[Probe.LENGTH]
    assert length.flip_rate == 0.5
    # Wilson 95% for 1 of 2 (statsmodels proportion_confint(1, 2, method="wilson")).
    assert length.flip_rate_ci == pytest.approx((0.09453120573, 0.90546879427))
    assert [(e.id, e.before, e.after, e.changed) for e in length.examples] == [
        ("p1", Winner.OLD, Winner.NEW, "new")
    ]
    assert summary.n_cases == 4
    assert summary.n_failed == 1
    dumped = summary.model_dump(mode="json", exclude_none=True)
    assert set(dumped["probes"][0]) >= {"name", "flip_rate", "flip_rate_ci", "n"}


def test_a_probe_with_no_pair_has_no_rate_and_no_interval() -> None:
    summary = summarize_probe(
        [judged("p1", Position.TIE, Position.TIE, Winner.TIE)],
        rubric=RUBRIC,
        models=["sim"],
        probes=[Probe.LENGTH],
        floors=FLOORS,
    )
    (length,) = summary.probes
    assert (length.n, length.flip_rate, length.flip_rate_ci) == (0, None, (None, None))


def panel_result(case_id: str, **winners: Winner) -> CaseResult:
    """A pair a panel judged: each judge's debiased verdict."""
    return CaseResult(
        status=CaseStatus.OK,
        id=case_id,
        winner=Winner.TIE,
        rubric_hash=RUBRIC.content_hash,
        judge_winners={f"openai/{m}": w for m, w in winners.items()},
    )


def test_self_reads_a_judge_against_the_other_families_where_its_own_wrote_one_answer() -> None:
    results = [
        # gpt wrote OLD; the claude judge prefers NEW; the gpt judge sides with its own: moved.
        panel_result("p1", gpt=Winner.OLD, claude=Winner.NEW),
        # the others already prefer gpt's answer: nothing to move toward, not probed.
        panel_result("p2", gpt=Winner.OLD, claude=Winner.OLD),
        # claude's reference is a tie and the gpt judge agrees: probed, not moved.
        panel_result("p3", gpt=Winner.TIE, claude=Winner.TIE),
        # Both answers by gpt: not probed.
        panel_result("p4", gpt=Winner.OLD, claude=Winner.NEW),
    ]
    generators = {
        "p1": ("gpt-4o", "llama-3"),
        "p2": ("gpt-4o", "llama-3"),
        "p3": ("gpt-4o-mini", "mistral-large"),
        "p4": ("gpt-4o", "gpt-4.1"),
    }
    summary = summarize_probe(
        results,
        rubric=RUBRIC,
        models=["openai/gpt", "openai/claude"],
        probes=[Probe.SELF],
        floors=FLOORS,
        generators=generators,
    )
    (probe,) = summary.probes
    assert (probe.flips, probe.n) == (1, 2)
    assert [(e.id, e.before, e.after, e.changed) for e in probe.examples] == [
        ("p1", Winner.NEW, Winner.OLD, "openai/gpt: old")
    ]


@pytest.mark.parametrize(
    ("models", "generators", "note"),
    [
        (["openai/gpt", "openai/claude"], {"p1": (None, None)}, "names no generators"),
        (["openai/gpt"], {"p1": ("gpt-4o", None)}, "needs a panel"),
        (["openai/gpt", "openai/claude"], {"p1": ("llama", "mistral")}, "no pair has exactly"),
    ],
)
def test_self_says_why_it_probed_nothing(
    models: list[str], generators: dict[str, tuple[str | None, str | None]], note: str
) -> None:
    summary = summarize_probe(
        [panel_result("p1", gpt=Winner.OLD, claude=Winner.NEW)],
        rubric=RUBRIC,
        models=models,
        probes=[Probe.SELF],
        floors=FLOORS,
        generators=generators,
    )
    (probe,) = summary.probes
    assert probe.n == 0
    assert probe.note is not None
    assert note in probe.note
