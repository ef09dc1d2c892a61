"""The chat completion a request body gets: the one path online requests and batch lines
share, so a request answered through a batch reads exactly as the same request sent online,
and both count the identical requests that per-call jitter draws anew for
(`judgecli.simulator.jitter`).
"""

from __future__ import annotations

import collections
import itertools
import threading
from typing import Any

from judgecli.simulator.blind_spot import BlindSpot, blind_spot_content
from judgecli.simulator.config import JudgeSettings
from judgecli.simulator.jitter import request_key
from judgecli.simulator.logprobs import content_logprobs
from judgecli.simulator.probes import probe_verdict
from judgecli.simulator.schema import find_schema
from judgecli.simulator.styles import ReplyStyle, StyledReply, style_reply
from judgecli.simulator.truth import TruthTable
from judgecli.simulator.verdicts import verdict_content
from judgecli.simulator.wire import completion_body, within_max_tokens


class Replier:
    """Turns a request body into its chat completion, numbering the completions it makes
    and counting the verdicts it computed for each distinct request (`request_key`).

    Used from the server's event loop thread (online replies and batch lines alike), so the
    completion counter needs no lock; the request counts have one, as `forget` comes from
    a test's thread.
    """

    def __init__(
        self, seed: int, truth: TruthTable | None, *, blind_spot: BlindSpot | None = None
    ) -> None:
        """Answer with ``seed``'s verdicts, replaying ``truth``'s labels when given (as a
        judge with ``blind_spot``, when given: `judgecli.simulator.blind_spot`).
        """
        self.seed = seed
        self.truth = truth
        self.blind_spot = blind_spot
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._occurrences: collections.Counter[str] = collections.Counter()

    def completion(
        self, body: dict[str, Any], judge: JudgeSettings, content: str | None = None
    ) -> dict[str, Any]:
        """The chat completion object (with usage) answering ``body`` as ``judge``.

        Args:
            body: The parsed chat completion request.
            judge: The settings of the judge its ``model`` picks.
            content: Scripted or malformed content, sent exactly as given and unstyled;
                None computes the verdict.

        A request asking ``logprobs: true`` gets the content's token logprobs, unless the
        judge's server gives none (`JudgeSettings.logprobs`).
        """
        # A computed reply stops at the request's max_tokens, as a model's would.
        reply = (
            StyledReply(content)
            if content is not None
            else within_max_tokens(body, self.styled(body, judge))
        )
        logprobs = None
        if body.get("logprobs") is True and judge.logprobs:
            model = str(body.get("model") or "")
            logprobs = content_logprobs(body, reply.content, seed=self.seed, model=model)
        return completion_body(body, reply, next(self._ids), logprobs)

    def styled(self, body: dict[str, Any], judge: JudgeSettings) -> StyledReply:
        """The verdict, computed as always, worded in the judge's style."""
        # A server that ignores response_format never shows it to the model.
        seen = body if judge.formats.enforced else _without(body, "response_format")
        # `judge probe`'s perturbed answers are read through (simulator/probes.py).
        seen, probed = probe_verdict(seen, seed=self.seed, judge=judge)
        occurrence = self._occurrence(seen) if judge.jitter else 0
        blind = self.blind_spot
        content = (
            probed
            if blind is None or probed is not None
            else blind_spot_content(
                seen, blind, truth=self.truth, seed=self.seed, noise=judge.noise
            )
        )
        content = (
            content
            if content is not None
            else verdict_content(
                seen,
                seed=self.seed,
                position_bias=judge.position_bias,
                length_bias=judge.length_bias,
                truth=self.truth,
                noise=judge.noise,
                jitter=judge.jitter,
                occurrence=occurrence,
            )
        )
        constrained = judge.formats.constrains(body)
        # Only a prose reply reads the schema (for its scale): no second search per request.
        schema = find_schema(seen) if judge.style is ReplyStyle.PROSE else None
        return style_reply(judge.style, content, constrained=constrained, schema=schema)

    def _occurrence(self, body: dict[str, Any]) -> int:
        """How many verdicts were computed for requests identical to ``body`` before this one.

        Only computed verdicts count (a truncated reply's too): a request answered by the
        script, the rpm limit, an error or a malformed fault did not sample the judge, so K
        repeats answered with verdicts draw occurrences 0..K-1 whatever failed in between.
        """
        key = request_key(body)
        with self._lock:
            occurrence = self._occurrences[key]
            self._occurrences[key] += 1
        return occurrence

    def forget(self) -> None:
        """Forget the request counts: the next identical requests draw as on a fresh server."""
        with self._lock:
            self._occurrences.clear()


def _without(body: dict[str, Any], key: str) -> dict[str, Any]:
    """``body`` without ``key``."""
    return {k: v for k, v in body.items() if k != key}
