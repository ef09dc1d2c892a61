"""Structured output across real servers: which `response_format` a judge is sent, and the
step down when its server refuses one.

Servers differ: OpenAI and vLLM take `json_schema`; llama.cpp's Python server answers it
with HTTP 500 (a request-validation error) yet constrains its output to a schema sent as
`{"type": "json_object", "schema": ...}`; others take only `json_object`, or nothing.
So each model starts at the best mode and steps down — json_schema → json_object with the
schema → json_object → prompt only — when its server refuses one, once per run (not once
per case): the run's warnings say so, and run.json records the mode used, which a resume
starts from. The verdict schema is in the prompt in every mode, and every reply is
validated the same way, so a mode changes how likely a reply is valid, never what counts
as valid.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class FormatMode(StrEnum):
    """How the verdict schema is asked for, best first."""

    JSON_SCHEMA = "json_schema"
    JSON_OBJECT_SCHEMA = "json_object+schema"
    JSON_OBJECT = "json_object"
    PROMPT = "prompt"
    """No response_format: the schema is only in the prompt."""


LADDER = list(FormatMode)


def wire_format(mode: FormatMode, response_format: dict[str, Any] | None) -> dict[str, Any] | None:
    """The `response_format` to send in `mode`, from the request's json_schema form (None:
    the request asks for no structured output, or the mode sends none).
    """
    if response_format is None or mode is FormatMode.PROMPT:
        return None
    if mode is FormatMode.JSON_SCHEMA:
        return response_format
    if mode is FormatMode.JSON_OBJECT:
        return {"type": "json_object"}
    schema = response_format.get("json_schema", {}).get("schema")
    return {"type": "json_object", "schema": grammar_schema(schema)} if schema else None


# Grammar-constrained servers (llama.cpp) enforce string lengths, which keeps a small model
# from reasoning until max_tokens cuts the JSON off. At most 1000: llama.cpp's grammar
# parser refuses longer repetitions ("exceeds sane defaults") and its Python server then
# crashed (1,010 did, 1,000 did not, measured with llama-cpp-python 0.3.36); 600 characters
# (~150 tokens) also leave room in a small --max-tokens. Not sent in strict json_schema
# mode: OpenAI's strict mode refuses keywords it does not support.
REASONING_MAX_CHARS = 600


def grammar_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The verdict schema with bounded free-text fields, for grammar-based decoders (those
    of nested objects too: a checklist's items asked at once each have their reasoning).
    """
    props = {
        name: (
            {**spec, "maxLength": REASONING_MAX_CHARS}
            if spec.get("type") == "string" and "enum" not in spec
            else grammar_schema(spec)
            if spec.get("type") == "object"
            else spec
        )
        for name, spec in schema.get("properties", {}).items()
    }
    return {**schema, "properties": props}


class FormatLadder:
    """The current mode of each model of a run, and the steps taken down."""

    def __init__(self, start: dict[str, FormatMode]) -> None:
        self._mode = dict(start)
        self.steps: list[str] = []
        """One warning per step down, naming the server's refusal."""

    def mode(self, model: str) -> FormatMode:
        """The mode to send this model's next request in."""
        return self._mode[model]

    @property
    def modes(self) -> dict[str, str]:
        """Every model's mode now (for run.json)."""
        return {model: mode.value for model, mode in self._mode.items()}

    def step_down(self, model: str, refused: FormatMode, reason: str) -> bool:
        """The server refused `refused`: move below it (once, however many calls saw the
        refusal). False when there is nothing below: the refusal was not about the format.
        """
        if refused is FormatMode.PROMPT:
            return False
        if self._mode[model] is refused:
            below = LADDER[LADDER.index(refused) + 1]
            self._mode[model] = below
            self.steps.append(
                f"{model}: the server refused response_format {refused.value} ({reason}); "
                f"using {below.value} from now on"
            )
        return True
