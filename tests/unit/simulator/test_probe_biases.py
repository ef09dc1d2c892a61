"""The simulator's known padding and verbosity biases (simulator/probes.py) measured the way
`judge probe` measures them: each pair judged in both orders, its loser padded or restated,
the debiased verdicts compared. The flip rate must find the bias it was given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judgecli.commands.setup import find_rubric_of
from judgecli.grading.debias import FlipPolicy, reconcile_flip, to_winner
from judgecli.grading.perturb import Probe, Side, pad, perturbed, restate
from judgecli.grading.prompt import build_pair_messages, response_format
from judgecli.inputs.dataset import Case
from judgecli.inputs.pairs import Pair
from judgecli.result import Order, Winner
from judgecli.simulator.config import SimulatorConfig
from judgecli.simulator.replies import Replier
from judgecli.stats.intervals import wilson_interval
from judgecli.verdict import Position

RUBRIC = find_rubric_of("pairwise").rubric
TOPICS = ["rivers", "bread", "glaciers", "compilers", "tides", "bees", "vaccines", "bridges"]


def pairs(seed: int, n: int) -> list[Pair]:
    """n pairs on varied topics; the texts vary with the seed so the judge's noise does."""
    made = []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        question = f"Explain how {topic} work, briefly ({seed}-{i})."
        old = Case(id=f"p{i}", input=question, output=f"{topic.title()} work by steps {i}.")
        new = Case(
            id=f"p{i}",
            input=question,
            output=f"{topic.title()} work because of physics and history, case {seed}.",
        )
        made.append(Pair(old=old, new=new))
    return made


def winner(replier: Replier, config: SimulatorConfig, pair: Pair, order: Order) -> Winner:
    """The simulator's verdict on one order of a pair, mapped back to old/new."""
    body: dict[str, Any] = {
        "model": "sim",
        "messages": build_pair_messages(
            RUBRIC, pair.old, pair.new, old_first=order is Order.OLD_NEW
        ),
        "response_format": response_format(RUBRIC),
    }
    reply = replier.completion(body, config.settings_for("sim"))
    said = json.loads(reply["choices"][0]["message"]["content"])["winner"]
    return to_winner(Position(said), order)


def debiased(replier: Replier, config: SimulatorConfig, pair: Pair) -> Winner | None:
    """Both orders reconciled (inconsistent: tie), as `judge probe` compares them."""
    first = winner(replier, config, pair, Order.OLD_NEW)
    second = winner(replier, config, pair, Order.NEW_OLD)
    return reconcile_flip(first, second, FlipPolicy.TIE).winner


def flip_rate(seed: int, probe: Probe, bias: float, n: int = 30) -> tuple[int, int]:
    """Flips and pairs probed for one seeded simulator and one set of pairs."""
    field = "padding_bias" if probe is Probe.LENGTH else "verbosity_bias"
    config = SimulatorConfig(seed=seed, **{field: bias})
    replier = Replier(seed, None)
    flips = probed = 0
    for pair in pairs(seed, n):
        before = debiased(replier, config, pair)
        if before in (None, Winner.TIE):
            continue
        side = Side.OLD if before is Winner.NEW else Side.NEW
        after = debiased(replier, config, perturbed(pair, probe, side))
        probed += 1
        flips += after is not before
    return flips, probed


@pytest.mark.parametrize("probe", [Probe.LENGTH, Probe.VERBOSITY])
def test_an_unbiased_judge_sees_through_padding_and_restating(probe: Probe) -> None:
    for seed in range(3):
        flips, probed = flip_rate(seed, probe, 0.0)
        assert probed > 10
        assert flips == 0


@pytest.mark.parametrize(("probe", "bias"), [(Probe.LENGTH, 0.3), (Probe.VERBOSITY, 0.6)])
def test_the_flip_rates_interval_covers_the_known_bias_over_seeds(
    probe: Probe, bias: float
) -> None:
    covered = total_flips = total_probed = 0
    seeds = 60
    for seed in range(seeds):
        flips, probed = flip_rate(seed, probe, bias)
        low, high = wilson_interval(flips, probed)
        assert low is not None
        assert high is not None
        covered += low <= bias <= high
        total_flips, total_probed = total_flips + flips, total_probed + probed
    # A 95% interval misses about 3 of 60; 52 or more covered has probability > 0.999
    # for a correct 95% interval (binomial), while a biased measure misses far more often.
    assert covered >= 52, covered
    assert abs(total_flips / total_probed - bias) < 0.05


