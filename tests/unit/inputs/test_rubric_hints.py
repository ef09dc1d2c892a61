"""The `hint:` under a rubric error (issue 29, review 2026-11-27 finding 21: rubric YAML and
type errors had none)."""

from __future__ import annotations

import pytest

from judgecli.inputs.rubric_hints import SHAPES, keys_at, rubric_hint


@pytest.mark.parametrize(
    ("loc", "hint"),
    [
        pytest.param(
            ["temperature"],
            "temperature goes in the judge block: judge: {temperature: ...}",
            id="a-judge-key-at-the-top",
        ),
        pytest.param(
            ["levels"],
            "levels goes in the criteria block: criteria: [{levels: ...}, ...]",
            id="a-criterion-key-at-the-top",
        ),
        pytest.param(["pass_threshold"], "did you mean pass_at?", id="a-near-spelling"),
        pytest.param(["criteria", "0", "wieght"], "did you mean weight?", id="in-a-list"),
        pytest.param(["scale", "step"], "keys here: min, max, integer", id="no-near-key"),
    ],
)
def test_an_unknown_key_gets_where_it_goes_or_its_nearest_spelling(loc, hint):
    assert rubric_hint(loc, "Extra inputs are not permitted", unknown_key=True).startswith(hint)


def test_a_key_given_to_the_wrong_kind_of_rubric_gets_what_each_kind_has():
    said = "a binary rubric has choices, not a scale or criteria"
    assert rubric_hint(["scale"], said, unknown_key=False) == SHAPES


def test_every_key_of_the_format_has_a_hint_of_its_own():
    from judgecli.inputs.rubric_hints import KEY_HINTS

    blocks = {"description", "confidence", "feedback"}  # a word or a switch: nothing to show
    assert set(keys_at([])) - blocks == set(KEY_HINTS)
