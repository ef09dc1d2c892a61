"""What the simulator says: deterministic fake verdicts, in OpenAI-shaped replies.

Nothing here is a model. A verdict is a pure function of the request (messages, model name,
response schema) and the simulator's seed and bias settings, so the same request always gets
the same reply, different model names give different but correlated judges, and the offline
demo and integration tests can reason about what the "judge" will say.

Quality of one answer (0..1) is ``0.6 * content + 0.4 * noise`` where ``noise`` is a uniform
number hashed from (seed, model, criterion, answer) and ``content`` averages simple features:

* relevance: content words (4+ letters) shared with ``<input>``, saturating at 3 shared words
  (0.5 when the input has no content words);
* length: word count / 20, capped at 1, so answers under ~5 words score low;
* reference overlap, only when ``<reference>`` is present: content words shared with it,
  saturating at 3;

then multiplied by 0.25 when the answer is evasive ("I don't know", "I cannot help",
"as an AI").

An agent's run (a `<trajectory>`, a `<step>` graded in it, or two runs compared) is scored
from what it did instead (`judgecli.simulator.runs`): its outcome, its failed and repeated
tool calls; a step by its own result.

Told the truth (`judgecli.simulator.truth`), the simulator answers a known answer's given
label instead, perturbed by seeded noise; other answers keep the verdict above. Two runs
compared whose labels it knows get the winner their labels say.

With ``jitter`` (`judgecli.simulator.jitter`), a seeded share of calls is answered as a random
guess instead, drawn anew for each identical request: the one exception to "same request,
same reply", for tests of repeated judging.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from typing import Any, Literal

from judgecli.simulator.checklist import ItemJudge, checklist_verdict
from judgecli.simulator.generator import generated_answer
from judgecli.simulator.jitter import GUESS_REASONING, guess_draw, guess_number
from judgecli.simulator.runs import Run, describe, run_quality, step_quality
from judgecli.simulator.schema import find_schema, node_type, numeric_enum, resolve_node
from judgecli.simulator.transcript import Transcript, read_transcript
from judgecli.simulator.truth import TruthAnswer, TruthTable
from judgecli.simulator.truth_pairs import pair_answer
from judgecli.simulator.truth_runs import PairTruth
from judgecli.simulator.wire import WORD, content_words

MALFORMED_CONTENT = 'The answer is good. {"reasoning": "unterminated'

_EVASIVE = ("i don't know", "i do not know", "i cannot help", "i can't help", "as an ai")
# Below this gap the judge has no strong preference and the configured biases may act.
_STRONG_GAP = 0.15
# Below this gap, an unbiased draw calls the pair a tie.
_TIE_GAP = 0.03

# A request without a verdict schema to a model named gen* is answered as a generator
# (generator.py), for `judge refine`.
GENERATOR_PREFIX = "gen"

WinnerLabel = Literal["A", "B", "tie"]


def _overlap(output_words: set[str], other: str) -> float:
    return min(1.0, len(output_words & content_words(other)) / 3)


def _unit_hash(*parts: object) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def content_score(input_text: str, output: str, reference: str | None = None) -> float:
    """Score the answer's text features (0..1); see the module docstring."""
    lowered = output.lower().replace("\u2019", "'")
    words = content_words(output)
    relevance = _overlap(words, input_text) if content_words(input_text) else 0.5
    features = [relevance, min(1.0, len(WORD.findall(lowered)) / 20)]
    if reference is not None:
        features.append(_overlap(words, reference))
    score = sum(features) / len(features)
    return score * 0.25 if any(p in lowered for p in _EVASIVE) else score


def quality(
    input_text: str,
    output: str,
    *,
    model: str,
    seed: int,
    reference: str | None = None,
    criterion: str = "",
) -> float:
    """Return the simulated quality (0..1) of one answer; see the module docstring."""
    noise = _unit_hash(seed, model, criterion, output)
    return 0.6 * content_score(input_text, output, reference) + 0.4 * noise


