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

A 429 also says whether every call of the model waits its Retry-After, or only the refused
one: a key at its limit refuses everyone, while an overloaded provider refuses a share at
random, and holding everyone for each of those stalls the run (issue 19).
"""

from __future__ import annotations

import math
import random
from collections import deque

from judgecli.judge.rate_headers import RateLimitInfo

BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0

# Pace below the provider's own refill rate: clocks drift and windows are counted on the
# provider's side.
MARGIN = 0.97
# The window over which the admitted rate is measured after a 429.
ADMITTED_WINDOW_S = 5.0
# After a cut, the 429s of calls already in flight at it must not cut again: the next cut
# waits until they are answered (or CUT_HOLD_S), then for CUT_CALLS calls at the new pace
# (or CUT_WAIT_S at a slow one, or most of them refused).
CUT_HOLD_S = 1.0
CUT_CALLS = 10
CUT_WAIT_S = 10.0
# After a cut: seconds to climb back to just under the rate that overshot, then how fast
# (share per second) to probe above it.
RECOVER_S = 10.0
PROBE_PER_S = 0.005
# Before the first cut that knew a rate: grow by this share per second.
SLOW_START_PER_S = 0.5
# A cut "did not help" when, over the calls that may cut again (at least two 429s among
# them) and with the rate not GROWN past the cut, 429s kept NOISE_RATIO of a share that was
# at least NOISE_SHARE between the previous cut and it; then the run goes unpaced for
# NOISE_HOLD_S.
NOISE_SHARE = 0.1
NOISE_RATIO = 0.5
GROWN = 1.1
NOISE_HOLD_S = 60.0
MIN_RATE = 0.05
"""One call per 20 s: the floor a rate can be cut to."""
# Over HOLD_SHARE of the last seconds' calls refused (HOLD_CALLS of them at least): the
# limit is not in doubt, and holding every call for a Retry-After costs less than the storm.
HOLD_SHARE = 0.5
HOLD_CALLS = 20


def backoff_s(retry: int) -> float:
    """Exponential backoff with full jitter: up to 0.5 s, 1 s, 2 s ... capped, randomised so
    a fleet of callers does not retry in lockstep.
    """
    return random.uniform(0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**retry))  # noqa: S311


class AdaptiveRate:
    """The requests per second one model may be sent now; None means unpaced.

    Never above the user's `ceiling` (--rpm). Starts unpaced without one: most endpoints
    have room, and the first 429 or a "few left" header sets a pace. After a cut the rate
    climbs back linearly to where it was over RECOVER_S, then probes above it slowly: the
    limit may have been a burst of someone else's, or ours may have been too cautious.

    Not every 429 is about pace: an overloaded provider answers some at random. So only a
    systematic 429 (see `systematic`) sets a pace on an unpaced run, and when a cut leaves
    429s as common as before it, they were not ours to fix: the run goes unpaced again for
    NOISE_HOLD_S, where only the refused calls wait. Cutting on, the rate would decay
    towards nothing.
    """

    def __init__(self, *, ceiling: float | None) -> None:
        self.ceiling = ceiling
        self._replied = False
        self._refused_since_reply = 0
        self._refusing_since = 0.0
        """When the first 429 since the last reply came."""
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
        """The share of 429s between the previous cut and the last (0 below two 429s)."""
        self._cut_rate = 0.0
        self._deep_cut = False
        self._in_flight_at_cut = 0
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

    def on_rate_limited(
        self, now: float, info: RateLimitInfo, retry_after: float | None, *, in_flight: int = 0
    ) -> bool:
        """A call got a 429: cut the rate (once per burst of 429s). True when the 429 is
        systematic — hold every call of the model for its Retry-After —, False when it is
        isolated: only the refused call waits. `in_flight`: the model's other calls sent and
        not yet answered.
        """
        self._record(now, limited=True)
        systematic = self.systematic(now, info, retry_after, in_flight=in_flight)
        if info.budget_per_s is not None:
            self._learnt = MARGIN * info.budget_per_s
            return systematic
        current = self.rate
        if current is None and not systematic:
            return False  # a 429 among replies, unpaced: no pace to correct
        if now < self._ignore_until or not self._may_cut(now):
            return systematic
        if self._cut_did_not_help(now, current):
            self._learnt = None
            self._ignore_until = now + NOISE_HOLD_S
            self._cut_at = float("-inf")
            return systematic
        admitted = self.admitted_per_s(now)
        replies, limited = self._since_cut
        if current is not None:
            # What got through of the calls sent at this pace since the last cut: the 5 s
            # window may hold replies from before, when more were let through.
            calls = replies + limited
            through = min(admitted, current * replies / calls) if calls >= CUT_CALLS else admitted
            # Sending at `current` overshot: fall to what the server let through (halving at
            # most), and always below where we were; climb back towards just under it.
            cut = min(max(current / 2, MARGIN * through), MARGIN * current)
            # Climb back to what the server was seen to admit, not to where we overshot.
            target = max(cut, MARGIN * admitted) if admitted > 0 else MARGIN * current
        else:
            # The first systematic 429 of an unpaced run says little about the limit: a
            # second of replies, or the wait until the next slot frees (a key already at
            # its limit), is a floor. Start there and grow fast (slow start) until the next.
            cut = max(MARGIN * admitted, 1.0 / retry_after if retry_after else 1.0)
            target = math.inf
        # The share since the previous cut, not over the window: the window may hold the
        # replies of a climb from well below the limit.
        self._share_at_cut = limited / (replies + limited) if limited >= 2 else 0.0
        self._since_cut = [0, 0]
        self._learnt = self._cut_rate = max(cut, MIN_RATE)
        # Only a cut to what got through (by the share refused and by the replies seen)
        # ends a capacity limit's 429s: a shallower one's staying says nothing of noise.
        self._deep_cut = current is not None and (
            self._cut_rate <= min(admitted, (1.0 - self._share_at_cut) * current / MARGIN)
        )
        self._target = max(target, self._learnt)
        self._climb = 0.0 if target == math.inf else (self._target - self._learnt) / RECOVER_S
        self._cut_at = self._last_step = now
        self._in_flight_at_cut = in_flight
        return systematic

    def systematic(
        self, now: float, info: RateLimitInfo, retry_after: float | None, *, in_flight: int = 0
    ) -> bool:
        """Whether the 429 just recorded says the model refuses every call, not a share:
        - its headers say no request remains;
        - no call has got a reply yet (the probe's 429: a key already at its limit);
        - nothing but 429s since the last reply (two at least), for as long as this one's
          Retry-After, and no other call in flight: every answer lately a refusal, and none
          pending that could say otherwise;
        - over HOLD_SHARE of the last seconds' calls (HOLD_CALLS or more) were refused,
          counting those still in flight as not refused.
        A refusal comes back faster than a reply (after a burst of sends, its random 429s
        are all in before any reply), hence the calls in flight; and with few calls two
        random 429s in a row are common, hence the Retry-After.
        """
        if info.remaining is not None and info.remaining <= 0:
            return True
        if not self._replied:
            return True
        quiet = now - self._refusing_since >= (retry_after or 0.0)
        if self._refused_since_reply > 1 and in_flight == 0 and quiet:
            return True
        calls = len(self._outcomes)
        refused = sum(limited for _, limited in self._outcomes)
        return calls >= HOLD_CALLS and refused > HOLD_SHARE * (calls + in_flight)

    def _record(self, now: float, *, limited: bool) -> None:
        self._outcomes.append((now, limited))
        while self._outcomes and self._outcomes[0][0] < now - ADMITTED_WINDOW_S:
            self._outcomes.popleft()
        self._since_cut[limited] += 1
        if limited:
            if not self._refused_since_reply:
                self._refusing_since = now
            self._refused_since_reply += 1
        else:
            self._replied = True
            self._refused_since_reply = 0

    def _may_cut(self, now: float) -> bool:
        """Whether the last cut has had its chance: the calls in flight at it answered (or
        CUT_HOLD_S), and CUT_CALLS calls at the new pace (or CUT_WAIT_S, or most of them
        refused), so the 429s of calls already in flight do not cut again, and random
        refusals leave evidence before the next cut.
        """
        since = now - self._cut_at
        replies, limited = self._since_cut
        if since < CUT_HOLD_S and replies + limited <= self._in_flight_at_cut:
            return False
        # Most calls since still refused: plainly still too fast, whatever the count.
        overshooting = limited >= 2 and limited >= replies
        return overshooting or replies + limited >= CUT_CALLS or since >= CUT_WAIT_S

    def _cut_did_not_help(self, now: float, current: float | None) -> bool:
        """The last cut left 429s about as common as before it, with the rate still near
        where the cut put it. Under a capacity limit a cut makes them rarer (their share is
        1 - capacity / rate); refusals at random keep their share whatever the pace.
        """
        replies, limited = self._since_cut
        calls = replies + limited
        if self._cut_at == float("-inf") or limited < 2:
            return False
        if calls < CUT_CALLS and now - self._cut_at < CUT_WAIT_S:
            return False  # too little evidence yet (a slow pace has it after CUT_WAIT_S)
        if not self._deep_cut:
            return False
        if current is None or current > GROWN * self._cut_rate:
            return False  # the rate has grown since: these 429s may well be ours
        share = limited / calls
        return self._share_at_cut >= NOISE_SHARE and share >= NOISE_RATIO * self._share_at_cut

    def admitted_per_s(self, now: float) -> float:
        """Replies per second over the last few seconds."""
        recent = [
            t for t, limited in self._outcomes if not limited and t >= now - ADMITTED_WINDOW_S
        ]
        if len(recent) < 2:
            return 0.0
        # n replies span n - 1 gaps; a span under a second is too short to trust.
        return (len(recent) - 1) / max(now - recent[0], 1.0)
