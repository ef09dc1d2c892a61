"""The server-side rate limit: a configurable sliding window, a window that starts full,
OpenAI's x-ratelimit-* headers, and per-slot tallies of what was answered."""

from __future__ import annotations

import re
import time

import pytest
from pydantic import ValidationError

from judgecli.simulator.config import JudgeProfile, RecordedRequest
from judgecli.simulator.rate import RateWindow, go_duration, status_bins
from judgecli.simulator.server import SimulatorConfig, SimulatorServer, StatusBin
from tests.unit.simulator.requests import JSON_SCHEMA_FORMAT, post, request

RATE_HEADERS = (
    "x-ratelimit-limit-requests",
    "x-ratelimit-remaining-requests",
    "x-ratelimit-reset-requests",
)
# Go's time.Duration format, as OpenAI sends it: 12ms, 1s, 8.64s, 6m0s, 1h0m0s.
GO_DURATION = re.compile(r"^(0s|\d+ms|(\d+h)?(\d+m)?\d+(\.\d+)?s)$")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(0, "0s", id="zero"),
        pytest.param(0.0004, "0s", id="under-half-a-ms"),
        pytest.param(0.012, "12ms", id="milliseconds"),
        pytest.param(1, "1s", id="one-second"),
        pytest.param(8.64, "8.64s", id="fraction"),
        pytest.param(59.9996, "1m0s", id="rounds-up-to-a-minute"),
        pytest.param(90.5, "1m30.5s", id="minutes"),
        pytest.param(360, "6m0s", id="openai-docs-example"),
        pytest.param(3605, "1h0m5s", id="hours"),
        pytest.param(-1, "0s", id="negative"),
    ],
)
def test_reset_durations_are_formatted_as_openai_sends_them(seconds, text):
    assert go_duration(seconds) == text
    assert GO_DURATION.match(text)


def test_a_window_refuses_the_request_over_its_limit_until_the_oldest_expires():
    window = RateWindow(3, 6.0, prefill=False)
    for now in (0.0, 1.0, 2.0):
        assert window.wait(now) is None
        window.admit(now)

    assert window.wait(2.5) == 3.5  # the entry at 0 expires at 6
    assert window.headers(2.5) == {
        "x-ratelimit-limit-requests": "3",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "5.5s",  # the entry at 2 expires at 8
    }
    assert window.wait(6.0) is None
    assert window.headers(8.0)["x-ratelimit-remaining-requests"] == "3"
    assert window.headers(8.0)["x-ratelimit-reset-requests"] == "0s"


def test_a_prefilled_window_frees_one_slot_per_limit_interval():
    window = RateWindow(30, 6.0, prefill=True)
    window.restart(100.0)

    assert window.headers(100.0)["x-ratelimit-remaining-requests"] == "0"
    assert window.wait(100.0) == pytest.approx(0.2)
    # A client that sends whenever a slot is free gets the limit's steady rate, no burst.
    admitted = []
    for tick in range(610):  # every 10 ms for 6.1 s: the last prefilled slot frees at 6 s
        now = 100.0 + tick / 100 + 0.005
        if window.wait(now) is None:
            window.admit(now)
            admitted.append(now)
    assert len(admitted) == 30
    gaps = [b - a for a, b in zip(admitted, admitted[1:], strict=False)]
    assert all(g == pytest.approx(0.2, abs=0.011) for g in gaps)


def test_without_a_limit_there_is_no_wait_and_no_header():
    window = RateWindow(None, 60.0, prefill=True)
    window.restart(0.0)
    window.admit(0.0)

    assert window.wait(0.0) is None
    assert window.headers(0.0) == {}


def test_prefill_without_an_rpm_limit_is_rejected():
    with pytest.raises(ValidationError, match="rate_limit_prefill needs an rpm limit"):
        SimulatorConfig(rate_limit_prefill=True)
    with pytest.raises(ValidationError):
        SimulatorConfig(rpm=10, rate_limit_window_s=0)


def record(at: float, status: int) -> RecordedRequest:
    return RecordedRequest(time=at, model="sim", body={}, headers={}, status=status)


def test_status_bins_tally_each_slot_from_the_start_including_empty_ones():
    records = [record(9.0, 200), record(10.2, 200), record(10.9, 429), record(12.5, 500)]
    records.append(record(13.99, 0))

    assert status_bins(records, 10.0, 1.0) == [
        StatusBin(0.0, ok=1, limited=1, other=0),
        StatusBin(1.0, ok=0, limited=0, other=0),
        StatusBin(2.0, ok=0, limited=0, other=1),
        StatusBin(3.0, ok=0, limited=0, other=1),
    ]
    assert status_bins([], 10.0, 1.0) == []
    with pytest.raises(ValueError, match="bin_s must be positive"):
        status_bins(records, 10.0, 0)


