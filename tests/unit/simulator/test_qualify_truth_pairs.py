"""simulator.truth_pairs: a judge whose agreement with a judge set's labels is known
(issue 34): 1 − noise in expectation, both orders alike, and the interval `judge qualify`
reports covers it at about its stated level over many seeds.
"""

from __future__ import annotations

import json
import random

import pytest

from judgecli.errors import DatasetError
from judgecli.simulator.transcript import Transcript
from judgecli.simulator.truth import load_truth
from judgecli.simulator.truth_pairs import pair_answer
from judgecli.stats.intervals import wilson_interval

PAIRS = 100


@pytest.fixture
def truth(write):
    rows = [
        {
            "id": str(i),
            "input": f"q{i}",
            "output_a": f"a{i}",
            "output_b": f"b{i}",
            "label": "a" if i % 2 else "b",
        }
        for i in range(PAIRS)
    ]
    return load_truth(write("set.jsonl", "".join(json.dumps(r) + "\n" for r in rows)), "label")


def said(truth, i: int, *, noise: float, seed: int, swapped: bool = False) -> str:
    a, b = (f"b{i}", f"a{i}") if swapped else (f"a{i}", f"b{i}")
    shown = Transcript(input_text=f"q{i}", output="", reference=None, output_a=a, output_b=b)
    answer = pair_answer(truth.lookup, shown, noise=noise, seed=seed, model="m")
    assert answer is not None
    if answer.winner == "tie":
        return "tie"
    return ("b" if answer.winner == "A" else "a") if swapped else answer.winner.lower()


def test_without_noise_the_judge_says_every_label(truth):
    assert [said(truth, i, noise=0.0, seed=1) for i in range(PAIRS)] == [
        "a" if i % 2 else "b" for i in range(PAIRS)
    ]


def test_both_orders_get_the_same_verdict(truth):
    for i in range(PAIRS):
        assert said(truth, i, noise=0.3, seed=5) == said(truth, i, noise=0.3, seed=5, swapped=True)


def test_agreement_is_one_minus_noise_and_its_interval_covers_it_over_many_seeds(truth):
    noise, seeds = 0.2, 200
    rates, covered = [], 0
    for seed in range(seeds):
        hits = sum(
            said(truth, i, noise=noise, seed=seed) == ("a" if i % 2 else "b") for i in range(PAIRS)
        )
        rates.append(hits / PAIRS)
        low, high = wilson_interval(hits, PAIRS)
        covered += low <= 1 - noise <= high
    assert sum(rates) / seeds == pytest.approx(1 - noise, abs=0.01)
    # Wilson's 95% interval: coverage 0.95 ± 3 binomial standard errors of 200 draws.
    assert 0.90 <= covered / seeds <= 0.99


def test_a_pairs_label_other_than_a_b_or_tie_names_file_and_line(write):
    path = write(
        "bad.jsonl", json.dumps({"input": "q", "output_a": "x", "output_b": "y", "label": 3}) + "\n"
    )
    with pytest.raises(DatasetError, match=r"bad.jsonl:1: .*\"a\", \"b\" or \"tie\""):
        load_truth(path, "label")


def test_a_random_pair_unknown_to_the_truth_file_gets_no_given_winner(truth):
    shown = Transcript(
        input_text="q0", output="", reference=None, output_a="a0", output_b=str(random.random())
    )
    assert pair_answer(truth.lookup, shown, noise=0.0, seed=0, model="m") is None


def test_a_true_tie_flipped_to_a_win_goes_to_the_same_answer_in_both_orders():
    # A noisy judge turning a tie into a win picks an answer, not a screen side: both orders
    # agree, as docs/simulator.md says (found by issue 35's pairwise judge-shift test).
    from judgecli.simulator.truth_runs import pair_truth

    flipped = 0
    for i in range(200):
        key = "\x1f".join(sorted((f"x{i}", f"y{i}")))
        one = pair_truth(2, 2, noise=0.9, seed=3, model="m", key=key, a_sorts_first=True)
        other = pair_truth(2, 2, noise=0.9, seed=3, model="m", key=key, a_sorts_first=False)
        assert one is not None
        assert other is not None
        swap = {"A": "B", "B": "A", "tie": "tie"}
        assert other.winner == swap[one.winner]
        flipped += one.winner != "tie"
    assert 150 < flipped < 200  # most were flipped: the test saw wins, not only ties
