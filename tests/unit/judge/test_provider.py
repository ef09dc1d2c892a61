"""What judge tells LiteLLM about its models before the first call (judge/provider.py)."""

from __future__ import annotations

from judgecli.judge.provider import import_litellm, model_price, register_unpriced
from judgecli.settings.judges import ModelSettings, Price

API = "http://127.0.0.1:9/v1"


def test_an_unmapped_model_behind_an_api_base_is_filed_at_price_0_and_stays_unpriced():
    litellm = import_litellm()
    settings = ModelSettings(name="openai/provider-test-unmapped", api_base=API)
    assert model_price(litellm, settings) is None
    register_unpriced(litellm, [settings])
    # LiteLLM's per-call look-up is now a hit, and prices the reply at 0 ...
    info = litellm.get_model_info(settings.name)
    assert info["input_cost_per_token"] == 0.0
    assert (
        litellm.completion_cost(model=settings.name, prompt="hello there", completion="fine") == 0.0
    )
    # ... while judge still knows it has no price (the run warns of it).
    assert model_price(litellm, settings) is None
    register_unpriced(litellm, [settings])  # once per process: a second call changes nothing
    assert model_price(litellm, settings) is None


def test_a_user_price_is_judges_whatever_is_registered():
    litellm = import_litellm()
    price = Price(input_per_mtok=1.0, output_per_mtok=2.0)
    settings = ModelSettings(name="openai/provider-test-priced", api_base=API, price=price)
    register_unpriced(litellm, [settings])
    assert model_price(litellm, settings) == price


def test_mapped_models_and_models_without_an_api_base_are_left_alone():
    litellm = import_litellm()
    mapped = ModelSettings(name="openai/gpt-4o-mini", api_base=API)
    hosted = ModelSettings(name="openai/provider-test-hosted-unmapped")
    before = model_price(litellm, mapped)
    assert before is not None
    register_unpriced(litellm, [mapped, hosted])
    assert model_price(litellm, mapped) == before
    assert hosted.name not in litellm.model_cost


def test_a_registration_litellm_refuses_costs_speed_not_the_run(monkeypatch):
    litellm = import_litellm()

    def refuse(*args, **kwargs):
        raise ValueError("a LiteLLM that changed its registry")

    monkeypatch.setattr(litellm, "register_model", refuse)
    settings = ModelSettings(name="openai/provider-test-refused", api_base=API)
    register_unpriced(litellm, [settings])
    assert model_price(litellm, settings) is None
    assert settings.name not in litellm.model_cost
