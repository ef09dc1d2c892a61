from __future__ import annotations

import email.utils
import time

import pytest

from judgecli.judge import JudgeRequest, backoff_s, describe, retry_after_s


class HeaderError(Exception):
    def __init__(self, headers):
        super().__init__("rate limited")
        self.litellm_response_headers = headers


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        pytest.param({"retry-after": "2"}, 2.0, id="seconds"),
        pytest.param({"retry-after": "1.5"}, 1.5, id="fractional-seconds"),
        pytest.param({"retry-after-ms": "250"}, 0.25, id="milliseconds-win"),
        pytest.param({"retry-after": "9999"}, 120.0, id="capped"),
        pytest.param({"retry-after": "-3"}, 0.0, id="negative-is-zero"),
        pytest.param({}, None, id="absent"),
        pytest.param(None, None, id="no-headers"),
    ],
)
def test_retry_after_is_read_from_the_error_headers(headers, expected):
    assert retry_after_s(HeaderError(headers)) == expected


def test_retry_after_as_an_http_date():
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 28 <= retry_after_s(HeaderError({"retry-after": when})) <= 31


def test_backoff_grows_exponentially_and_is_capped():
    for retry in range(12):
        assert 0 <= backoff_s(retry) <= min(30.0, 0.5 * 2**retry)


def test_request_key_is_canonical_and_covers_the_endpoint():
    a = JudgeRequest(model="m", messages=[{"role": "user", "content": "x"}], temperature=0)
    b = JudgeRequest(model="m", messages=[{"content": "x", "role": "user"}], temperature=0.0)
    assert a.key("http://h/v1") == b.key("http://h/v1")
    assert a.key("http://h/v1") != a.key("http://other/v1")
    assert a.key(None) != a.model_copy(update={"max_tokens": 5}).key(None)


def test_describe_gives_one_line_with_the_status():
    class Err(Exception):
        status_code = 401
        message = "litellm.AuthenticationError: bad key\nGive Feedback / Get Help"

    assert describe(Err()) == "HTTP 401 Err: AuthenticationError: bad key"
