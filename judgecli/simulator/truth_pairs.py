"""Given pairwise labels for the judge simulator: a judge set's rows (`judge qualify`) as a
truth file, and the winner a pairwise prompt gets from them.

A truth line with `output_a` and `output_b` instead of `output` is a labelled pair: its
`label` (`a`, `b` or `tie`, as a judge set writes it) says which answer is better. It is
read as two answers of its input, the better one labelled 1 and the other 0 (both 0.5 for a
tie). A pairwise prompt whose two answers are both known gets the winner their labels say,
flipped with probability `noise` to one of the two other verdicts (`truth_runs.pair_truth`,
as two labelled agents' runs get theirs). The draw is keyed on the pair whatever the order
shown, so both orders agree: a judge whose agreement with the labels is 1 − noise exactly
in expectation, with a position consistency of 1, for tests with known answers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from judgecli.errors import DatasetError
from judgecli.simulator.transcript import Transcript
from judgecli.simulator.truth_runs import Label, PairTruth, pair_truth

SIDE_LABELS: dict[str, tuple[float, float]] = {"a": (1.0, 0.0), "b": (0.0, 1.0), "tie": (0.5, 0.5)}
"""A pair's label as the two answers' labels (output_a's, output_b's)."""


def labelled_pair(case: dict[str, Any]) -> bool:
    """Whether a truth line is a labelled pair (a judge set's row)."""
    return case.get("output") is None and "output_a" in case and "output_b" in case


def pair_answers(
    path: Path, number: int, case: dict[str, Any], field: str
) -> list[tuple[str, str, float]]:
    """A labelled pair's line as its two answers: (input, output, label) each."""
    texts = [case.get("input"), case.get("output_a"), case.get("output_b")]
    if not all(isinstance(t, str) for t in texts[1:]) or not isinstance(texts[0] or "", str):
        raise DatasetError(
            path, number, "a labelled pair's input, output_a and output_b must be strings"
        )
    label = case.get(field)
    sides = SIDE_LABELS.get(label.strip().casefold()) if isinstance(label, str) else None
    if sides is None:
        raise DatasetError(
            path,
            number,
            f'a labelled pair\'s "{field}" must be "a", "b" or "tie", got {label!r}',
            hint='e.g. {"input": "...", "output_a": "...", "output_b": "...", "label": "a"}',
        )
    input_text = str(texts[0] or "")
    return [(input_text, str(texts[1]), sides[0]), (input_text, str(texts[2]), sides[1])]


def pair_answer(
    lookup: Callable[[str, str], Label | None],
    transcript: Transcript,
    *,
    noise: float,
    seed: int,
    model: str,
) -> PairTruth | None:
    """The winner of a pairwise prompt whose two answers the truth file labels, or None."""
    a, b = transcript.output_a, transcript.output_b
    if a is None or b is None:
        return None
    text = transcript.input_text
    key = "\x1f".join(sorted((a.strip(), b.strip())))
    return pair_truth(
        lookup(text, a),
        lookup(text, b),
        noise=noise,
        seed=seed,
        model=model,
        key=key,
        a_sorts_first=a.strip() <= b.strip(),
    )