def test_the_bias_draw_prefers_the_rewritten_answer_in_both_orders_alike() -> None:
    config = SimulatorConfig(seed=1, padding_bias=1.0)
    replier = Replier(1, None)
    pair = pairs(1, 1)[0]
    rewritten = Pair(
        old=pair.old, new=pair.new.model_copy(update={"output": pad(pair.new.output or "")})
    )
    assert winner(replier, config, rewritten, Order.OLD_NEW) is Winner.NEW
    assert winner(replier, config, rewritten, Order.NEW_OLD) is Winner.NEW
    restated = Pair(
        old=pair.old.model_copy(update={"output": restate(pair.old.output or "")}), new=pair.new
    )
    # Only the padding bias was given: a restated answer is judged as its plain text.
    plain = debiased(replier, SimulatorConfig(seed=1), pair)
    assert debiased(replier, config, restated) is plain


def position_flips(seed: int, bias: float, n: int = 30) -> int:
    """Pairs whose verdict moved when the order was swapped, under --position-bias."""
    config = SimulatorConfig(seed=seed, position_bias=bias)
    replier = Replier(seed, None)
    return sum(
        winner(replier, config, pair, Order.OLD_NEW)
        is not winner(replier, config, pair, Order.NEW_OLD)
        for pair in pairs(seed, n)
    )


def test_the_position_probe_finds_the_simulators_position_bias_and_only_it() -> None:
    # The simulator's position bias acts on weak preferences only, so the flip rate is not
    # the knob itself: none without it, more with a stronger one.
    unbiased = [position_flips(seed, 0.0) for seed in range(5)]
    half = [position_flips(seed, 0.5) for seed in range(5)]
    full = [position_flips(seed, 1.0) for seed in range(5)]
    assert unbiased == [0] * 5
    assert 0 < sum(half) < sum(full)


def self_flips(seed: int, bias: float, answers: tuple[Path, ...], n: int = 30) -> list[bool]:
    """For each pair whose OLD answer the `sim` family wrote and that the `ref` judge does
    not give to OLD: whether the `sim` judge did (its verdict moved toward its own answer).
    """
    config = SimulatorConfig(seed=seed, self_bias=bias, self_answers=answers)
    replier = Replier(seed, None)
    moved = []
    for pair in pairs(seed, n):
        reference = debiased_by(replier, config, pair, "ref")
        if reference is Winner.OLD or reference is None:
            continue
        moved.append(debiased_by(replier, config, pair, "sim") is Winner.OLD)
    return moved


def debiased_by(replier: Replier, config: SimulatorConfig, pair: Pair, model: str) -> Winner | None:
    """`debiased` for another model name."""
    said = []
    for order in (Order.OLD_NEW, Order.NEW_OLD):
        body: dict[str, Any] = {
            "model": model,
            "messages": build_pair_messages(
                RUBRIC, pair.old, pair.new, old_first=order is Order.OLD_NEW
            ),
            "response_format": response_format(RUBRIC),
        }
        reply = replier.completion(body, config.settings_for(model))
        position = json.loads(reply["choices"][0]["message"]["content"])["winner"]
        said.append(to_winner(Position(position), order))
    return reconcile_flip(said[0], said[1], FlipPolicy.TIE).winner


def test_a_self_biased_judge_moves_toward_its_own_familys_answers_by_the_known_share(
    tmp_path: Path,
) -> None:
    answers = tmp_path / "answers.jsonl"
    rows = [
        {"output": p.old.output, "model": "sim-small"}
        for seed in range(40)
        for p in pairs(seed, 30)
    ] + [
        {"output": p.new.output, "model": "other-large"}
        for seed in range(40)
        for p in pairs(seed, 30)
    ]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    bias = 0.5
    base = [m for seed in range(40) for m in self_flips(seed, 0.0, (answers,))]
    biased = [m for seed in range(40) for m in self_flips(seed, bias, (answers,))]
    # The same pairs and reference either way: a move is the bias draw, or the judge's own
    # verdict (as without the bias) where the draw did not fire.
    assert len(base) == len(biased) > 200
    expected = bias + (1 - bias) * sum(base) / len(base)
    assert abs(sum(biased) / len(biased) - expected) < 0.06
    # Without answers naming their generators, no judge has an own family's answer.
    assert self_flips(3, 1.0, ()) == self_flips(3, 0.0, ())
