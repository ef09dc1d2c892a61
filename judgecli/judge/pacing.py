"""How fast to send to one model: the user's --rpm, the provider's rate-limit headers, and
its 429s (additive increase, multiplicative decrease). Pure: times are passed in.

Users rarely know their limit, and a key may already be at it when a run starts (another
job used it a moment ago). Sending as fast as the concurrency allows then gets most calls a
429, and every Retry-After ends with all workers sending at once again. So each model's
rate is learnt while the run goes:
- from headers, when the provider sends them (OpenAI's `x-ratelimit-*-requests`,
  Anthropic's `anthropic-ratelimit-requests-*`): the bucket refills at
  limit / reset requests per second, whatever the window (a minute, a day), and that is
  the pace once few requests remain;
- from 429s alone otherwise: a 429 cuts the rate to what the server actually admitted in
  the last seconds (or halves it), then the rate creeps back up while calls succeed.
"""

from __future__ import annotations

import email.utils
import math
import random
import re
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

MAX_RETRY_AFTER_S = 120.0
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0

# Pace below the provider's own refill rate: clocks drift and windows are counted on the
# provider's side.
MARGIN = 0.97
# Headers say "few left" below this many requests (or this share of the limit): pace then.
LOW_REMAINING = 8
LOW_SHARE = 0.1
# The window over which the admitted rate is measured after a 429.
ADMITTED_WINDOW_S = 5.0
# After a cut, further 429s from calls already in flight must not cut again: the next cut
# waits CUT_HOLD_S and CUT_CALLS calls at the new pace (or CUT_WAIT_S at a slow one).
CUT_HOLD_S = 1.0
CUT_CALLS = 10
CUT_WAIT_S = 10.0
# After a cut: seconds to climb back to just under the rate that overshot, then how fast
# (share per second) to probe above it.
RECOVER_S = 10.0
PROBE_PER_S = 0.005
# Before the first cut that knew a rate: grow by this share per second.
SLOW_START_PER_S = 0.5
# A cut "did not help" when, over at least NOISE_CALLS calls after it and with the rate not
# GROWN past the cut, 429s kept NOISE_RATIO of a share that was at least NOISE_SHARE
# before it; then the run goes unpaced for NOISE_HOLD_S.
NOISE_CALLS = 20
NOISE_SHARE = 0.1
NOISE_RATIO = 0.8
GROWN = 1.1
NOISE_HOLD_S = 60.0
MIN_RATE = 0.05
"""One call per 20 s: the floor a rate can be cut to."""


def retry_after_s(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds a provider asked us to wait (`retry-after-ms`, or `retry-after` in seconds or
    as an HTTP date), capped; None when it did not say.
    """
    if not headers:
        return None
    ms = header(headers, "retry-after-ms")
    value = header(headers, "retry-after")
    try:
        if ms is not None:
            return min(max(float(ms) / 1000.0, 0.0), MAX_RETRY_AFTER_S)
        if value is not None:
            return min(max(float(value), 0.0), MAX_RETRY_AFTER_S)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(str(value)) if value else None
        if parsed is not None:
            wall = time.time() if now is None else now
            return min(max(parsed.timestamp() - wall, 0.0), MAX_RETRY_AFTER_S)
    return None


def backoff_s(retry: int) -> float:
    """Exponential backoff with full jitter: up to 0.5 s, 1 s, 2 s ... capped, randomised so
    a fleet of callers does not retry in lockstep.
    """
    return random.uniform(0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**retry))  # noqa: S311


def header(headers: Mapping[str, str], name: str) -> str | None:
    """A header by name, case-insensitively, also under LiteLLM's `llm_provider-` prefix."""
    wanted = {name, f"llm_provider-{name}"}
    for key, value in headers.items():
        if key.lower() in wanted:
            return str(value)
    return None


DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def duration_s(text: str) -> float | None:
    """OpenAI's reset durations (`1s`, `6m0s`, `20ms`, `1h2m3.5s`) or plain seconds."""
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    parts = DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * UNIT_S[u] for n, u in parts)


