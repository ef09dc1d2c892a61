"""Token logprobs for a simulated reply, as OpenAI returns them for ``logprobs: true``:
``choices[0].logprobs.content``, one entry per token with its ``top_logprobs``.

The reply is cut into GPT-like tokens (a word or a run of punctuation, with the space
before it), so a verdict's value is a token of its own (``" 4"``, ``"A"``, ``"PASS"``).
Every token but the value is certain (logprob 0). At the value of the verdict's ``score``,
``choice`` or ``winner`` (the last one written, as the judge reads it) the probability is
spread deterministically, so that a test knows the expected score:

* a score: a softmax over the scale's points around a centre within half a point of the
  score written (hashed from the seed, the model and the reply), ``p(k) ∝ exp(-(k - c)² /
  (2·SPREAD²))`` — the written score is the most likely point, and the expected score
  lies between it and its neighbour;
* a choice or winner: the written value gets 0.6-0.95 (hashed likewise), the schema's other
  values share the rest;

and ``OTHER_TOKEN`` (a quote, as if the judge might have written a string) takes
``OTHER_SHARE`` of it, so a client must renormalise over the valid values.
`value_distribution` is what a test computes the expected score from.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

from judgecli.simulator.schema import find_schema, numeric_enum, resolve_node

TOKEN = re.compile(r" ?\w+| ?[^\w\s]+|\s+")
VERDICT_VALUE = re.compile(r'"(score|choice|winner)"\s*:\s*')
SPREAD = 0.7
"""The softmax's width, in scale points."""
OTHER_TOKEN = ' "'
OTHER_SHARE = 0.02
DEFAULT_POINTS = list(range(1, 6))
"""The scale when the schema gives none (as the simulator's verdicts fill a bare integer)."""


def tokens_of(content: str) -> list[str]:
    """The reply cut into tokens that spell it exactly."""
    return TOKEN.findall(content)


def unit_hash(*parts: object) -> float:
    """A number in [0, 1) hashed from the parts."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def value_distribution(
    key: str, written: str, values: list[Any], *, seed: int, model: str, content: str
) -> dict[str, float]:
    """The probability of each value (as spelled in the JSON) where the reply writes `key`,
    `written` being the value it wrote; the shares sum to 1 - OTHER_SHARE.
    """
    draw = unit_hash(seed, model, content)
    if key == "score":
        centre = float(written) + draw - 0.5
        weights = {str(k): math.exp(-((k - centre) ** 2) / (2 * SPREAD**2)) for k in values}
    else:
        others = [str(v) for v in values if str(v) != written]
        main = 0.6 + 0.35 * draw
        weights = {written: main} | {v: (1 - main) / len(others) for v in others}
    total = math.fsum(weights.values())
    return {v: (1 - OTHER_SHARE) * w / total for v, w in weights.items()}


def valid_values(body: dict[str, Any], key: str, written: str) -> list[Any]:
    """The values the request's schema allows under `key` (scale points for a score)."""
    schema = find_schema(body)
    node = (schema or {}).get("properties", {}).get(key)
    node = resolve_node(node, schema or {}) if node is not None else {}
    values = node.get("enum")
    if key == "score":
        if isinstance(values, list) and numeric_enum(values):
            return [int(v) for v in values]
        low, high = node.get("minimum"), node.get("maximum")
        if isinstance(low, int | float) and isinstance(high, int | float):
            return list(range(int(low), int(high) + 1))
        return DEFAULT_POINTS
    return list(values) if isinstance(values, list) and values else [written]


def entry(token: str, logprob: float, top: list[tuple[str, float]]) -> dict[str, Any]:
    """One token of ``logprobs.content``, in OpenAI's shape."""

    def one(text: str, value: float) -> dict[str, Any]:
        return {"token": text, "logprob": value, "bytes": list(text.encode())}

    return one(token, logprob) | {"top_logprobs": [one(t, v) for t, v in top]}


def content_logprobs(
    body: dict[str, Any], content: str, *, seed: int, model: str
) -> dict[str, Any]:
    """``choices[0].logprobs`` for `content`, with at most ``body["top_logprobs"]``
    alternatives at each token.
    """
    wanted = body.get("top_logprobs")
    top = min(max(wanted, 0), 20) if isinstance(wanted, int) else 0
    tokens = tokens_of(content)
    spread = value_token(body, content, tokens, seed=seed, model=model)
    entries = []
    for index, token in enumerate(tokens):
        if spread is not None and index == spread[0]:
            ranked = sorted(spread[1].items(), key=lambda item: -item[1])
            logprobs = [(t, math.log(p)) for t, p in ranked]
            sampled = next(lp for t, lp in logprobs if t == token)
            entries.append(entry(token, sampled, logprobs[:top]))
        else:
            entries.append(entry(token, 0.0, [(token, 0.0)][:top]))
    return {"content": entries}


def value_token(
    body: dict[str, Any], content: str, tokens: list[str], *, seed: int, model: str
) -> tuple[int, dict[str, float]] | None:
    """The index of the token that writes the verdict's value, and its alternatives' shares
    (spelled as that token is, its leading space or quote kept); None without a verdict.
    """
    found = list(VERDICT_VALUE.finditer(content))
    if not found:
        return None
    key, at = found[-1].group(1), found[-1].end()
    quoted = content.startswith('"', at)
    start = at + 1 if quoted else at
    offset = 0
    for index, token in enumerate(tokens):
        if offset <= start < offset + len(token):
            prefix = content[offset:start]
            written = token[len(prefix) :]
            if written != written.strip() or not written:
                return None  # the value does not fill the token's end: nothing to spread
            values = valid_values(body, key, written)
            if key == "score" and not written.lstrip("-").isdigit():
                return None
            shares = value_distribution(
                key, written, values, seed=seed, model=model, content=content
            )
            if written not in shares:
                return None
            spelled = {prefix + value: p for value, p in shares.items()}
            return index, spelled | {OTHER_TOKEN: OTHER_SHARE}
        offset += len(token)
    return None
