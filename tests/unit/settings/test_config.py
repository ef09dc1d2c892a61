from __future__ import annotations

from pathlib import Path

import pytest

from judgecli.errors import ConfigError
from judgecli.rubric import JudgeDefaults
from judgecli.settings.config import build_run_config
from judgecli.settings.flags import JudgeFlags
from judgecli.settings.judges import KEYLESS_PLACEHOLDER, parse_price


def build(rubric, **flags):
    return build_run_config(
        command="score", rubric=rubric, flags=JudgeFlags(**flags), default_out=Path("runs/x")
    )


def with_judge(rubric, **judge):
    return rubric.model_copy(update={"judge": JudgeDefaults(**judge)})


def test_flag_beats_rubric_beats_default(pointwise_rubric):
    rubric = with_judge(pointwise_rubric, model="openai/r", temperature=0.7, max_tokens=300)
    from_rubric = build(rubric)
    assert from_rubric.model_names == ["openai/r"]
    assert (from_rubric.temperature, from_rubric.max_tokens) == (0.7, 300)
    flagged = build(rubric, model=["openai/f"], temperature=0.2, max_tokens=50)
    assert flagged.model_names == ["openai/f"]
    assert (flagged.temperature, flagged.max_tokens) == (0.2, 50)
    default = build(pointwise_rubric, model=["openai/f"])
    assert (default.temperature, default.max_tokens, default.concurrency) == (0.0, 1024, 16)


def test_no_model_anywhere_is_a_config_error_with_a_hint(pointwise_rubric):
    with pytest.raises(ConfigError) as caught:
        build(pointwise_rubric)
    assert "JUDGE_MODEL" in caught.value.hint


def test_repeated_models_form_a_panel_without_duplicates(pointwise_rubric):
    config = build(pointwise_rubric, model=["openai/a", "openai/b", "openai/a"])
    assert config.model_names == ["openai/a", "openai/b"]


def test_keyless_local_server_gets_a_placeholder_key(pointwise_rubric, monkeypatch):
    config = build(pointwise_rubric, model=["openai/sim"], api_base="http://127.0.0.1:1/v1")
    assert config.models[0].api_key.get_secret_value() == KEYLESS_PLACEHOLDER
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real")
    config = build(pointwise_rubric, model=["openai/sim"], api_base="http://127.0.0.1:1/v1")
    assert config.models[0].api_key is None


def test_the_key_never_appears_in_the_config_dump(pointwise_rubric):
    config = build(pointwise_rubric, model=["openai/sim"], api_base="http://127.0.0.1:1/v1")
    assert KEYLESS_PLACEHOLDER not in config.model_dump_json()


def test_model_without_provider_prefix_with_api_base_is_refused(pointwise_rubric):
    with pytest.raises(ConfigError, match="provider prefix"):
        build(pointwise_rubric, model=["sim"], api_base="http://127.0.0.1:1/v1")


@pytest.mark.parametrize("text", ["1", "a,b", "1,2,3", "-1,2"])
def test_bad_price_is_a_config_error(text):
    with pytest.raises(ConfigError, match="--price"):
        parse_price(text)


def test_price_is_per_million_tokens():
    price = parse_price("0.15,0.6")
    assert (price.input_per_mtok, price.output_per_mtok) == (0.15, 0.6)