def reset_s(text: str, *, now: float) -> float | None:
    """A reset given as a duration, or (Anthropic) as an RFC 3339 time."""
    seconds = duration_s(text)
    if seconds is not None:
        return seconds
    try:
        from datetime import datetime

        return max(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() - now, 0.0)
    except ValueError:
        return None


@dataclass(frozen=True)
class RateLimitInfo:
    """What a provider's rate-limit headers said about requests."""

    limit: float | None = None
    remaining: float | None = None
    reset_s: float | None = None
    """Seconds until `remaining` is back to `limit`."""

    @property
    def budget_per_s(self) -> float | None:
        """The rate that spends the whole budget over the time to the next full reset, when
        the headers tell it. Below the limit this is the pace that keeps a little in hand:
        for a token bucket refilling at r it settles where `remaining` is ~3% of the limit
        (the pace is MARGIN * limit / reset and reset = (limit - remaining) / r); for a
        sliding window it is the window's capacity.
        """
        if self.limit is None or not self.reset_s:
            return None
        return self.limit / self.reset_s

    def low(self, in_flight: int = 0) -> bool:
        """Few requests remain — fewer than the calls already in flight could spend —:
        pace at the budget's rate.
        """
        if self.remaining is None:
            return False
        floor = max(LOW_REMAINING, LOW_SHARE * (self.limit or 0.0), in_flight)
        return self.remaining <= floor


# The request budget's (limit, remaining, reset) headers: OpenAI's, then Anthropic's.
REQUEST_HEADERS = (
    ("x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"),
    (
        "anthropic-ratelimit-requests-limit",
        "anthropic-ratelimit-requests-remaining",
        "anthropic-ratelimit-requests-reset",
    ),
)


