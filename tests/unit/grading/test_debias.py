from __future__ import annotations

import pytest

from judgecli.grading.debias import FlipPolicy, combine_winners, majority, reconcile_flip, to_winner
from judgecli.result import Order, Winner
from judgecli.verdict import Position

OLD, NEW, TIE = Winner.OLD, Winner.NEW, Winner.TIE


@pytest.mark.parametrize(
    ("position", "order", "expected"),
    [
        pytest.param(Position.A, Order.OLD_NEW, OLD, id="A-is-old-when-old-first"),
        pytest.param(Position.B, Order.OLD_NEW, NEW, id="B-is-new-when-old-first"),
        pytest.param(Position.A, Order.NEW_OLD, NEW, id="A-is-new-when-new-first"),
        pytest.param(Position.B, Order.NEW_OLD, OLD, id="B-is-old-when-new-first"),
        pytest.param(Position.TIE, Order.NEW_OLD, TIE, id="tie-is-tie"),
    ],
)
def test_positions_map_back_to_answers(position, order, expected):
    assert to_winner(position, order) is expected


@pytest.mark.parametrize(
    ("first", "second", "policy", "winner", "consistent"),
    [
        pytest.param(NEW, NEW, FlipPolicy.TIE, NEW, True, id="agreement-wins"),
        pytest.param(TIE, TIE, FlipPolicy.TIE, TIE, True, id="two-ties-are-consistent"),
        pytest.param(OLD, NEW, FlipPolicy.TIE, TIE, False, id="flip-is-a-tie"),
        pytest.param(NEW, TIE, FlipPolicy.TIE, TIE, False, id="win-and-tie-is-a-tie"),
        pytest.param(OLD, NEW, FlipPolicy.DROP, None, False, id="drop-leaves-no-verdict"),
        pytest.param(NEW, TIE, FlipPolicy.VOTE, NEW, False, id="vote-win-beats-tie"),
        pytest.param(TIE, OLD, FlipPolicy.VOTE, OLD, False, id="vote-either-order"),
        pytest.param(OLD, NEW, FlipPolicy.VOTE, TIE, False, id="vote-flip-is-tie"),
    ],
)
def test_reconcile_flip_follows_the_policy(first, second, policy, winner, consistent):
    verdict = reconcile_flip(first, second, policy)
    assert (verdict.winner, verdict.consistent) == (winner, consistent)


@pytest.mark.parametrize(
    ("winners", "expected"),
    [
        pytest.param([NEW, NEW, OLD], NEW, id="majority"),
        pytest.param([NEW, OLD], TIE, id="split-is-tie"),
        pytest.param([NEW, OLD, TIE], TIE, id="three-way-split-is-tie"),
        pytest.param([TIE, TIE, NEW], TIE, id="majority-tie"),
        pytest.param([], None, id="no-verdicts"),
    ],
)
def test_panel_winner_is_the_majority(winners, expected):
    assert combine_winners(winners) is expected


def test_majority_of_nothing_is_none():
    assert majority([]) is None
