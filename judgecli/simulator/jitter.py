"""Per-call jitter: a simulated judge that sometimes guesses, so repeated judging
(``--repeats K``) has a known amount of noise to measure.

With probability ``jitter`` a chat completion that asks for a verdict (a schema was found)
is answered as a random guess (`judgecli.simulator.verdicts` fills it): every enum leaf (a
binary choice, a pairwise ``winner``) is drawn uniformly from its values, every integer from
the scale's points ``minimum..maximum``, every number uniformly from ``[minimum, maximum]``
(2 decimals), every boolean by a coin; ``confidence`` keeps its computed value and
``reasoning`` says it was a guess (`GUESS_REASONING`). Otherwise the verdict is the usual
deterministic one, a truth file's labels included. A binary judge with jitter ``j`` thus
repeats its usual answer with probability ``1 - j / 2``.

Identical requests must draw independently, or K repeats would be K copies of one answer;
yet a test must be able to predict them. So the draw is seeded by (seed, model, `request_key`,
occurrence), where occurrence counts the identical requests the server has already answered
(`judgecli.simulator.replies.Replier`, online and batched alike): K repeats get K independent
draws, and a fresh server gives the same multiset of replies whatever the arrival order.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from typing import Any

GUESS_REASONING = "Simulated judgement (not a model): a random guess (jitter)."


def request_key(body: dict[str, Any]) -> str:
    """A canonical hash of what makes two requests the same question: their ``messages``,
    ``model`` and ``response_format`` (not sampling settings, ids or metadata).
    """
    asked = {key: body.get(key) for key in ("messages", "model", "response_format")}
    return hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()


def guess_draw(
    body: dict[str, Any], *, seed: int, jitter: float, occurrence: int
) -> random.Random | None:
    """The generator this call's random guess draws from, or None to answer as usual.

    Args:
        body: The chat completion request, as the judge sees it.
        seed: The simulator's seed.
        jitter: The probability of guessing (0 never draws, so the reply is unchanged).
        occurrence: How many identical requests (same `request_key`) came before this one.
    """
    if jitter <= 0:
        return None
    model = str(body.get("model", ""))
    rng = random.Random(f"{seed}\x1fjitter\x1f{model}\x1f{request_key(body)}\x1f{occurrence}")
    return rng if rng.random() < jitter else None


def guess_number(low: float, high: float, *, integer: bool, rng: random.Random) -> float | int:
    """A uniform draw over a scale: one of its integer points, or a number rounded to 2 places."""
    if integer:
        first = math.ceil(low)
        return rng.randint(first, max(first, math.floor(high)))
    return round(rng.uniform(low, high), 2)
