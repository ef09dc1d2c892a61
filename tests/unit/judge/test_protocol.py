from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from judgecli.judge.protocol import JudgeRequest


def test_request_key_is_canonical_and_covers_the_endpoint():
    a = JudgeRequest(model="m", messages=[{"role": "user", "content": "x"}], temperature=0)
    b = JudgeRequest(model="m", messages=[{"content": "x", "role": "user"}], temperature=0.0)
    assert a.key("http://h/v1") == b.key("http://h/v1")
    assert a.key("http://h/v1") != a.key("http://other/v1")
    assert a.key(None) != a.model_copy(update={"max_tokens": 5}).key(None)


# A request and the key judge has always given it: a change here would make every reply
# cache a user holds miss (each re-run paying again), so the key is pinned, not derived.
PINNED_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "verdict",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {
                "reasoning": {"type": "string"},
                "score": {"type": "integer", "enum": [1, 2, 3, 4]},
            },
            "required": ["reasoning", "score"],
            "additionalProperties": False,
        },
    },
}
PINNED_MESSAGES = [
    {"role": "system", "content": 'Grade it. Ünïcode ✓ "quotes" \\ back'},
    {"role": "user", "content": "<output>\n42\n</output>"},
]


def test_request_keys_are_those_of_earlier_versions():
    plain = JudgeRequest(
        model="openai/sim",
        messages=PINNED_MESSAGES,
        temperature=0.0,
        max_tokens=600,
        response_format=PINNED_FORMAT,
    )
    repeated = JudgeRequest(
        model="openai/sim", messages=PINNED_MESSAGES, temperature=0.7, repeat=2, top_logprobs=5
    )
    api = "http://127.0.0.1:8000/v1"
    assert plain.key(api) == "a522aab986c37f79a270d6b647ecc05f47f6721631a5976688ea04929e5d50a5"
    assert plain.key(None) == "29dae60d1258f9395f0d8f9867574a6a1e2e00ba8e271ca9cd06ab3f3c8a55e7"
    assert repeated.key(api) == "110682e4647009784540cba180e98f2b26ccf2af84575dc21000c880db503442"


def reference_key(request: JudgeRequest, api_base: str | None) -> str:
    """The key as one json.dumps of the whole body: what JudgeRequest.key must equal."""
    body: dict[str, Any] = {
        "model": request.model,
        "messages": request.messages,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "response_format": request.response_format,
        "api_base": api_base,
    }
    if request.repeat:
        body["repeat"] = request.repeat
    if request.top_logprobs:
        body["top_logprobs"] = request.top_logprobs
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


# Small pools, so that heads and schemas repeat (the kept states are used) and differ.
TEXTS = ["", "Grade it.", 'q "x" \\ y', "Ünïcode ✓ 🚀", "line\nbreak\ttab\x00", "</output>"]
FORMATS = [None, PINNED_FORMAT, {"type": "json_object"}, {"type": "json_schema", "x": [1.5]}]


def random_request(rng: random.Random) -> JudgeRequest:
    messages = [
        {"role": rng.choice(["system", "user", "assistant"]), "content": rng.choice(TEXTS)}
        for _ in range(rng.choice([0, 1, 2, 2, 3, 4]))
    ]
    if messages and rng.random() < 0.2:
        messages[0]["name"] = rng.choice(TEXTS)
    return JudgeRequest(
        model=rng.choice(["openai/sim", "m", "anthropic/claude ✓"]),
        messages=messages,
        temperature=rng.choice([0.0, 0.7, 1, 1e-7]),
        max_tokens=rng.choice([None, 1, 600]),
        response_format=rng.choice(FORMATS),
        repeat=rng.choice([0, 0, 1, 3]),
        top_logprobs=rng.choice([None, 0, 5]),
    )


def test_request_keys_equal_one_dump_of_the_whole_body():
    rng = random.Random(19)
    for _ in range(3000):
        request = random_request(rng)
        api = rng.choice([None, "http://127.0.0.1:8000/v1", "http://h/ü"])
        assert request.key(api) == reference_key(request, api), request
