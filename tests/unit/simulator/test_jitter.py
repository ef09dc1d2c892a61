"""Per-call jitter (issue 17, repeated judging): a simulated judge whose verdicts are, with
a known probability, uniform random guesses drawn anew for each identical request, yet the
same multiset of replies on every fresh server."""

from __future__ import annotations

import collections
import json
import math
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from judgecli.cli.main import app
from judgecli.errors import ConfigError
from judgecli.simulator.config import JudgeProfile, SimulatorConfig
from judgecli.simulator.jitter import GUESS_REASONING, request_key
from judgecli.simulator.profiles import parse_profiles
from judgecli.simulator.replies import Replier
from judgecli.simulator.server import SimulatorServer
from judgecli.simulator.truth import load_truth
from judgecli.simulator.verdicts import verdict_content
from tests.unit.simulator.requests import ANSWER, QUESTION, SCHEMA, post

# Two-sided 99.9% normal quantile: a binomial count outside mean +- Z sd fails 1 run in 1000
# (and never here: every draw is seeded).
Z_999 = 3.2905

BINARY: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "choice": {"type": "string", "enum": ["yes", "no"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
}
PAIRWISE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "winner": {"type": "string", "enum": ["A", "B", "tie"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
}
MIXED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "points": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
        "share": {"type": "number", "minimum": 0, "maximum": 1},
        "helpful": {"type": "boolean"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
}


def judge_request(
    schema: dict[str, Any] | None, *, answer: str = ANSWER, model: str = "sim"
) -> dict[str, Any]:
    """A judge request for ``answer`` with ``schema`` as its json_schema response format."""
    user = f"<input>\n{QUESTION}\n</input>\n<output>\n{answer}\n</output>"
    body: dict[str, Any] = {
        "model": model,
        "messages": [
            {"role": "system", "content": "You are a strict grader."},
            {"role": "user", "content": user},
        ],
    }
    if schema is not None:
        json_schema = {"name": "verdict", "schema": schema, "strict": True}
        body["response_format"] = {"type": "json_schema", "json_schema": json_schema}
    return body


def pairwise_request(first: str, second: str) -> dict[str, Any]:
    body = judge_request(PAIRWISE)
    body["messages"][1]["content"] = (
        f"<input>\n{QUESTION}\n</input>\n"
        f"<output_a>\n{first}\n</output_a>\n<output_b>\n{second}\n</output_b>"
    )
    return body


def contents(replier: Replier, config: SimulatorConfig, bodies: list[dict[str, Any]]) -> list[str]:
    """The reply content to each body, answered in order by ``replier`` as ``config``'s judge."""
    return [
        replier.completion(body, config.settings_for(str(body["model"])))["choices"][0]["message"][
            "content"
        ]
        for body in bodies
    ]


def verdicts(config: SimulatorConfig, body: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """``count`` identical requests answered by a fresh server's replier, as JSON verdicts."""
    replier = Replier(config.seed, None)
    return [json.loads(text) for text in contents(replier, config, [body] * count)]


def binomial_bounds(count: int, p: float) -> tuple[float, float]:
    """The 99.9% normal interval of a Binomial(count, p) count."""
    spread = Z_999 * math.sqrt(count * p * (1 - p))
    return count * p - spread, count * p + spread


@pytest.mark.parametrize(
    ("jitter", "share"),
    [
        pytest.param(0.4, 1 - 0.4 / 2, id="jitter-0.4-repeats-itself-80-percent"),
        pytest.param(1.0, 1 / 2, id="jitter-1-is-a-coin"),
    ],
)
def test_a_binary_judge_repeats_its_usual_choice_with_probability_one_minus_half_the_jitter(
    jitter, share
):
    body = judge_request(BINARY)
    usual = json.loads(verdict_content(body, seed=0))["choice"]

    got = verdicts(SimulatorConfig(jitter=jitter), body, 4000)

    low, high = binomial_bounds(4000, share)
    assert low <= sum(v["choice"] == usual for v in got) <= high


def test_jitter_zero_gives_every_repeat_the_usual_reply_byte_for_byte():
    body = judge_request(BINARY)
    replier = Replier(0, None)

    replies = contents(replier, SimulatorConfig(), [body] * 4000)

    assert set(replies) == {verdict_content(body, seed=0)}


def test_a_guess_says_so_and_keeps_the_computed_confidence():
    body = judge_request(BINARY)
    usual = json.loads(verdict_content(body, seed=0))

    got = verdicts(SimulatorConfig(jitter=1.0), body, 20)

    assert {v["reasoning"] for v in got} == {GUESS_REASONING}
    assert {v["confidence"] for v in got} == {usual["confidence"]}


def test_an_integer_scale_guessed_every_time_hits_each_point_a_fifth_of_the_time():
    body = judge_request(SCHEMA)  # score: integer 1..5

    scores = collections.Counter(
        v["score"] for v in verdicts(SimulatorConfig(jitter=1.0), body, 5000)
    )

    assert set(scores) == {1, 2, 3, 4, 5}
    # Pearson's chi-square against 1000 each, under its 99.9% critical value for 4 degrees
    # of freedom (18.47); seeded, so it cannot flake (this seed: 12.6).
    chi_square = sum((scores[point] - 1000) ** 2 / 1000 for point in range(1, 6))
    assert chi_square < 18.47, scores


def test_enum_scales_numbers_and_booleans_are_drawn_over_their_whole_range():
    got = verdicts(SimulatorConfig(jitter=1.0), judge_request(MIXED), 2000)

    assert {v["points"] for v in got} == {1, 2, 3, 4, 5}
    shares = [v["share"] for v in got]
    assert all(0 <= s <= 1 and round(s, 2) == s for s in shares)
    # Uniform on [0, 1]: mean 1/2, sd of the mean sqrt(1/12 / 2000) = 0.0065.
    assert abs(sum(shares) / len(shares) - 0.5) < Z_999 * 0.0065
    low, high = binomial_bounds(2000, 1 / 2)
    assert low <= sum(v["helpful"] for v in got) <= high


def test_a_guessed_pairwise_winner_is_any_of_a_b_and_tie_alike():
    body = pairwise_request(ANSWER, "No idea.")  # a clear win for A without jitter
    assert json.loads(verdict_content(body, seed=0))["winner"] == "A"

    winners = collections.Counter(
        v["winner"] for v in verdicts(SimulatorConfig(jitter=1.0), body, 3000)
    )

    low, high = binomial_bounds(3000, 1 / 3)
    assert all(low <= winners[w] <= high for w in ("A", "B", "tie")), winners


def test_a_request_without_a_schema_is_never_guessed():
    body = judge_request(None)

    replies = contents(Replier(0, None), SimulatorConfig(jitter=1.0), [body] * 10)

    assert set(replies) == {verdict_content(body, seed=0)}


def test_jitter_applies_on_top_of_the_truth_files_labels(tmp_path):
    path = tmp_path / "truth.jsonl"
    path.write_text(json.dumps({"id": "a", "input": QUESTION, "output": ANSWER, "label": "no"}))
    table = load_truth(path, "label")
    body = judge_request(BINARY)
    labelled = json.loads(verdict_content(body, seed=0, truth=table))
    assert labelled["choice"] == "no"  # the label, though the text features say yes

    replier = Replier(0, table)
    got = [
        json.loads(text) for text in contents(replier, SimulatorConfig(jitter=1.0), [body] * 400)
    ]

    low, high = binomial_bounds(400, 1 / 2)
    assert low <= sum(v["choice"] == "no" for v in got) <= high
    assert {v["confidence"] for v in got} == {labelled["confidence"]}


# --- Reproducible: the occurrence, not the arrival, picks the draw ---


def test_two_fresh_servers_answer_the_same_repeats_with_the_same_multiset_in_any_order():
    config = SimulatorConfig(jitter=0.5, seed=3)
    one, other = judge_request(SCHEMA), judge_request(SCHEMA, answer="Vaccines are magic.")
    first = contents(Replier(3, None), config, [one] * 30 + [other] * 30)
    # Interleaved the other way round: each request still gets occurrences 0..29.
    second = contents(Replier(3, None), config, [other, one] * 30)

    assert collections.Counter(first) == collections.Counter(second)
    assert len(set(first[:30])) > 1, "identical requests must draw independently"


def test_the_draws_depend_on_the_seed_and_the_model():
    body = judge_request(SCHEMA)
    base = contents(Replier(0, None), SimulatorConfig(jitter=0.5), [body] * 30)
    reseeded = contents(Replier(1, None), SimulatorConfig(jitter=0.5, seed=1), [body] * 30)
    other_model = contents(
        Replier(0, None), SimulatorConfig(jitter=0.5), [judge_request(SCHEMA, model="sim2")] * 30
    )

    assert base != reseeded
    assert [json.loads(t)["score"] for t in base] != [json.loads(t)["score"] for t in other_model]


def test_the_request_key_ignores_what_does_not_change_the_question():
    body = judge_request(SCHEMA)

    assert request_key(body) == request_key({**body, "temperature": 0.7, "user": "u-1"})
    assert request_key(body) != request_key({**body, "model": "other"})
    assert request_key(body) != request_key(judge_request(BINARY))


def test_repeats_over_the_socket_vary_and_a_reset_or_fresh_server_draws_them_again():
    config = SimulatorConfig(jitter=1.0, seed=5)
    body = judge_request(SCHEMA)

    def scores(server: SimulatorServer) -> list[int]:
        replies = [post(server.url, body) for _ in range(25)]
        assert all(status == 200 for status, _, _ in replies)
        return [json.loads(r["choices"][0]["message"]["content"])["score"] for _, _, r in replies]

    with SimulatorServer(config) as server:
        first = scores(server)
        server.reset()
        after_reset = scores(server)
    with SimulatorServer(config) as fresh:
        again = scores(fresh)

    assert len(set(first)) > 1
    # One client sends in order, so even the sequences match, not only the multisets.
    assert first == after_reset == again


# --- Settings: server-wide, per judge, as flags ---


def test_a_profiles_jitter_overrides_the_servers_and_none_keeps_it():
    config = SimulatorConfig(
        jitter=0.5,
        profiles={"sharp": JudgeProfile(jitter=0.0), "shaky": JudgeProfile(jitter=1.0)},
    )

    assert config.settings_for("sharp").jitter == 0.0
    assert config.settings_for("openai/shaky").jitter == 1.0
    assert config.settings_for("sim").jitter == 0.5
    body = judge_request(BINARY, model="sharp")
    assert set(contents(Replier(0, None), config, [body] * 50)) == {verdict_content(body, seed=0)}


@pytest.mark.parametrize(
    "settings",
    [
        pytest.param({"jitter": 1.5}, id="server-above-one"),
        pytest.param({"profiles": {"x": {"jitter": -0.1}}}, id="profile-below-zero"),
    ],
)
def test_jitter_out_of_range_is_rejected(settings):
    with pytest.raises(ValidationError):
        SimulatorConfig(**settings)


def test_profile_flags_parse_jitter_and_refuse_it_above_one():
    assert parse_profiles(["x:jitter=0.4,noise=0.1"]) == {"x": JudgeProfile(jitter=0.4, noise=0.1)}
    with pytest.raises(ConfigError, match="jitter needs a value from 0 to 1") as caught:
        parse_profiles(["x:jitter=2"])
    assert caught.value.hint is not None
    assert "jitter" in caught.value.hint


def test_the_description_says_the_jitter_only_when_set():
    assert SimulatorConfig(jitter=0.3).describe()[-1] == (
        "a share of 0.3 of verdicts are random guesses (jitter)"
    )
    assert not any("jitter" in line for line in SimulatorConfig().describe())
    profiled = SimulatorConfig(profiles={"x": JudgeProfile(jitter=0.2)}).describe()
    assert profiled[-1] == "requests for model 'x' get jitter 0.2"


def test_the_jitter_flags_reach_the_simulator_config(monkeypatch):
    import judgecli.simulator.server as server_module

    served: list[SimulatorConfig] = []

    async def record(config: SimulatorConfig, **_: Any) -> None:
        """Stand in for serving: keep the config and return at once."""
        served.append(config)

    monkeypatch.setattr(server_module, "serve_forever", record)
    argv = ["simulate", "--jitter", "0.3", "--profile", "shaky:jitter=0.9"]

    run = CliRunner().invoke(app, argv, catch_exceptions=False)

    assert run.exit_code == 0, run.stderr
    assert [(c.jitter, c.settings_for("shaky").jitter) for c in served] == [(0.3, 0.9)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--jitter", "2"], "--jitter", id="flag-above-one"),
        pytest.param(
            ["--profile", "x:jitter=2"],
            "error: --profile 'x:jitter=2': jitter needs a value from 0 to 1",
            id="profile-above-one",
        ),
    ],
)
def test_simulate_refuses_a_jitter_above_one_with_exit_2(args, message):
    run = CliRunner().invoke(app, ["simulate", *args], catch_exceptions=False)

    assert run.exit_code == 2, run.stderr
    assert message in run.stderr
    assert "Traceback" not in run.stderr
