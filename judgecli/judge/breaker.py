"""The circuit breaker: stop a run at once when its judge endpoint cannot serve it.

Without it, a missing key, a wrong --api-base or a dead server failed every case after a
full round of retries and the run ended "0 of N graded" minutes later — under a gate, as
a FAIL. The breaker trips on the first sign that no call can succeed, and every call after
that fails fast with the same error:
- the first finished call fails in a way no retry mends (key, provider, URL, model,
  nothing listening), before any call succeeded;
- the first `SAME_ERROR_CALLS` calls all fail with the same error (a parameter the model
  refuses, say) and none succeeded;
- `CONSECUTIVE_FAILURES` calls in a row fail, whatever the reason (an endpoint that died
  mid-run).
Invalid verdicts are not call failures: a model that answers badly is the failure
policy's business (--max-failures), not the breaker's. Other checks of the first calls
(a judge that gives no logprobs) stop the run through it too (`stop`), so that every call
after them fails fast with their error.
"""

from __future__ import annotations

from dataclasses import dataclass

from judgecli.errors import JudgeError, JudgeUnavailableError
from judgecli.judge.failures import Endpoint, FailureKind, likely_fix

SAME_ERROR_CALLS = 3
CONSECUTIVE_FAILURES = 10
# Kinds that condemn the endpoint on the first occurrence (before any success).
FATAL = frozenset({FailureKind.ENDPOINT, FailureKind.UNREACHABLE})
# After a success, a fatal kind must repeat this often in a row (a key revoked mid-run).
FATAL_AFTER_SUCCESS = 3
# Per-case refusals whose text differs case by case: never "the same error" on purpose.
PER_CASE = frozenset({FailureKind.REFUSED})


@dataclass(frozen=True)
class CallFailure:
    """One call that failed for good, as the breaker sees it."""

    kind: FailureKind
    status: int | None
    text: str
    """One line, the server's words in full (secrets scrubbed)."""
    endpoint: Endpoint


class CircuitBreaker:
    """Shared by every call of a run; `check` raises once it has tripped."""

    def __init__(self) -> None:
        self.successes = 0
        self._first: CallFailure | None = None
        self._streak: list[CallFailure] = []
        self._tripped: JudgeError | None = None

    def check(self) -> None:
        """Raise the trip error if the breaker is open (call before every send)."""
        if self._tripped is not None:
            raise self._tripped

    def stop(self, error: JudgeError) -> None:
        """Stop the run with `error` (raised now, and by every `check` after)."""
        self.check()
        self._tripped = error
        raise error

    def success(self) -> None:
        """A call got a reply."""
        self.successes += 1
        self._streak.clear()

    def failure(self, failure: CallFailure) -> None:
        """A call failed for good; raise JudgeUnavailableError when that trips the breaker."""
        self.check()
        self._first = self._first or failure
        self._streak.append(failure)
        if self._trips(failure):
            first = self._first if self.successes == 0 else self._streak[0]
            self._tripped = JudgeUnavailableError(
                f"the judge {first.endpoint.model} cannot be used: {first.text}",
                hint=likely_fix(first.kind, first.status, first.text, first.endpoint),
            )
            raise self._tripped

    def _trips(self, failure: CallFailure) -> bool:
        streak = self._streak
        if failure.kind in FATAL:
            fatal_run = len(streak) >= FATAL_AFTER_SUCCESS and all(f.kind in FATAL for f in streak)
            return self.successes == 0 or fatal_run
        if len(streak) >= CONSECUTIVE_FAILURES:
            return True
        same = len(streak) >= SAME_ERROR_CALLS and len({(f.kind, f.text) for f in streak}) == 1
        return self.successes == 0 and same and failure.kind not in PER_CASE