@dataclass(frozen=True)
class Judgement:
    """Everything one simulated verdict depends on, with the per-criterion numbers."""

    transcript: Transcript
    model: str
    seed: int
    position_bias: float = 0.0
    length_bias: float = 0.0
    truth: TruthAnswer | None = None
    """The given label to answer (pointwise and binary only), when the truth file has it."""
    guess: random.Random | None = None
    """With jitter: the generator this call's random guess draws from; None answers as usual."""
    pair_truth: PairTruth | None = None
    """Two runs compared whose labels the truth file has: the winner they say."""

    def _run_quality(self, run: Run, criterion: str) -> float:
        """A run's (or the step graded's) quality: its features, and seeded noise."""
        features = (
            step_quality(run)
            if run.graded is not None
            else run_quality(run, content_score(run.task, run.answer))
        )
        noise = _unit_hash(self.seed, self.model, criterion, run.key, run.graded)
        # Less noise than an answer's: a run's features are what tests and the demo read.
        return 0.75 * features + 0.25 * noise

    def _quality(self, output: str | None, criterion: str) -> float:
        t = self.transcript
        return quality(
            t.input_text,
            output or "",
            model=self.model,
            seed=self.seed,
            reference=t.reference,
            criterion=criterion,
        )

    def gap(self, criterion: str = "") -> float:
        """Pairwise: quality(A) - quality(B); depends on the texts, not on the order shown."""
        t = self.transcript
        if t.run_a is not None and t.run_b is not None:
            return self._run_quality(t.run_a, criterion) - self._run_quality(t.run_b, criterion)
        return self._quality(t.output_a, criterion) - self._quality(t.output_b, criterion)

    def score(self, criterion: str = "") -> float:
        """The number the schema is filled from: quality, or pairwise ``0.5 + gap / 2``."""
        if self.transcript.pairwise:
            return 0.5 + self.gap(criterion) / 2
        if self.transcript.run is not None:
            return self._run_quality(self.transcript.run, criterion)
        return self._quality(self.transcript.output, criterion)

    def confidence(self, criterion: str = "") -> float:
        """How far the verdict is from a coin flip, 0.5..1."""
        if self.truth is not None:
            return self.truth.confidence
        if self.pair_truth is not None:
            return self.pair_truth.confidence
        if self.transcript.pairwise:
            return round(min(1.0, 0.5 + abs(self.gap(criterion)) / 2), 2)
        return round(0.5 + abs(self.score(criterion) - 0.5), 2)

    def winner(self, criterion: str = "") -> WinnerLabel:
        """Pick A, B or tie: strong preferences win; weak ones are exposed to the biases."""
        t = self.transcript
        if self.pair_truth is not None:
            return self.pair_truth.winner
        d = self.gap(criterion)
        better: WinnerLabel = "A" if d > 0 else "B"
        if abs(d) >= _STRONG_GAP:
            return better
        # Keyed on the order shown, so the two orders of one pair draw independently:
        # that is what makes position bias visible and flip-debiasing testable.
        rng = random.Random(
            f"{self.seed}\x1f{self.model}\x1f{criterion}\x1f{t.output_a}\x1f{t.output_b}"
        )
        if rng.random() < self.position_bias:
            return "A"
        len_a, len_b = len((t.output_a or "").split()), len((t.output_b or "").split())
        if rng.random() < self.length_bias and len_a != len_b:
            return "A" if len_a > len_b else "B"
        return better if abs(d) >= _TIE_GAP else "tie"

    def reasoning(self, criterion: str = "") -> str:
        """A sentence that says the verdict is simulated and shows the numbers behind it."""
        if self.guess is not None:
            return GUESS_REASONING
        if self.truth is not None or self.pair_truth is not None:
            return "Simulated judgement (not a model): a given label, replayed with seeded noise."
        run = self.transcript.run
        if run is not None:
            q = self.score(criterion)
            return f"Simulated judgement (not a model): run quality {q:.2f}: {describe(run)}."
        if self.transcript.pairwise:
            d = self.gap(criterion)
            return f"Simulated judgement (not a model): quality gap A - B = {d:+.2f}."
        q = self.score(criterion)
        return f"Simulated judgement (not a model): answer quality {q:.2f}."


def _pick_winner(
    values: list[Any], winner: WinnerLabel, judgement: Judgement, criterion: str
) -> Any:
    by_label = {str(v).lower(): v for v in values}
    if winner == "tie" and "tie" not in by_label:
        winner = "A" if judgement.gap(criterion) >= 0 else "B"
    if winner.lower() in by_label:
        return by_label[winner.lower()]
    position = {"A": 0, "B": 1, "tie": 2}[winner]
    return values[min(position, len(values) - 1)]


def _fill_number(
    node: dict[str, Any], q: float, *, integer: bool, judgement: Judgement
) -> float | int:
    # Unbounded scores get a Likert 1..5 (integers) or 0..1 (numbers).
    low = node.get("minimum", 1 if integer else 0)
    high = node.get("maximum", 5 if integer else 1)
    if judgement.guess is not None:
        return guess_number(low, high, integer=integer, rng=judgement.guess)
    truth = judgement.truth
    given = truth.number(low, high, integer=integer) if truth is not None else None
    if given is not None:
        return given
    if integer:
        return int(low + round(q * (high - low)))
    return round(float(low + q * (high - low)), 2)


