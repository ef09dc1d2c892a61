"""Given labels for agents' runs: a truth file's lines with `messages` (judge's case format)
carry the run's `label` and, optionally, `step_labels` (one per tool call, in order), so the
statistics of trajectory and per-step grading can be tested against known answers.

A run is found by what a prompt shows of it (`runs.Run.key`: its task, its calls and its
final answer), a step by its task and the calls up to it (`runs.Run.step_key`). The keys
are read from the run rendered as judge renders it, so they match the prompts exactly
(a run shown with its middle elided is not found, and keeps its simulated verdict). Two
runs compared whose labels are both numbers get the winner the labels say (the higher
label; equal labels a tie), flipped to another outcome with probability `noise`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from judgecli.errors import DatasetError
from judgecli.grading.prompt import fence
from judgecli.inputs.conversation import TurnsError, parse_turns, render_turns
from judgecli.simulator.runs import Run, read_run

RunKey = tuple[str, tuple[str, ...], str]
StepKey = tuple[str, tuple[str, ...]]
Label = int | float | str
Side = Literal["A", "B", "tie"]


@dataclass(frozen=True)
class PairTruth:
    """The winner two labelled runs get, after the noise draw."""

    winner: Side
    confidence: float


def shown_run(turns_value: Any, path: Path, number: int) -> Run:
    """A truth line's `messages` as the simulator reads a prompt's run."""
    try:
        # A truth line with messages is an agent's run, whether or not it made a call.
        turns = parse_turns(turns_value, agent=True)
    except TurnsError as err:
        raise DatasetError(path, number, err.problem, hint=err.hint) from None
    fenced = fence("trajectory", render_turns(turns))
    return read_run(fenced[len("<trajectory>\n") : -len("\n</trajectory>")])


def run_labels(
    path: Path, number: int, case: dict[str, Any], label: Label
) -> tuple[RunKey, list[tuple[StepKey, Label]]]:
    """A truth line with `messages`: its run's key and label, and each step's key and label
    (`step_labels`, one per tool call, when the line has them).
    """
    run = shown_run(case["messages"], path, number)
    steps = case.get("step_labels")
    if steps is None:
        return run.key, []
    if not isinstance(steps, list) or len(steps) != len(run.calls):
        raise DatasetError(
            path,
            number,
            f'"step_labels" must be a list of {len(run.calls)} labels, one per tool call of '
            f"the run, got {steps!r}",
            hint="write one number or text per tool call, in the order the run made them",
        )
    for step in steps:
        if isinstance(step, bool) or not isinstance(step, int | float | str):
            raise DatasetError(
                path, number, f'"step_labels" holds {step!r}', hint="write numbers or texts"
            )
    task = run.task.strip()
    return run.key, [((task, run.calls[: k + 1]), label) for k, label in enumerate(steps)]


def numeric(label: Label | None) -> float | None:
    """A label as a number, or None when it is not one."""
    if label is None or isinstance(label, str):
        try:
            return float(label) if label is not None else None
        except ValueError:
            return None
    return float(label)


def pair_truth(
    a: Label | None,
    b: Label | None,
    *,
    noise: float,
    seed: int,
    model: str,
    key: str,
    a_sorts_first: bool = True,
) -> PairTruth | None:
    """The winner of two runs by their labels (module docstring), or None unless both are
    numbers. The draw is keyed on the pair whatever its order, so both orders agree: a tie
    flipped to a win goes to an answer, not a side (`a_sorts_first`: whether A's answer is
    the first of the two in `key`'s order).
    """
    la, lb = numeric(a), numeric(b)
    if la is None or lb is None:
        return None
    winner: Side = "A" if la > lb else "B" if lb > la else "tie"
    rng = random.Random(f"{seed}\x1f{model}\x1fpair\x1f{key}")
    flipped = rng.random() < noise
    if flipped:
        first = rng.random() < 0.5
        if winner == "tie":
            winner = "A" if first == a_sorts_first else "B"
        else:
            # The other answer, or a tie: the same outcome in either order.
            winner = ("B" if winner == "A" else "A") if first else "tie"
    confidence = round(rng.uniform(0.55, 0.70) if flipped else rng.uniform(0.85, 0.95), 2)
    return PairTruth(winner, confidence)
