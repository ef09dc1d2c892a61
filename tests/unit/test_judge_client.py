from __future__ import annotations

from judgecli.judge.client import JudgeRequest


def test_request_key_is_canonical_and_covers_the_endpoint():
    a = JudgeRequest(model="m", messages=[{"role": "user", "content": "x"}], temperature=0)
    b = JudgeRequest(model="m", messages=[{"content": "x", "role": "user"}], temperature=0.0)
    assert a.key("http://h/v1") == b.key("http://h/v1")
    assert a.key("http://h/v1") != a.key("http://other/v1")
    assert a.key(None) != a.model_copy(update={"max_tokens": 5}).key(None)