# --- Over the socket ------------------------------------------------------------------------


def test_every_reply_under_a_limit_carries_the_openai_rate_headers():
    with SimulatorServer(SimulatorConfig(rpm=3)) as server:
        replies = [post(server.url, request()) for _ in range(4)]

    assert [status for status, _, _ in replies] == [200, 200, 200, 429]
    assert [h["x-ratelimit-remaining-requests"] for _, h, _ in replies] == ["2", "1", "0", "0"]
    for _, headers, _ in replies:
        assert headers["x-ratelimit-limit-requests"] == "3"
        assert GO_DURATION.match(headers["x-ratelimit-reset-requests"])
    limited = replies[3][1]
    assert 0 < float(limited["retry-after"]) <= 60


def test_refused_and_scripted_replies_carry_the_headers_too():
    config = SimulatorConfig(rpm=10, profiles={"llama": JudgeProfile(formats="llama-cpp")})
    with SimulatorServer(config) as server:
        server.fail_next(503)
        scripted = post(server.url, request())
        refused = post(server.url, request(model="llama", response_format=JSON_SCHEMA_FORMAT))

    assert (scripted[0], scripted[1]["x-ratelimit-remaining-requests"]) == (503, "9")
    assert (refused[0], refused[1]["x-ratelimit-remaining-requests"]) == (500, "8")


def test_headers_can_be_turned_off_leaving_retry_after_alone():
    with SimulatorServer(SimulatorConfig(rpm=1, rate_limit_headers=False)) as server:
        ok = post(server.url, request())
        limited = post(server.url, request())

    assert (ok[0], limited[0]) == (200, 429)
    assert not any(name in ok[1] or name in limited[1] for name in RATE_HEADERS)
    assert "retry-after" in limited[1]


def test_no_limit_means_no_rate_headers():
    with SimulatorServer(SimulatorConfig()) as server:
        _, headers, _ = post(server.url, request())

    assert not any(name in headers for name in RATE_HEADERS)


def test_a_short_window_frees_its_slots_after_retry_after():
    config = SimulatorConfig(rpm=2, rate_limit_window_s=1.0)
    with SimulatorServer(config) as server:
        first = [post(server.url, request())[0] for _ in range(3)]
        _, headers, reply = post(server.url, request())
        time.sleep(float(headers["retry-after"]))
        after = post(server.url, request())[0]

    assert first == [200, 200, 429]
    assert "2 requests per 1 s" in reply["error"]["message"]
    assert float(headers["retry-after"]) <= 1.0
    assert after == 200


def test_a_prefilled_window_refuses_the_first_request_until_a_slot_frees():
    # 2 per minute: the first prefilled slot frees 30 s after the start, far beyond any
    # delay between starting the server and its first request.
    config = SimulatorConfig(rpm=2, rate_limit_prefill=True)
    with SimulatorServer(config) as server:
        # The request arrives between these two readings: its Retry-After (the wait for the
        # first slot, 30 s after the start, rounded up to 0.1 s) is bounded by them exactly,
        # whatever the machine's load.
        sent_after = time.monotonic() - server.started
        status, headers, _ = post(server.url, request())
        replied_after = time.monotonic() - server.started
        server.reset()  # a reset fills the window again
        again = post(server.url, request())[0]

    assert (status, again) == (429, 429)
    retry_after = float(headers["retry-after"])
    assert 0 < retry_after <= 30.1 - sent_after
    assert retry_after >= 30 - replied_after
    assert headers["x-ratelimit-remaining-requests"] == "0"


def test_without_prefill_the_first_request_passes():
    with SimulatorServer(SimulatorConfig(rpm=2)) as server:
        assert post(server.url, request())[0] == 200


def test_the_server_tallies_its_answers_per_slot():
    with SimulatorServer(SimulatorConfig(rpm=2)) as server:
        for _ in range(5):
            post(server.url, request())
        bins = server.status_bins(bin_s=3600)
        statuses = [r.status for r in server.requests]

    assert statuses == [200, 200, 429, 429, 429]
    assert bins == [StatusBin(0.0, ok=2, limited=3, other=0)]
    assert all(r.time >= server.started for r in server.requests)