def rate_limit_info(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> RateLimitInfo:
    """The request budget from OpenAI-style or Anthropic-style headers (empty when none)."""
    if not headers:
        return RateLimitInfo()
    wall = time.time() if now is None else now
    for limit_name, remaining_name, reset_name in REQUEST_HEADERS:
        limit, remaining = header(headers, limit_name), header(headers, remaining_name)
        if limit is None and remaining is None:
            continue
        reset = header(headers, reset_name)
        return RateLimitInfo(
            limit=number(limit),
            remaining=number(remaining),
            reset_s=reset_s(reset, now=wall) if reset is not None else None,
        )
    return RateLimitInfo()


def number(text: str | None) -> float | None:
    """A header's number, or None."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None


class AdaptiveRate:
    """The requests per second one model may be sent now; None means unpaced.

    Never above the user's `ceiling` (--rpm). Starts unpaced without one: most endpoints
    have room, and the first 429 or a "few left" header sets a pace. After a cut the rate
    climbs back linearly to where it was over RECOVER_S, then probes above it slowly: the
    limit may have been a burst of someone else's, or ours may have been too cautious.

    Not every 429 is about pace: an overloaded provider answers some at random. When a cut
    leaves 429s as common as before it, they were not ours to fix: the run goes unpaced
    again and 429s only pause it (Retry-After) for NOISE_HOLD_S. Cutting on, the rate would
    decay towards nothing.
    """

    def __init__(self, *, ceiling: float | None) -> None:
        self.ceiling = ceiling
        self._learnt: float | None = None
        self._target = 0.0
        self._climb = 0.0
        self._cut_at = float("-inf")
        self._last_step = 0.0
        self._outcomes: deque[tuple[float, bool]] = deque()
        """(time, got a 429) of the calls of the last ADMITTED_WINDOW_S."""
        self._since_cut = [0, 0]
        """Replies and 429s since the last cut."""
        self._share_at_cut = 0.0
        self._cut_rate = 0.0
        self._ignore_until = float("-inf")

    @property
    def rate(self) -> float | None:
        """Requests per second allowed now."""
        if self._learnt is None:
            return self.ceiling
        return self._learnt if self.ceiling is None else min(self._learnt, self.ceiling)

    def on_reply(self, now: float, info: RateLimitInfo, *, in_flight: int = 0) -> None:
        """A call succeeded; its headers (if any) may set or lift the pace."""
        self._record(now, limited=False)
        if info.budget_per_s is not None:
            self._learnt = MARGIN * info.budget_per_s if info.low(in_flight) else None
            return
        if self._learnt is None:
            return
        elapsed = max(now - self._last_step, 0.0)
        self._last_step = now
        if self._target == math.inf:
            self._learnt *= 1.0 + SLOW_START_PER_S * elapsed
        elif self._learnt < self._target:
            self._learnt = min(self._learnt + self._climb * elapsed, self._target)
        else:
            self._learnt *= 1.0 + PROBE_PER_S * elapsed

    def on_rate_limited(self, now: float, info: RateLimitInfo, retry_after: float | None) -> None:
        """A call got a 429: cut the rate (once per burst of 429s)."""
        self._record(now, limited=True)
        if info.budget_per_s is not None:
            self._learnt = MARGIN * info.budget_per_s
            return
        if now < self._ignore_until or not self._may_cut(now):
            return
        if self._cut_did_not_help(self.rate):
            self._learnt = None
            self._ignore_until = now + NOISE_HOLD_S
            self._cut_at = float("-inf")
            return
        admitted = self.admitted_per_s(now)
        current = self.rate
        if current is not None:
            # Sending at `current` overshot: fall to what the server let through (halving at
            # most), and always below where we were; climb back towards just under it.
            cut = min(max(current / 2, MARGIN * admitted), MARGIN * current)
            # Climb back to what the server was seen to admit, not to where we overshot.
            target = max(cut, MARGIN * admitted) if admitted > 0 else MARGIN * current
        else:
            # The first 429 of an unpaced run says little about the limit: a second of
            # replies, or the wait until the next slot frees (a key already at its limit),
            # is a floor. Start there and grow fast (slow start) until the next 429.
            cut = max(MARGIN * admitted, 1.0 / retry_after if retry_after else 1.0)
            target = math.inf
        self._share_at_cut = self.limited_share()
        self._since_cut = [0, 0]
        self._learnt = self._cut_rate = max(cut, MIN_RATE)
        self._target = max(target, self._learnt)
        self._climb = 0.0 if target == math.inf else (self._target - self._learnt) / RECOVER_S
        self._cut_at = self._last_step = now

    def _record(self, now: float, *, limited: bool) -> None:
        self._outcomes.append((now, limited))
        while self._outcomes and self._outcomes[0][0] < now - ADMITTED_WINDOW_S:
            self._outcomes.popleft()
        self._since_cut[limited] += 1

    def _may_cut(self, now: float) -> bool:
        """Whether the last cut has had its chance: CUT_HOLD_S, and CUT_CALLS calls at the
        new pace (or CUT_WAIT_S, or most of them refused), so the 429s of calls already in
        flight do not cut again, and random refusals leave evidence before the next cut.
        """
        since = now - self._cut_at
        replies, limited = self._since_cut
        if since < CUT_HOLD_S:
            return False
        # Most calls since still refused: plainly still too fast, whatever the count.
        overshooting = limited >= 2 and limited >= replies
        return overshooting or replies + limited >= CUT_CALLS or since >= CUT_WAIT_S

    def _cut_did_not_help(self, current: float | None) -> bool:
        """The last cut left 429s about as common as before it, with the rate still near
        where the cut put it. Under a capacity limit a cut makes them rarer (their share is
        1 - capacity / rate); refusals at random keep their share whatever the pace.
        """
        replies, limited = self._since_cut
        calls = replies + limited
        if self._cut_at == float("-inf") or calls < NOISE_CALLS:
            return False
        if current is None or current > GROWN * self._cut_rate:
            return False  # the rate has grown since: these 429s may well be ours
        share = limited / calls
        return self._share_at_cut >= NOISE_SHARE and share >= NOISE_RATIO * self._share_at_cut

    def limited_share(self) -> float:
        """The share of the last seconds' calls that got a 429."""
        if not self._outcomes:
            return 0.0
        return sum(limited for _, limited in self._outcomes) / len(self._outcomes)

    def admitted_per_s(self, now: float) -> float:
        """Replies per second over the last few seconds."""
        recent = [
            t for t, limited in self._outcomes if not limited and t >= now - ADMITTED_WINDOW_S
        ]
        if len(recent) < 2:
            return 0.0
        # n replies span n - 1 gaps; a span under a second is too short to trust.
        return (len(recent) - 1) / max(now - recent[0], 1.0)
