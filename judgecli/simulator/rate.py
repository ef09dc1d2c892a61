"""The simulator's server-side rate limit: a sliding window of admitted requests, the
``Retry-After`` of its 429s, OpenAI's ``x-ratelimit-*`` headers, and per-second tallies of
what it answered (for tests of client-side pacing).

The window counts the requests a server admitted (a 429 it answered does not count, as
OpenAI does not charge rejected requests against the limit). Prefilled, it starts full with
its entries spread evenly over the previous window — a key another job used in the last
minute — so slots free up at the limit's steady rate, one every ``window / limit`` seconds.
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass

from judgecli.simulator.config import RecordedRequest, rate_text

LIMIT_HEADER = "x-ratelimit-limit-requests"
REMAINING_HEADER = "x-ratelimit-remaining-requests"
RESET_HEADER = "x-ratelimit-reset-requests"


def go_duration(seconds: float) -> str:
    """Format a duration as OpenAI's reset headers do (Go's ``time.Duration``), to the ms.

    Examples: ``0s``, ``12ms``, ``1s``, ``8.64s``, ``6m0s``, ``1h0m0s``.
    """
    ms = max(0, round(seconds * 1000))
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    whole, fraction = divmod(rest, 1000)
    text = f"{whole}.{fraction:03d}".rstrip("0").rstrip(".") + "s"
    # Go writes the larger units once one is present: 1h0m5s, 6m0s.
    if hours:
        return f"{hours}h{minutes}m{text}"
    return f"{minutes}m{text}" if minutes else text


class RateWindow:
    """Requests admitted in the last ``window_s`` seconds, at most ``limit`` of them.

    Not thread-safe: the simulator's state lock guards every call.
    """

    def __init__(self, limit: int | None, window_s: float, *, prefill: bool) -> None:
        self.limit = limit
        self.window_s = window_s
        self.prefill = prefill
        self._times: collections.deque[float] = collections.deque()

    def __str__(self) -> str:
        return rate_text(self.limit, self.window_s)

    def restart(self, now: float) -> None:
        """Empty the window, or fill it as if the limit's rate had been used up to ``now``."""
        self._times.clear()
        if self.limit is not None and self.prefill:
            step = self.window_s / self.limit
            # The oldest entry expires one step from now, the newest a full window from now.
            self._times.extend(now - self.window_s + k * step for k in range(1, self.limit + 1))

    def wait(self, now: float) -> float | None:
        """Seconds until a slot frees (the ``Retry-After`` of a 429), or None when one is free."""
        if self.limit is None:
            return None
        self._expire(now)
        if len(self._times) < self.limit:
            return None
        # Rounded up to 0.1 s, so a client that waits exactly this long finds the slot free;
        # rounded to 1 µs first, so float noise (0.2000000000000028) does not add 0.1 s.
        tenths = round((self._times[0] + self.window_s - now) * 10, 5)
        return max(0.1, math.ceil(tenths) / 10)

    def admit(self, now: float) -> None:
        """Count a request the server answers (whatever it answers, a 429 of the limit aside)."""
        if self.limit is not None:
            self._times.append(now)

    def headers(self, now: float) -> dict[str, str]:
        """OpenAI's request-limit headers as of ``now`` (none when there is no limit).

        ``reset`` is the time until the window is empty again, which is what OpenAI's
        documentation means by "resets to its initial state" — not the wait for one slot.
        """
        if self.limit is None:
            return {}
        self._expire(now)
        reset = self._times[-1] + self.window_s - now if self._times else 0.0
        return {
            LIMIT_HEADER: str(self.limit),
            REMAINING_HEADER: str(max(0, self.limit - len(self._times))),
            RESET_HEADER: go_duration(reset),
        }

    def _expire(self, now: float) -> None:
        while self._times and self._times[0] <= now - self.window_s:
            self._times.popleft()


@dataclass(frozen=True)
class StatusBin:
    """What the simulator answered to the requests that arrived in one time slot."""

    start: float
    """Seconds from the server's start (or last reset) to the slot's start."""
    ok: int
    """HTTP 200 replies."""
    limited: int
    """HTTP 429 replies (the rpm limit, random 429s and scripted ones)."""
    other: int
    """Every other outcome: errors, format rejections, dropped connections."""


def status_bins(records: list[RecordedRequest], started: float, bin_s: float) -> list[StatusBin]:
    """Tally ``records`` into consecutive ``bin_s`` slots from ``started``, empty slots included.

    Requests that arrived before ``started`` (there are none after a reset) are left out.
    """
    if bin_s <= 0:
        raise ValueError(f"bin_s must be positive, got {bin_s}")
    counts: dict[int, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for record in records:
        if record.time < started:
            continue
        kind = {200: "ok", 429: "limited"}.get(record.status, "other")
        counts[int((record.time - started) // bin_s)][kind] += 1
    last = max(counts, default=-1)
    return [
        StatusBin(i * bin_s, counts[i]["ok"], counts[i]["limited"], counts[i]["other"])
        for i in range(last + 1)
    ]
