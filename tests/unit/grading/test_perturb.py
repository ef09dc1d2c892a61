"""`judge probe`'s perturbations: deterministic, content-free padding and restating that
the simulator (and a reader) can undo, applied to the side asked.
"""

from __future__ import annotations

from judgecli.grading.perturb import (
    Probe,
    Side,
    base_id,
    pad,
    perturbable,
    perturbed,
    probe_id,
    restate,
    unwrap,
)
from judgecli.inputs.dataset import Case
from judgecli.inputs.pairs import Pair

ANSWER = "Microwaves make the water molecules in food vibrate, which creates heat."


def test_padding_keeps_the_answer_and_adds_about_its_length_of_filler() -> None:
    padded = pad(ANSWER)
    assert padded.startswith(ANSWER + "\n\n")
    assert len(ANSWER) <= len(padded) - len(ANSWER) - 2 <= len(ANSWER) + 80
    assert pad(ANSWER) == padded  # the same on every run


def test_a_short_answer_still_gets_two_filler_sentences() -> None:
    assert pad("Yes.").count(".") >= 3


def test_restating_says_the_answer_twice_at_about_twice_its_length() -> None:
    restated = restate(ANSWER)
    assert restated.count(ANSWER) == 2
    assert 2 * len(ANSWER) <= len(restated) <= 2 * len(ANSWER) + 80


def test_unwrap_undoes_each_perturbation_and_leaves_plain_text_alone() -> None:
    assert unwrap(pad(ANSWER)) == (Probe.LENGTH, ANSWER)
    assert unwrap(restate(ANSWER)) == (Probe.VERBOSITY, ANSWER)
    assert unwrap(ANSWER) == (None, ANSWER)
    # An answer that merely ends with a filler-like sentence is not taken for padding.
    near = ANSWER + "\n\nIt is worth taking a moment to consider this question carefully."
    assert unwrap(near) == (None, near)


def test_a_perturbed_pair_rewrites_only_the_side_asked_under_its_own_id() -> None:
    pair = Pair(
        old=Case(id="p-1", input="q", output="old answer"),
        new=Case(id="p-1", input="q", output="new answer"),
    )
    made = perturbed(pair, Probe.LENGTH, Side.OLD)
    assert made.id == "p-1~length" == probe_id("p-1", Probe.LENGTH)
    assert made.old.output == pad("old answer")
    assert made.new.output == "new answer"
    made = perturbed(pair, Probe.VERBOSITY, Side.NEW)
    assert made.new.output == restate("new answer")
    assert made.old.output == "old answer"


def test_a_stored_id_names_its_pair_and_probe() -> None:
    assert base_id("p-1~verbosity") == ("p-1", Probe.VERBOSITY)
    assert base_id("p-1") == ("p-1", None)
    assert base_id("a~b") == ("a~b", None)


def test_conversations_are_not_rewritten() -> None:
    chat = Case(
        id="c", messages=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    )
    plain = Case(id="c", input="hi", output="yo")
    assert perturbable(Pair(old=plain, new=plain))
    assert not perturbable(Pair(old=chat, new=plain))
