"""Which of LiteLLM's providers carries a judge's calls (judge/route.py)."""

from __future__ import annotations

from pydantic import SecretStr

from judgecli.judge.provider import import_litellm, model_price
from judgecli.judge.route import Route, route, routes, through_sdk
from judgecli.settings.judges import ModelSettings, Price

API = "http://127.0.0.1:9/v1"


def test_an_unpriced_openai_compatible_server_is_reached_without_the_sdk(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-route-env")
    settings = ModelSettings(name="openai/route-test-local", api_base=API)
    way = route(import_litellm(), settings)
    assert way == Route("hosted_vllm/route-test-local", "sk-route-env")
    assert way.direct


def test_the_key_given_with_the_judge_is_sent_before_the_environments(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-route-env")
    settings = ModelSettings(
        name="openai/route-test-keyed", api_base=API, api_key=SecretStr("sk-route-given")
    )
    assert route(import_litellm(), settings).api_key == "sk-route-given"


def test_a_name_litellms_map_knows_keeps_the_sdk_route_even_with_a_price():
    # The openai route gives such a name the parameters it takes (o-series and gpt-5:
    # max_completion_tokens, no temperature), and LiteLLM prices its replies.
    litellm = import_litellm()
    price = Price(input_per_mtok=1.0, output_per_mtok=2.0)
    for name in ("openai/gpt-4o-mini", "openai/o3-mini", "openai/gpt-5-mini"):
        mapped = ModelSettings(name=name, api_base=API)
        assert route(litellm, mapped) == Route(name, None)
        assert route(litellm, mapped.model_copy(update={"price": price})).model == name
    unknown = ModelSettings(name="openai/route-test-priced", api_base=API, price=price)
    assert route(litellm, unknown).model == "hosted_vllm/route-test-priced"


def test_hosted_providers_and_openai_without_an_api_base_go_as_named(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-route-env")
    litellm = import_litellm()
    for name, api_base in (("openai/route-test-hosted", None), ("anthropic/claude-x", API)):
        way = route(litellm, ModelSettings(name=name, api_base=api_base))
        assert way == Route(name, None)
        assert not way.direct


def test_a_direct_route_is_filed_at_price_0_and_the_judge_stays_unpriced():
    litellm = import_litellm()
    settings = ModelSettings(name="openai/route-test-filed", api_base=API)
    found = routes(litellm, [settings])
    assert found[settings.name].model == "hosted_vllm/route-test-filed"
    # LiteLLM's cost of each reply is a look-up of the name sent, at 0 ...
    assert litellm.get_model_info("hosted_vllm/route-test-filed")["input_cost_per_token"] == 0.0
    # ... and judge still says the judge has no price.
    assert model_price(litellm, settings) is None


def test_the_sdk_is_warmed_up_only_for_a_judge_that_uses_it():
    litellm = import_litellm()
    local = ModelSettings(name="openai/route-test-sdk", api_base=API)
    assert not through_sdk(routes(litellm, [local]).values())
    mixed = [local, ModelSettings(name="openai/gpt-4o-mini")]
    assert through_sdk(routes(litellm, mixed).values())
