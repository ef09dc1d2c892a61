"""The simulator as a generator (for `judge refine`): deterministic answers that get
better with each round of judge feedback, so the refine loop has something to improve.
"""

from __future__ import annotations

from typing import Any

from judgecli.simulator.wire import content_words, message_text


def _draft(question: str, level: int) -> str:
    # Vague at level 1; on topic at 2; long and reusing the question's words from 3 on.
    words = sorted(content_words(question), key=lambda w: (question.lower().find(w), w))[:3]
    if level <= 1:
        return "It depends."
    if level == 2:
        return f"It depends on {' and '.join(words[:2] or ['context'])}, mostly."
    more = " Each point comes with its reason." * (level - 3)
    return (
        f"Regarding {', '.join(words or ['this'])}: here is a complete answer that addresses "
        f"the question directly, step by step, with the details that matter.{more}"
    )


def generated_answer(messages: list[Any]) -> str:
    """A simulated generator's answer to the first user message's first line, better with
    each feedback round: one level above the best earlier draft the messages quote (the
    feedback template shows the previous answer), else 2 when anything follows the question.
    """
    chats = [m for m in messages if isinstance(m, dict)]
    users = [message_text(m) for m in chats if m.get("role") == "user"]
    first = users[0].strip() if users else ""
    question = first.split("\n", 1)[0]
    texts = [message_text(m) for m in chats]
    seen = [k for k in range(1, 7) if any(_draft(question, k) in t for t in texts)]
    level = max(seen) + 1 if seen else (2 if len(users) > 1 or first != question else 1)
    return _draft(question, level)
