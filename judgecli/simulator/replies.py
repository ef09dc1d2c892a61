"""The chat completion a request body gets: the one path online requests and batch lines
share, so a request answered through a batch reads exactly as the same request sent online.
"""

from __future__ import annotations

import itertools
from typing import Any

from judgecli.simulator.config import JudgeSettings
from judgecli.simulator.styles import ReplyStyle, StyledReply, style_reply
from judgecli.simulator.truth import TruthTable
from judgecli.simulator.verdicts import find_schema, verdict_content
from judgecli.simulator.wire import completion_body


class Replier:
    """Turns a request body into its chat completion, numbering the completions it makes.

    Used from the server's event loop thread only (online replies and batch lines alike),
    so the counter needs no lock.
    """

    def __init__(self, seed: int, truth: TruthTable | None) -> None:
        """Answer with ``seed``'s verdicts, replaying ``truth``'s labels when given."""
        self.seed = seed
        self.truth = truth
        self._ids = itertools.count(1)

    def completion(
        self, body: dict[str, Any], judge: JudgeSettings, content: str | None = None
    ) -> dict[str, Any]:
        """The chat completion object (with usage) answering ``body`` as ``judge``.

        Args:
            body: The parsed chat completion request.
            judge: The settings of the judge its ``model`` picks.
            content: Scripted or malformed content, sent exactly as given and unstyled;
                None computes the verdict.
        """
        reply = StyledReply(content) if content is not None else self.styled(body, judge)
        return completion_body(body, reply, next(self._ids))

    def styled(self, body: dict[str, Any], judge: JudgeSettings) -> StyledReply:
        """The verdict, computed as always, worded in the judge's style."""
        # A server that ignores response_format never shows it to the model.
        seen = body if judge.formats.enforced else _without(body, "response_format")
        content = verdict_content(
            seen,
            seed=self.seed,
            position_bias=judge.position_bias,
            length_bias=judge.length_bias,
            truth=self.truth,
            noise=judge.noise,
        )
        constrained = judge.formats.constrains(body)
        # Only a prose reply reads the schema (for its scale): no second search per request.
        schema = find_schema(seen) if judge.style is ReplyStyle.PROSE else None
        return style_reply(judge.style, content, constrained=constrained, schema=schema)


def _without(body: dict[str, Any], key: str) -> dict[str, Any]:
    """``body`` without ``key``."""
    return {k: v for k, v in body.items() if k != key}
