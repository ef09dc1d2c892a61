"""Given labels for the judge simulator: replay a case's true label, perturbed by seeded noise.

``judge simulate --truth FILE`` reads a JSONL dataset in judge's case format (``id``,
``input``, ``output``, ... plus a truth field, ``label`` by default). When a request's
``<output>`` is an answer from that file, the simulator answers the answer's label instead of
its text-feature verdict, except that with probability ``noise`` it answers another valid
value. Nothing here is a model: it lets the demo and the tests show realistic, non-trivial
agreement with human labels.

The simulator sees only the judge's prompt, so answers are matched by text, as the prompt
shows it (fenced, whitespace-stripped): by (input, output) first, then by output alone when
every case with that output has the same label.

Several lines for one answer (one per annotator, as in ``datasets/labels.jsonl``) are pooled
into one label: the mean of numeric labels (rounded half up on an integer scale), or the
most common text label, the first seen winning ties.

A label is fitted to the verdict schema when a request arrives:

* integer or number score: the label clamped to the schema's minimum..maximum; a flip moves
  it by 1 (by a quarter of the range on a non-integer scale), inward at the ends;
* enum, such as a binary rubric's choices: the value equal to the label ignoring case, else
  the first value for pass/yes/true and the second for fail/no/false; a flip picks another;
* confidence: 0.85-0.95 when the label is answered, 0.55-0.70 when the draw flipped it, so
  calibration statistics have something real to measure.

Anything the label does not fit (a number label for an enum, pairwise winners) keeps the
quality-based value; the confidence still comes from the draw.

A line with `messages` instead of `output` is an agent's run: its `label` is the run's, and
`step_labels` (optional) each tool call's, in order (truth_runs.py); two labelled runs
compared get the winner their labels say.
"""

from __future__ import annotations

import collections
import math
import random
from dataclasses import dataclass
from dataclasses import field as default
from pathlib import Path
from typing import Any

from judgecli.errors import DatasetError
from judgecli.grading.prompt import fence
from judgecli.inputs.images import ImageError, read_parts
from judgecli.inputs.jsonl import iter_lines, parse_object
from judgecli.result import IMAGE_MARK
from judgecli.simulator.checklist import ItemKey, item_truths
from judgecli.simulator.runs import Run
from judgecli.simulator.truth_pairs import labelled_pair, pair_answers
from judgecli.simulator.truth_runs import (
    PairTruth,
    RunKey,
    StepKey,
    pair_truth,
    run_labels,
)
from judgecli.simulator.wire import image_text

TruthValue = int | float | str

_PASS_WORDS = frozenset({"pass", "passed", "yes", "true", "good", "correct"})
_FAIL_WORDS = frozenset({"fail", "failed", "no", "false", "bad", "incorrect"})
_TRUTHFUL_CONFIDENCE = (0.85, 0.95)
_FLIPPED_CONFIDENCE = (0.55, 0.70)


def shown(name: str, text: str) -> str:
    """Return ``text`` as a judge prompt shows it inside ``<name>`` tags, stripped.

    The prompt escapes closing tags inside a field, so the file's text is escaped the same
    way before it is compared with what the simulator reads out of a request.
    """
    return fence(name, text)[len(name) + 3 : -(len(name) + 4)].strip()


@dataclass(frozen=True)
class TruthAnswer:
    """One request's given label and what the seeded noise draw made of it."""

    label: TruthValue
    flipped: bool
    """Whether the noise draw says to answer a value other than the label."""
    draw: float
    """A second uniform draw: which way, or to which other value, a flip goes."""
    confidence: float
    """The verdict's confidence: high when the label is answered, lower when flipped."""

    def number(self, low: float, high: float, *, integer: bool) -> float | int | None:
        """Return the score for a ``low..high`` scale, or None when the label is not a number."""
        label = _as_number(self.label)
        if label is None:
            return None
        value = float(math.floor(label + 0.5)) if integer else label
        value = min(max(value, low), high)
        if self.flipped:
            step = 1.0 if integer else (high - low) / 4
            first, second = (step, -step) if self.draw < 0.5 else (-step, step)
            value = next((value + d for d in (first, second) if low <= value + d <= high), value)
        return int(value) if integer else round(value, 2)

    def choice(self, values: list[Any]) -> Any | None:
        """Return the enum value for the label, or None when the label names none of them."""
        index = _enum_index(self.label, values)
        if index is None:
            return None
        if self.flipped and len(values) > 1:
            others = [i for i in range(len(values)) if i != index]
            index = others[min(int(self.draw * len(others)), len(others) - 1)]
        return values[index]


