"""What a provider's headers say about its rate limits: how long a 429 asks to wait
(`Retry-After`, `retry-after-ms`, an HTTP date) and the request budget (OpenAI's
`x-ratelimit-*-requests`, Anthropic's `anthropic-ratelimit-requests-*`), read as
`RateLimitInfo` for the pacing (pacing.py). Pure: the wall clock can be passed in.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

MAX_RETRY_AFTER_S = 120.0
# Headers say "few left" below this many requests (or this share of the limit): pace then.
LOW_REMAINING = 8
LOW_SHARE = 0.1


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
        (the pace is pacing.MARGIN * limit / reset and reset = (limit - remaining) / r); for a
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
