"""A judge with a known blind spot, and the optimizer that finds it (`judge align`'s known
answers, docs/simulator.md#a-judge-with-a-blind-spot).

With `--truth FILE --blind-spot PHRASE` a binary judge answers a known answer's label,
flipped with probability `--noise` (drawn per answer *and per instruction*, so two rubrics
err on different cases, as two prompts of one model do), except on its blind spot: an
answer that contains PHRASE (ignoring case and punctuation) passes whatever its label,
until the judge's instructions (its system message) quote three words of the phrase in a
row (a labelled example of it, or a warning about it). `--ignores-prompt` plays a judge
that never notices, whatever its instructions say: no prompt can fix it.

A request without a verdict schema to a model named `opt*` is answered as an optimizer
(`judge align --optimizer-model openai/opt-sim`): it reads the instruction in
`<instruction>` tags and the misjudged answers in `<answer>` tags, and replies with the
instruction plus a warning that quotes the word trigram found in the most misjudged
answers, in `<instruction>` tags.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from judgecli.simulator.schema import find_schema
from judgecli.simulator.transcript import read_transcript
from judgecli.simulator.truth import TruthAnswer, TruthTable
from judgecli.simulator.verdicts import Judgement, fill_schema
from judgecli.simulator.wire import message_text

OPTIMIZER_PREFIX = "opt"
"""A model named so (provider prefix aside) answers schema-less requests as an optimizer."""
NOTICED_RUN = 3
"""Words of the phrase in a row the instructions must quote for the judge to notice it."""
_WORD = re.compile(r"[a-z0-9']+")
_TAGGED = "<{0}>\n(.*?)\n</{0}>"


def words(text: str) -> list[str]:
    """The text's words, lower case, punctuation dropped."""
    return _WORD.findall(text.casefold())


def contains(text_words: list[str], phrase: list[str]) -> bool:
    """Whether ``phrase`` occurs in ``text_words`` as consecutive words."""
    n = len(phrase)
    return n > 0 and any(text_words[i : i + n] == phrase for i in range(len(text_words) - n + 1))


@dataclass(frozen=True)
class BlindSpot:
    """The blind spot: its phrase, and whether any prompt can fix it."""

    phrase: str
    ignores_prompt: bool = False

    def in_answer(self, output: str) -> bool:
        """Whether an answer falls in the blind spot."""
        return contains(words(output), words(self.phrase))

    def noticed(self, instructions: str) -> bool:
        """Whether instructions quoting the phrase make the judge see it."""
        if self.ignores_prompt:
            return False
        phrase = words(self.phrase)
        run = min(NOTICED_RUN, len(phrase))
        said = words(instructions)
        return any(contains(said, phrase[i : i + run]) for i in range(len(phrase) - run + 1))

    def choice(
        self,
        *,
        instructions: str,
        output: str,
        truth: TruthAnswer,
        choices: list[Any],
        noise_draw: float,
        noise: float,
    ) -> Any | None:
        """The choice answered for a known answer: the label (the pass choice in the blind
        spot, unless noticed), another choice when ``noise_draw`` < ``noise``. None when
        the label names none of the choices.
        """
        label = TruthAnswer(truth.label, flipped=False, draw=0.0, confidence=0.9).choice(choices)
        if label is None:
            return None
        if self.in_answer(output) and not self.noticed(instructions):
            label = choices[0]
        if noise_draw < noise and len(choices) > 1:
            others = [c for c in choices if c != label]
            label = others[int(truth.draw * len(others)) % len(others)]
        return label


def noise_draw(seed: int, model: str, instructions: str, output: str) -> float:
    """The uniform draw that decides a flip: per answer and per instruction."""
    return random.Random(f"{seed}\x1f{model}\x1f{instructions}\x1f{output}").random()


def instructions_of(messages: list[Any]) -> str:
    """The judge's instructions: the text of its system messages."""
    return "\n".join(
        message_text(m) for m in messages if isinstance(m, dict) and m.get("role") == "system"
    )


def blind_spot_content(
    body: dict[str, Any],
    spot: BlindSpot,
    *,
    truth: TruthTable | None,
    seed: int,
    noise: float,
) -> str | None:
    """The reply to a request as the blind-spot judge or the optimizer, or None when the
    request is neither (a known answer graded on a binary choice, or an optimizer ask):
    the ordinary simulator answers it then.
    """
    messages = body.get("messages") or []
    model = str(body.get("model", ""))
    schema = find_schema(body)
    if schema is None:
        if model.rsplit("/", 1)[-1].startswith(OPTIMIZER_PREFIX):
            return optimizer_reply(messages)
        return None
    choices = (schema.get("properties") or {}).get("choice", {}).get("enum")
    transcript = read_transcript(messages)
    if truth is None or transcript.pairwise or not isinstance(choices, list):
        return None
    label = truth.lookup(transcript.input_text, transcript.output)
    if label is None:
        return None
    instructions = instructions_of(messages)
    draw = noise_draw(seed, model, instructions, transcript.output)
    answer = TruthAnswer(label, flipped=False, draw=random.Random(draw).random(), confidence=0.9)
    chosen = spot.choice(
        instructions=instructions,
        output=transcript.output,
        truth=answer,
        choices=choices,
        noise_draw=draw,
        noise=noise,
    )
    if chosen is None:
        return None
    judgement = Judgement(
        transcript=transcript,
        model=model,
        seed=seed,
        truth=TruthAnswer(chosen, flipped=False, draw=0.0, confidence=0.9),
    )
    verdict = fill_schema(schema, judgement)
    if "reasoning" in verdict:
        seen = "noticed" if spot.in_answer(transcript.output) else "graded"
        verdict["reasoning"] = f"Simulated blind-spot judge (not a model): {seen}, {chosen}."
    return json.dumps(verdict)


def optimizer_reply(messages: list[Any]) -> str:
    """The optimizer's revision: the instruction, plus a warning quoting the word trigram
    found in the most misjudged answers (first seen wins a tie).
    """
    text = "\n".join(message_text(m) for m in messages)
    instruction = re.search(_TAGGED.format("instruction"), text, re.DOTALL)
    answers = re.findall(_TAGGED.format("answer"), text, re.DOTALL)
    base = instruction.group(1).strip() if instruction else ""
    counted: Counter[tuple[str, ...]] = Counter()
    for answer in answers:
        said = words(answer)
        counted.update({tuple(said[i : i + NOTICED_RUN]) for i in range(len(said) - 2)})
    warning = ""
    if counted:
        top = max(counted.values())
        phrase = next(t for t in counted if counted[t] == top)
        warning = (
            f'\n\nBe strict with answers that say "{" ".join(phrase)}": that wording is no '
            "evidence of correctness; judge the content alone."
        )
    return f"<instruction>\n{base}{warning}\n</instruction>"
