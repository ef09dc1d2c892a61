"""The `hint:` under a rubric error: how to write the key that is wrong, or, for a key the
format does not have, the nearest one it does (docs/rubrics.md describes every key).
"""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any

from pydantic import BaseModel

from judgecli.rubric import Rubric

START = "`judge rubrics show helpfulness` prints a valid rubric to start from"

KEY_HINTS = {
    "name": "name it in one word, e.g. name: helpfulness",
    "version": "a number or a word, e.g. version: 2",
    "kind": "kind: pointwise (a score on a scale), binary (one of its choices) or pairwise "
    "(answer A against answer B)",
    "scale": "e.g. scale: {min: 1, max: 5} (add integer: false for scores between whole numbers)",
    "pass_at": "pass_at is the score on the scale at which a case passes, e.g. pass_at: 4",
    "choices": "e.g. choices: [YES, NO], with pass_choice: YES",
    "pass_choice": "pass_choice is one of the choices, e.g. pass_choice: YES",
    "criteria": "e.g. criteria: [{name: accuracy, weight: 2}, {name: clarity}]: names are "
    "unique words, weights above 0",
    "requires": "requires lists case fields: input, output, reference, context, category, "
    "conversation, trajectory, step; expected_tool_calls for the tool-call check",
    "prompt": "prompt: {system: ..., user: ...}; the user message names case fields in braces "
    "({input}, {output}, pairwise {output_a} and {output_b}) and writes {{ and }} for a brace",
    "judge": "e.g. judge: {model: openai/gpt-4o-mini, temperature: 0, max_tokens: 1024}",
    "turns": "turns: last (grade the conversation's last answer) or each (every answer)",
    "steps": "steps: final (grade an agent's run as a whole) or each (every tool call in its "
    "context)",
    "aggregate": "with turns: each or steps: each, aggregate: mean or min",
    "tool_calls": "e.g. tool_calls: {match: exact, order: any}: match exact or subset, order "
    "any or strict, and with a prompt judge: unchecked, extra or all (docs/tool-calls.md)",
    "extends": "extends: the name or path of the rubric this one builds on",
}


SHAPES = (
    "a pointwise rubric has scale: {min: 1, max: 5} (and pass_at, criteria); a binary one "
    "choices: [YES, NO] (and pass_choice); a pairwise one neither"
)
"""What each kind of rubric has: the fix for a key given to the wrong kind."""


def rubric_hint(loc: list[str], message: str, *, unknown_key: bool) -> str:
    """The fix for the error `message` at the rubric key path `loc` (`["scale", "min"]`)."""
    if any(f"{kind} rubric" in message for kind in ("pointwise", "binary", "pairwise")):
        return SHAPES
    if unknown_key and loc:
        known = keys_at(loc[:-1])
        keys = ", ".join(known)
        # A key of a block one level down, written at this level (`temperature:` for
        # `judge: {temperature: ...}`), is the likeliest slip.
        block = next((k for k in known if loc[-1] in keys_at([*loc[:-1], k])), None)
        if block is not None:
            inner = f"{{{loc[-1]}: ...}}"
            shape = f"[{inner}, ...]" if holds_list([*loc[:-1], block]) else inner
            return f"{loc[-1]} goes in the {block} block: {block}: {shape}"
        close = difflib.get_close_matches(loc[-1], known, n=1, cutoff=0.5)
        return f"did you mean {close[0]}? (keys here: {keys})" if close else f"keys here: {keys}"
    top = next((key for key in loc if not key.isdigit()), None)
    return KEY_HINTS.get(top or "", START)


def keys_at(loc: list[str]) -> list[str]:
    """The keys the rubric format allows at `loc` (a list's index steps into its items)."""
    model = model_at(loc)
    return list(model.model_fields) if model is not None else []


def holds_list(loc: list[str]) -> bool:
    """Whether the key at `loc` holds a list (`criteria`)."""
    parent = model_at(loc[:-1])
    field = parent.model_fields.get(loc[-1]) if parent is not None else None
    return field is not None and typing.get_origin(field.annotation) is list


def model_at(loc: list[str]) -> type[BaseModel] | None:
    """The rubric format's model at `loc`, or None where the format has no block."""
    model: type[BaseModel] = Rubric
    for key in loc:
        if key.isdigit():
            continue
        field = model.model_fields.get(key)
        inner = nested_model(field.annotation) if field is not None else None
        if inner is None:
            return None
        model = inner
    return model


def nested_model(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds, itself or in a list or an optional (`list[Criterion]`)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (list, typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            if (found := nested_model(arg)) is not None:
                return found
    return None
