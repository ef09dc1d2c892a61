"""Which judges may see a case's images (issue 32): a model LiteLLM's map knows to take text
only is refused before any call (exit 2, naming the model and the fix); a model the map does
not know (a local server's name behind --api-base) is not. Asked of the real LiteLLM map
(LITELLM_LOCAL_MODEL_COST_MAP: the one bundled with the pinned version)."""

from __future__ import annotations

import pytest

from judgecli.commands.setup import check_images
from judgecli.errors import ConfigError
from judgecli.inputs.images import ImagesShown
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.judge.provider import (
    check_vision,
    import_litellm,
    register_unpriced,
    sees_images,
)
from judgecli.settings.judges import ModelSettings

SHOWN = ImagesShown(count=3, first="cases.jsonl:2")


@pytest.mark.parametrize(
    ("model", "sees"),
    [
        pytest.param("gpt-4o-mini", True, id="vision-model"),
        pytest.param("openai/gpt-4.1-nano", True, id="provider-prefixed"),
        pytest.param("anthropic/claude-sonnet-4-5", True, id="anthropic"),
        pytest.param("gpt-3.5-turbo", False, id="text-only-no-key-in-entry"),
        pytest.param("o3-mini", False, id="text-only-says-false"),
        pytest.param("openai/gpt-3.5-turbo", False, id="text-only-behind-a-prefix"),
        pytest.param("openai/my-local-vlm", None, id="unknown-name"),
        pytest.param("hosted_vllm/Qwen/Qwen2.5-VL-7B-Instruct", None, id="unknown-vllm"),
    ],
)
def test_what_litellms_map_says_of_a_models_sight(model, sees):
    assert sees_images(import_litellm(), model) is sees


def test_a_text_only_judge_is_refused_naming_it_the_cases_and_the_fix():
    models = [ModelSettings(name="gpt-4o-mini"), ModelSettings(name="gpt-3.5-turbo")]
    with pytest.raises(ConfigError) as caught:
        check_vision(models, SHOWN)
    message = str(caught.value)
    assert "gpt-3.5-turbo cannot see images" in message
    assert "3 cases show images (the first: cases.jsonl:2)" in message
    assert "gpt-4o-mini" not in message
    assert "--model openai/NAME --api-base URL" in (caught.value.hint or "")


def test_a_model_the_map_does_not_know_may_judge_images():
    check_vision([ModelSettings(name="openai/sim", api_base="http://127.0.0.1:9/v1")], SHOWN)


def test_a_local_model_judge_filed_in_the_map_is_still_unknown():
    # register_unpriced files a local model at price 0 (an entry without supports_vision):
    # that entry is judge's, not a statement that the model cannot see.
    litellm = import_litellm()
    settings = ModelSettings(name="openai/vision-test-local", api_base="http://127.0.0.1:9/v1")
    register_unpriced(litellm, [settings])
    assert litellm.get_model_info(settings.name)
    check_vision([settings], SHOWN)


def test_a_rubric_that_shows_a_case_field_in_its_system_message_is_refused(pointwise_rubric):
    rubric = parse_rubric(
        "name: sys\nkind: pointwise\nscale: {min: 1, max: 4}\nrequires: [input, output]\n"
        "prompt:\n  system: 'Question: {input}'\n  user: 'Answer: {output}'\n",
        source="sys.yaml",
    )

    class Config:
        all_models = [ModelSettings(name="openai/sim", api_base="http://127.0.0.1:9/v1")]

    with pytest.raises(ConfigError, match=r"shows \{input\} in its system message") as caught:
        check_images(Config(), rubric, SHOWN)  # type: ignore[arg-type]
    assert "move {input} to the rubric's prompt.user" in (caught.value.hint or "")
    check_images(Config(), pointwise_rubric, SHOWN)  # type: ignore[arg-type]
    check_images(Config(), rubric, None)  # type: ignore[arg-type]
