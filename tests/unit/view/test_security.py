"""Who may reach the viewer and write through it (view/security.py): loopback by default,
an access token anywhere else, the Host header naming this server. Issue 33.
"""

from __future__ import annotations

import pytest

from judgecli.view.security import Tokens, loopback, same


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("192.168.1.5", False),
        ("example.com", False),
        ("::", False),
    ],
)
def test_loopback_addresses_are_told_from_the_others(host: str, expected: bool) -> None:
    assert loopback(host) is expected


def test_a_loopback_server_needs_no_access_token_and_any_other_does() -> None:
    assert Tokens("127.0.0.1").access is None
    assert Tokens("0.0.0.0").access is not None
    assert Tokens("0.0.0.0").access != Tokens("0.0.0.0").access  # new each start


def test_write_tokens_are_new_for_each_server_and_long() -> None:
    a, b = Tokens("127.0.0.1"), Tokens("127.0.0.1")
    assert a.write != b.write
    assert len(a.write) >= 32


@pytest.mark.parametrize(
    ("header", "allowed"),
    [
        pytest.param("127.0.0.1:8650", True, id="loopback-address"),
        pytest.param("localhost:8650", True, id="localhost"),
        pytest.param("[::1]:8650", True, id="ipv6-loopback"),
        pytest.param("127.0.0.1:9999", False, id="another-port"),
        pytest.param("evil.example:8650", False, id="dns-rebinding-name"),
        pytest.param("127.0.0.1", False, id="no-port"),
        pytest.param(None, False, id="no-host"),
    ],
)
def test_a_loopback_server_answers_only_requests_to_its_own_address(header, allowed) -> None:
    assert Tokens("127.0.0.1").host_allowed(header, 8650) is allowed


def test_tokens_compare_whole() -> None:
    assert same("abc", "abc")
    assert not same("ab", "abc")
    assert not same(None, "abc")
    assert not same("", "abc")