def _fill(name: str, node: Any, root: dict[str, Any], judgement: Judgement, criterion: str) -> Any:
    node = resolve_node(node, root)
    values = node.get("enum")
    if numeric_enum(values) and node_type(node) in ("integer", "number"):
        # A scale written as its points (judge's scales and confidence): fill it as the
        # range, then answer the nearest point, as a grammar holding the judge to them would.
        ranged = {key: value for key, value in node.items() if key != "enum"}
        ranged |= {"minimum": min(values), "maximum": max(values)}
        return nearest(_fill(name, ranged, root, judgement, criterion), values)
    if isinstance(values, list) and values:
        if judgement.guess is not None:
            return judgement.guess.choice(values)
        if name.lower() == "winner" and judgement.transcript.pairwise:
            return _pick_winner(values, judgement.winner(criterion), judgement, criterion)
        given = judgement.truth.choice(values) if judgement.truth is not None else None
        if given is not None:
            return given
        return values[0] if len(values) == 1 or judgement.score(criterion) >= 0.5 else values[1]
    if "const" in node:
        return node["const"]
    kind = node_type(node)
    if kind == "object":
        # Top-level keys share the overall quality; nested keys are criteria with their own.
        properties = node.get("properties") or {}
        return {
            key: _fill(key, child, root, judgement, criterion if criterion or not name else key)
            for key, child in properties.items()
        }
    if name.lower() == "confidence" and kind in ("number", "integer"):
        return judgement.confidence(criterion)
    # Computed only for the leaves that use it: it hashes the answer and reads its words.
    q = judgement.score(criterion)
    if kind in ("integer", "number"):
        return _fill_number(node, q, integer=kind == "integer", judgement=judgement)
    if kind == "string":
        if name.lower() == "reasoning":
            return judgement.reasoning(criterion)
        advice = "clear and relevant." if q >= 0.5 else "add more detail."
        return f"Simulated {name.replace('_', ' ') or 'feedback'}: {advice}"
    if kind == "boolean":
        return judgement.guess.random() < 0.5 if judgement.guess is not None else q >= 0.5
    return [] if kind == "array" else None


def nearest(value: float, points: list[float]) -> float:
    """The point closest to `value` (the lower of two equally close)."""
    return min(sorted(points), key=lambda point: abs(point - value))


def fill_schema(schema: dict[str, Any], judgement: Judgement) -> dict[str, Any]:
    """Return a verdict object for ``schema``, keys in schema order, filled from ``judgement``."""
    filled = _fill("", schema, schema, judgement, "")
    return filled if isinstance(filled, dict) else {}


def verdict_content(
    body: dict[str, Any],
    *,
    seed: int,
    position_bias: float = 0.0,
    length_bias: float = 0.0,
    truth: TruthTable | None = None,
    noise: float = 0.0,
    jitter: float = 0.0,
    occurrence: int = 0,
) -> str:
    """Return the reply text for a chat completion request: a JSON verdict or plain text.

    With ``truth``, an answer found in it gets its label (flipped with probability ``noise``).
    With ``jitter``, a verdict is a random guess with that probability, drawn for the
    ``occurrence``-th identical request (`judgecli.simulator.jitter`).
    """
    transcript = read_transcript(body.get("messages") or [])
    model = str(body.get("model", ""))
    given, pair_truth = None, None
    if truth is not None and transcript.run is not None:
        given = truth.run_answer(transcript.run, noise=noise, seed=seed, model=model)
    elif truth is not None and transcript.run_a is not None and transcript.run_b is not None:
        pair_truth = truth.pair_answer(
            transcript.run_a, transcript.run_b, noise=noise, seed=seed, model=model
        )
    elif truth is not None and transcript.pairwise:
        # Two answers of a labelled pair (a judge set's row, truth_pairs.py).
        pair_truth = pair_answer(truth.lookup, transcript, noise=noise, seed=seed, model=model)
    elif truth is not None and not transcript.pairwise:
        given = truth.answer(
            transcript.input_text, transcript.output, noise=noise, seed=seed, model=model
        )
    schema = find_schema(body)
    # Only a verdict is guessed: a prose or generator reply has nothing to draw.
    guess = (
        None
        if schema is None
        else guess_draw(body, seed=seed, jitter=jitter, occurrence=occurrence)
    )
    if schema is not None:
        items = ItemJudge(
            transcript.input_text,
            transcript.output,
            model,
            seed,
            truth=truth.by_item if truth is not None else None,
            noise=noise,
            guess=guess,
        )
        listed = checklist_verdict(schema, body.get("messages") or [], items)
        if listed is not None:
            return json.dumps(listed)
    judgement = Judgement(
        transcript=transcript,
        model=model,
        seed=seed,
        position_bias=position_bias,
        length_bias=length_bias,
        truth=given,
        guess=guess,
        pair_truth=pair_truth,
    )
    if schema is None and model.startswith(GENERATOR_PREFIX):
        return generated_answer(body.get("messages") or [])
    if schema is None:
        # A judge that was not asked for JSON answers in prose, as a real model would.
        verdict = "good" if judgement.score() >= 0.5 else "weak"
        return f"Simulated judge (not a model): the answer looks {verdict}. {judgement.reasoning()}"
    return json.dumps(fill_schema(schema, judgement))