def _as_number(label: TruthValue) -> float | None:
    if isinstance(label, str):
        try:
            label = float(label)
        except ValueError:
            return None
    return float(label) if math.isfinite(label) else None


def _enum_index(label: TruthValue, values: list[Any]) -> int | None:
    text = str(label).strip().casefold()
    for index, value in enumerate(values):
        if str(value).casefold() == text:
            return index
    # A bare pass/fail label follows judge's binary convention: the first choice passes.
    if text in _PASS_WORDS:
        return 0
    if text in _FAIL_WORDS and len(values) > 1:
        return 1
    return None


@dataclass(frozen=True)
class TruthTable:
    """The labels of a truth file, keyed by answer text as the judge prompt shows it."""

    by_pair: dict[tuple[str, str], TruthValue]
    """(input, output) → pooled label."""
    by_output: dict[str, TruthValue]
    """output → pooled label, for outputs whose cases all share one label."""
    by_run: dict[RunKey, TruthValue] = default(default_factory=dict)
    """An agent's run (task, calls, final answer) → its pooled label."""
    by_step: dict[StepKey, TruthValue] = default(default_factory=dict)
    """A step of a run (task, calls up to it) → its pooled label."""
    by_item: dict[ItemKey, bool] = default(default_factory=dict)
    """A checklist item (input, answer, criterion) → whether it is met (checklist.py)."""

    def lookup(self, input_text: str, output: str) -> TruthValue | None:
        """Return the label of the answer a request shows, or None when the file lacks it."""
        key = output.strip()
        found = self.by_pair.get((input_text.strip(), key))
        return found if found is not None else self.by_output.get(key)

    def answer(
        self, input_text: str, output: str, *, noise: float, seed: int, model: str
    ) -> TruthAnswer | None:
        """Return the label to answer for one request, after the seeded noise draw."""
        return drawn(self.lookup(input_text, output), output.strip(), noise, seed, model)

    def run_answer(self, run: Run, *, noise: float, seed: int, model: str) -> TruthAnswer | None:
        """The label to answer for a trajectory prompt: the step graded's, else the run's."""
        if run.graded is not None:
            label = self.by_step.get(run.step_key)
        else:
            label = self.by_run.get(run.key)
        return drawn(label, repr((run.key, run.graded)), noise, seed, model)

    def pair_answer(
        self, a: Run, b: Run, *, noise: float, seed: int, model: str
    ) -> PairTruth | None:
        """The winner of two runs compared, by their labels (None unless both are known)."""
        key = "\x1f".join(sorted((repr(a.key), repr(b.key))))
        return pair_truth(
            self.by_run.get(a.key),
            self.by_run.get(b.key),
            noise=noise,
            seed=seed,
            model=model,
            key=key,
            a_sorts_first=repr(a.key) <= repr(b.key),
        )


def drawn(
    label: TruthValue | None, key: str, noise: float, seed: int, model: str
) -> TruthAnswer | None:
    """The label to answer after the seeded noise draw (None: no label)."""
    if label is None:
        return None
    # Keyed on the answer, not the arrival order: reruns and retries flip the same cases,
    # and each judge model flips its own.
    rng = random.Random(f"{seed}\x1f{model}\x1f{key}")
    flipped = rng.random() < noise
    draw = rng.random()
    low, high = _FLIPPED_CONFIDENCE if flipped else _TRUTHFUL_CONFIDENCE
    confidence = round(rng.uniform(low, high), 2)
    return TruthAnswer(label, flipped=flipped, draw=draw, confidence=confidence)


