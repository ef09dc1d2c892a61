"""The circuit breaker: an endpoint that cannot serve the run stops it on the first sign."""

from __future__ import annotations

import pytest

from judgecli.errors import ExitCode, JudgeUnavailableError
from judgecli.judge.breaker import CONSECUTIVE_FAILURES, CallFailure, CircuitBreaker
from judgecli.judge.failures import Endpoint, FailureKind

HERE = Endpoint(model="openai/sim", api_base="http://127.0.0.1:9/v1")


def fail(kind: FailureKind, text: str = "boom", status: int | None = 500) -> CallFailure:
    return CallFailure(kind=kind, status=status, text=text, endpoint=HERE)


@pytest.mark.parametrize("kind", [FailureKind.ENDPOINT, FailureKind.UNREACHABLE])
def test_a_fatal_first_failure_trips_at_once_with_the_error_verbatim(kind):
    breaker = CircuitBreaker()
    with pytest.raises(JudgeUnavailableError) as caught:
        breaker.failure(fail(kind, "HTTP 500 Connection error. (refused)"))
    err = caught.value
    assert err.exit_code is ExitCode.INCOMPLETE  # an outage is never a failed gate
    assert (
        err.message == "the judge openai/sim cannot be used: HTTP 500 Connection error. (refused)"
    )
    assert err.hint
    with pytest.raises(JudgeUnavailableError):  # every later call fails fast
        breaker.check()


def test_after_successes_one_fatal_failure_is_not_enough():
    breaker = CircuitBreaker()
    breaker.success()
    breaker.failure(fail(FailureKind.ENDPOINT, status=401))
    breaker.failure(fail(FailureKind.ENDPOINT, status=401))
    with pytest.raises(JudgeUnavailableError):
        breaker.failure(fail(FailureKind.ENDPOINT, status=401))


def test_the_same_refusal_on_the_first_calls_trips():
    breaker = CircuitBreaker()
    breaker.failure(fail(FailureKind.REQUEST, "temperature unsupported", 400))
    breaker.failure(fail(FailureKind.REQUEST, "temperature unsupported", 400))
    with pytest.raises(JudgeUnavailableError, match="temperature unsupported"):
        breaker.failure(fail(FailureKind.REQUEST, "temperature unsupported", 400))


def test_per_case_refusals_never_look_like_an_outage_until_the_streak_limit():
    breaker = CircuitBreaker()
    for _ in range(CONSECUTIVE_FAILURES - 1):
        breaker.failure(fail(FailureKind.REFUSED, "context window exceeded", 400))
    breaker.check()
    with pytest.raises(JudgeUnavailableError):
        breaker.failure(fail(FailureKind.REFUSED, "context window exceeded", 400))


def test_a_success_resets_the_streak():
    breaker = CircuitBreaker()
    breaker.success()
    for _ in range(3):
        for _ in range(CONSECUTIVE_FAILURES - 1):
            breaker.failure(fail(FailureKind.TRANSIENT, "gave up after 5 attempts"))
        breaker.success()
    breaker.check()


def test_the_same_transient_error_on_every_first_call_trips():
    breaker = CircuitBreaker()
    breaker.failure(fail(FailureKind.TRANSIENT, "HTTP 500 boom (gave up after 5 attempts)"))
    breaker.failure(fail(FailureKind.TRANSIENT, "HTTP 500 boom (gave up after 5 attempts)"))
    with pytest.raises(JudgeUnavailableError):
        breaker.failure(fail(FailureKind.TRANSIENT, "HTTP 500 boom (gave up after 5 attempts)"))


def test_the_first_error_of_the_streak_is_reported_not_the_last():
    breaker = CircuitBreaker()
    breaker.success()
    breaker.failure(fail(FailureKind.TRANSIENT, "first"))
    for _ in range(CONSECUTIVE_FAILURES - 2):
        breaker.failure(fail(FailureKind.TRANSIENT, "later"))
    with pytest.raises(JudgeUnavailableError, match="cannot be used: first$"):
        breaker.failure(fail(FailureKind.TRANSIENT, "last"))
