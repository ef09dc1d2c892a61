"""Probability-weighted verdicts (--score-mode logprob): read the judge's token
log-probabilities where it wrote its verdict, instead of only the verdict it sampled. Pure.

G-Eval's expected score: at the token(s) where the reply's JSON writes the score, the top
alternatives that spell a point of the scale are kept, their probabilities renormalised over
those points (tokens that are no score — a quote, a space, "6" on a 1-5 scale — drop out),
and the score is Σ p(s)·s. A binary verdict gets the probability of each choice (the pass
choice's is its expected score); a pairwise one the probability of A, B and tie, mapped back
through the order shown to old, new and tie (AlpacaEval 2's weighted annotator), whose
expected score is P(new) + ½·P(tie), a tie counting half as in the win rate.

Where the value is: value_span (judgecli.verdict) finds it in the reply text exactly where
parse_verdict read it, and the tokens' lengths place it among the tokens. A value may start
inside a token (" 4", ": 4") or span several ("1", "0" for 10): alternatives are read after
the same prefix, and a value the sampled tokens go on spelling is followed along them, each
continuation weighted by its conditional probability. An alternative off that path that
could still go on (a "1" that might be 10) is taken as the value it spells.

Nothing is guessed: a reply with no logprobs, or none of whose alternatives spells a valid
value, is a LogprobError, which fails the judgement with its reason.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from judgecli.grading.debias import to_winner
from judgecli.judge.token_logprobs import TokenLogprob
from judgecli.result import Judgement, Order, Winner
from judgecli.rubric import Rubric, RubricKind
from judgecli.verdict import Position, Verdict, value_span

TOP_LOGPROBS = 20
"""Alternatives asked for at each token: the most OpenAI allows (vLLM's default cap too)."""
DIGITS = 6
"""Probabilities and expected scores are kept to this many decimals."""


class LogprobError(Exception):
    """The logprobs do not give the verdict's probabilities; the reason says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Weighed:
    """A verdict's probabilities, and which tokens were read to get them."""

    probabilities: dict[str, float]
    """Each valid value's probability: a scale point ("4"), a choice, or (pairwise) the
    winner old, new or tie after mapping the order back."""
    expected: float
    """Pointwise Σ p(s)·s; binary P(pass choice); pairwise P(new) + ½·P(tie)."""
    positions: frozenset[int]
    """The token positions read: the ones a cached reply must keep alternatives for."""


@dataclass(frozen=True)
class Spelling:
    """How a verdict value is written: its valid spellings, and what ends it."""

    labels: dict[str, str]
    """Spelling (case-folded for strings) → the value it means."""
    quoted: bool
    """A JSON string (it ends at the closing quote); else a number (it ends at the first
    character no number has)."""

    def read(self, rest: str) -> tuple[str, bool]:
        """The value characters at the start of `rest`, and whether the value ends there."""
        if self.quoted:
            end = rest.find('"')
            return (rest, False) if end < 0 else (rest[:end], True)
        match = NUMBER.match(rest)
        assert match is not None  # the pattern matches the empty string
        return match.group(), match.end() < len(rest)

    def key(self, spelled: str) -> str:
        """The spelling as the labels hold it (parse_verdict strips and case-folds choices)."""
        return spelled.strip().casefold() if self.quoted else spelled

    def goes_on(self, spelled: str) -> bool:
        """Whether a longer spelling means another value: the tokens after must decide."""
        key = self.key(spelled)
        meant = self.labels.get(key)
        return not key or any(
            label != key and label.startswith(key) and value != meant
            for label, value in self.labels.items()
        )

    def value(self, spelled: str, ended: bool) -> str | None:
        """The value a spelling means; None when it is no valid value."""
        key = self.key(spelled)
        if ended or key in self.labels:
            return self.labels.get(key)
        meant = {value for label, value in self.labels.items() if key and label.startswith(key)}
        return meant.pop() if len(meant) == 1 else None


NUMBER = re.compile(r"[-+0-9.]*")


def scale_points(rubric: Rubric) -> list[int]:
    """The points of an integer scale, low to high."""
    assert rubric.scale is not None
    return list(range(int(rubric.scale.min), int(rubric.scale.max) + 1))


def spelling_of(rubric: Rubric) -> tuple[str, Spelling]:
    """The verdict key a rubric's value sits under, and how it is spelled."""
    if rubric.kind is RubricKind.POINTWISE:
        numbers: dict[str, str] = {}
        for point in scale_points(rubric):
            numbers |= {str(point): str(point), f"{point}.0": str(point)}
        return "score", Spelling(numbers, quoted=False)
    if rubric.kind is RubricKind.BINARY:
        choices = {choice.casefold(): choice for choice in rubric.choices or []}
        return "choice", Spelling(choices, quoted=True)
    positions = {position.value.casefold(): position.value for position in Position}
    return "winner", Spelling(positions, quoted=True)


def weigh(
    text: str, tokens: Sequence[TokenLogprob] | None, rubric: Rubric, order: Order | None = None
) -> Weighed:
    """The probabilities of a parsed reply's verdict, from the tokens that wrote it
    (`order`: which answer a pairwise judge saw first). LogprobError when they cannot give
    them.
    """
    if not tokens:
        raise LogprobError("the reply came without logprobs")
    key, spelling = spelling_of(rubric)
    span = value_span(text, key)
    if span is None:
        raise LogprobError(f'no "{key}" in the reply to read logprobs at')
    start = span[0] + 1 if spelling.quoted else span[0]
    masses, positions = value_masses(text, tokens, start, spelling)
    total = math.fsum(masses.values())
    if total <= 0:
        valid = ", ".join(dict.fromkeys(spelling.labels.values()))
        raise LogprobError(
            f'none of the most likely tokens where the reply writes its "{key}" spells a '
            f"valid value ({valid})"
        )
    probabilities = {value: mass / total for value, mass in masses.items()}
    if rubric.kind is RubricKind.POINTWISE:
        ranked = sorted(probabilities.items(), key=lambda item: int(item[0]))
        expected = math.fsum(int(point) * p for point, p in ranked)
        return Weighed(rounded(dict(ranked)), round(expected, DIGITS), positions)
    if rubric.kind is RubricKind.BINARY:
        ordered = {c: probabilities.get(c, 0.0) for c in rubric.choices or [] if c in probabilities}
        passing = probabilities.get(rubric.passing_choice or "", 0.0)
        return Weighed(rounded(ordered), round(passing, DIGITS), positions)
    winners = winner_probabilities(probabilities, order)
    expected = winners.get(Winner.NEW.value, 0.0) + winners.get(Winner.TIE.value, 0.0) / 2
    return Weighed(rounded(winners), round(expected, DIGITS), positions)


def winner_probabilities(positions: dict[str, float], order: Order | None) -> dict[str, float]:
    """A pairwise judge's P(A), P(B), P(tie) as P(old), P(new), P(tie), through the order
    shown, as the sampled winner is mapped (debias.to_winner); positional without an order.
    """
    if order is None:
        return positions
    mapped: dict[str, float] = {}
    for label, p in positions.items():
        mapped[to_winner(Position(label), order).value] = p
    return {w.value: mapped[w.value] for w in (Winner.OLD, Winner.NEW, Winner.TIE) if w in mapped}


def rounded(probabilities: dict[str, float]) -> dict[str, float]:
    """The probabilities to DIGITS decimals, for results.jsonl."""
    return {value: round(p, DIGITS) for value, p in probabilities.items()}


def value_masses(
    text: str, tokens: Sequence[TokenLogprob], start: int, spelling: Spelling
) -> tuple[dict[str, float], frozenset[int]]:
    """The probability mass (not yet renormalised) of each valid value written at offset
    `start` of `text`, and the token positions read.
    """
    starts = token_starts(text, tokens)
    encoded = text.encode()
    at = len(text[:start].encode())
    first = next((i for i, s in enumerate(starts) if s <= at < s + width(tokens[i])), None)
    if (
        first is None
        or piece(tokens[first]) != encoded[starts[first] : starts[first] + width(tokens[first])]
    ):
        raise LogprobError(
            "the logprobs' tokens do not spell out the reply where it writes its verdict"
        )
    prefix = encoded[starts[first] : at].decode(errors="replace")
    masses: dict[str, float] = defaultdict(float)
    read: set[int] = set()
    # The sampled path: (position, prefix before the value there, spelled so far, its mass).
    path: tuple[int, str, str, float] | None = (first, prefix, "", 1.0)
    while path is not None:
        position, before, known, mass = path
        path = None
        read.add(position)
        sampled = tokens[position].token
        for token, p in alternatives(tokens[position]):
            # The value's first token: what follows the prefix, leading spaces aside (JSON's
            # to place). Any later one: the value goes on from its first character.
            rest = token if known else after(token, before)
            if not rest:
                continue
            part, ended = spelling.read(rest if known else rest.lstrip())
            spelled = known + part
            if (
                token == sampled
                and not ended
                and position + 1 < len(tokens)
                and spelling.goes_on(spelled)
            ):
                path = (position + 1, "", spelled, mass * p)
                continue
            value = spelling.value(spelled, ended)
            if value is not None:
                masses[value] += mass * p
    return dict(masses), frozenset(read)


def alternatives(token: TokenLogprob) -> Iterable[tuple[str, float]]:
    """Each distinct token at this position with its probability, the sampled one included
    (a grammar-constrained server may sample a token outside its unconstrained top list).
    """
    found = {top.token: top.logprob for top in token.top_logprobs}
    found.setdefault(token.token, token.logprob)
    return [(text, math.exp(logprob)) for text, logprob in found.items()]


def after(token: str, prefix: str) -> str | None:
    """What an alternative token says after the prefix the sampled token had before the
    value (" 4" after " "; "4" too, the space being JSON's to leave out); None when it does
    not start that way.
    """
    if token.startswith(prefix):
        return token[len(prefix) :]
    bare, stem = token.lstrip(), prefix.lstrip()
    return bare[len(stem) :] if bare.startswith(stem) else None


def piece(token: TokenLogprob) -> bytes:
    """A token's UTF-8 bytes."""
    return bytes(token.bytes) if token.bytes is not None else token.token.encode()


def width(token: TokenLogprob) -> int:
    """A token's length in bytes."""
    return len(piece(token))


def token_starts(text: str, tokens: Sequence[TokenLogprob]) -> list[int]:
    """Each token's byte offset in the reply. The tokens spell the reply from its start;
    when they do not (a reasoning model's thinking among them, or a character split
    between tokens that the server wrote otherwise), they are laid back from its end.
    """
    encoded = text.encode()
    widths = [width(t) for t in tokens]
    if b"".join(piece(t) for t in tokens) == encoded:
        offsets, at = [], 0
        for w in widths:
            offsets.append(at)
            at += w
        return offsets
    offsets, at = [], len(encoded)
    for w in reversed(widths):
        at -= w
        offsets.append(at)
    return offsets[::-1]


def kept(tokens: Sequence[TokenLogprob], positions: Iterable[int]) -> list[TokenLogprob]:
    """The tokens with alternatives only where they were read: what a cached reply keeps
    (twenty alternatives at every token would make each cached reply tens of kilobytes).
    """
    keep = set(positions)
    return [
        t if i in keep else t.model_copy(update={"top_logprobs": []}) for i, t in enumerate(tokens)
    ]


def mean_probabilities(judged: Sequence[dict[str, float]]) -> dict[str, float]:
    """The mean of several judgements' probabilities (a pairwise case's two orders, a
    panel, repeats): a value one judgement lacks counts as 0 there.
    """
    if not judged:
        return {}
    values = list(dict.fromkeys(v for probabilities in judged for v in probabilities))
    return {
        v: round(math.fsum(p.get(v, 0.0) for p in judged) / len(judged), DIGITS) for v in values
    }


def graded_verdict(judgement: Judgement) -> Verdict | None:
    """The verdict a case is graded from: the one the judge wrote, but for a pointwise
    judgement weighed by its logprobs, whose score is then the expected score.
    """
    verdict = judgement.verdict
    if verdict is None or verdict.score is None or judgement.score_expected is None:
        return verdict
    return verdict.model_copy(update={"score": judgement.score_expected})