def pooled_label(labels: list[TruthValue]) -> TruthValue:
    """One label from several annotators: the mean of numbers, else the most common value.

    Ties between text labels go to the one seen first.
    """
    if len(labels) == 1:
        return labels[0]
    if all(not isinstance(label, str) for label in labels):
        return sum(float(label) for label in labels) / len(labels)
    # Counter keeps first-seen order among equal counts.
    return collections.Counter(str(label) for label in labels).most_common(1)[0][0]


def load_truth(path: Path, field: str) -> TruthTable:
    """Read a truth file into a `TruthTable`; raise DatasetError naming file:line on a bad line."""
    labels: dict[tuple[str, str], list[TruthValue]] = {}
    runs: dict[RunKey, list[TruthValue]] = {}
    steps: dict[StepKey, list[TruthValue]] = {}
    items: dict[ItemKey, bool] = {}
    for number, _, text in iter_lines(path):
        case = _parse_line(path, number, text)
        if case.get("rubric_items") is not None:
            # A checklist's given verdicts: one true or false per rubric item.
            items.update(item_truths(path, number, case, case.get(field), field))
            continue
        if labelled_pair(case):  # a judge set's row (truth_pairs.py)
            for said_input, said_output, value in pair_answers(path, number, case, field):
                key = (shown("input", said_input), shown("output", said_output))
                labels.setdefault(key, []).append(value)
            continue
        label = _label(path, number, case, field)
        if case.get("messages") is not None:
            run, labelled = run_labels(path, number, case, label)
            runs.setdefault(run, []).append(label)
            for step, said in labelled:
                steps.setdefault(step, []).append(said)
            continue
        input_text = _field_text(path, number, case, "input")
        key = (
            shown("input", input_text or ""),
            shown("output", _field_text(path, number, case, "output") or ""),
        )
        labels.setdefault(key, []).append(label)
    if not labels and not runs and not items:
        raise DatasetError(path, None, "no cases (the file is empty)")
    by_pair = {key: pooled_label(values) for key, values in labels.items()}
    per_output: dict[str, set[TruthValue]] = {}
    for (_, output), label in by_pair.items():
        per_output.setdefault(output, set()).add(label)
    by_output = {out: next(iter(found)) for out, found in per_output.items() if len(found) == 1}
    return TruthTable(
        by_pair=by_pair,
        by_output=by_output,
        by_run={key: pooled_label(values) for key, values in runs.items()},
        by_step={key: pooled_label(values) for key, values in steps.items()},
        by_item=items,
    )


def _field_text(path: Path, number: int, case: dict[str, Any], name: str) -> str | None:
    """A truth line's `input` or `output` as the simulator reads it in a prompt: content
    parts (with images, read from the truth file's folder as judge reads a dataset's) as
    their texts and each image's `image_text`, joined by newlines.
    """
    value = case.get(name)
    if not isinstance(value, list):
        return value
    try:
        text = read_parts(value, f'"{name}"', path.parent)
    except ImageError as err:
        raise DatasetError(path, number, err.problem, hint=err.hint) from None
    return IMAGE_MARK.sub(lambda mark: image_text(mark.group(3)), text)


def _parse_line(path: Path, number: int, text: str) -> dict[str, Any]:
    case = parse_object(path, number, text)
    if (
        not isinstance(case.get("output"), str | list)
        and case.get("messages") is None
        and not labelled_pair(case)
    ):
        raise DatasetError(
            path,
            number,
            'missing "output": the simulator matches answers by their text',
            hint='give the answer as "output", or an agent\'s run as "messages"',
        )
    if not isinstance(case.get("input") or "", str | list):
        raise DatasetError(path, number, '"input" must be a string (or content parts)')
    return case


def _label(path: Path, number: int, case: dict[str, Any], field: str) -> TruthValue:
    label = case.get(field)
    if label is None:
        keys = ", ".join(case)
        raise DatasetError(
            path,
            number,
            f'missing truth field "{field}"',
            hint=f"this line has {keys}; name the label's key with --truth-field NAME",
        )
    if isinstance(label, bool):
        return "true" if label else "false"
    if isinstance(label, str) or (isinstance(label, int | float) and math.isfinite(label)):
        return label
    raise DatasetError(
        path,
        number,
        f'truth field "{field}" must be a number or a string, got {label!r}',
        hint="a list (true or false for each item) labels a line that has rubric_items",
    )
