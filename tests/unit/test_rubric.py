from __future__ import annotations

import pytest

from judgecli.errors import RubricError
from judgecli.inputs.rubric_file import load_rubric, parse_rubric
from judgecli.inputs.rubric_library import find_rubric, library
from judgecli.rubric import RubricKind
from tests.conftest import CRITERIA_YAML, POINTWISE_YAML


def test_pointwise_rubric_loads_with_scale_and_pass_mark(pointwise_rubric):
    assert pointwise_rubric.kind is RubricKind.POINTWISE
    assert (pointwise_rubric.scale.min, pointwise_rubric.scale.max) == (1, 4)
    assert pointwise_rubric.pass_at == 3


def test_criterion_weights_are_normalised_to_sum_one(criteria_rubric):
    assert criteria_rubric.weights == {"accuracy": 0.75, "clarity": 0.25}


def test_binary_rubric_passes_on_its_first_choice_by_default(binary_rubric):
    assert binary_rubric.passing_choice == "YES"


def test_content_hash_ignores_formatting_and_comments():
    reformatted = "# a comment\n" + POINTWISE_YAML.replace("version: 3", "version:    3")
    a = parse_rubric(POINTWISE_YAML, source="a")
    b = parse_rubric(reformatted, source="b")
    assert a.content_hash == b.content_hash
    assert a.content_hash.startswith("sha256:")


def test_content_hash_changes_when_the_prompt_changes():
    a = parse_rubric(POINTWISE_YAML, source="a")
    b = parse_rubric(POINTWISE_YAML.replace("You grade answers.", "Grade."), source="b")
    assert a.content_hash != b.content_hash


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        pytest.param(
            POINTWISE_YAML.replace("scale: {min: 1, max: 4}", "scale: {min: 4, max: 1}"),
            "r.yaml:5: scale: scale.max must be greater than scale.min",
            id="reversed-scale-names-line-5",
        ),
        pytest.param(
            POINTWISE_YAML + "colour: blue\n",
            "r.yaml:13: colour: unknown key",
            id="unknown-key-is-an-error-with-its-line",
        ),
        pytest.param(
            POINTWISE_YAML.replace("pass_at: 3", "pass_at: 7"),
            "pass_at must lie within the scale",
            id="pass-mark-outside-scale",
        ),
        pytest.param(
            POINTWISE_YAML.replace("Answer: {output}", "Answer: {output} Ref: {reference}"),
            "r.yaml:10: prompt.user: {reference} is used but not in requires",
            id="template-field-not-required",
        ),
        pytest.param(
            POINTWISE_YAML.replace("kind: pointwise", "kind: ranking"),
            "r.yaml:3: kind: Input should be 'pointwise', 'binary', 'pairwise' or 'checklist'",
            id="unknown-kind",
        ),
        pytest.param(
            "- just\n- a list\n", "r.yaml: a rubric must be a YAML mapping", id="not-mapping"
        ),
        pytest.param(
            "name: [unclosed\n",
            "r.yaml:1: invalid YAML: a [ ] list opened here is not closed with ']'",
            id="broken-yaml-names-the-opening-line",
        ),
        pytest.param(
            "a: &x [1, 2]\nb: [*x, *x]\n", "r.yaml:2: invalid YAML: YAML aliases", id="alias-bomb"
        ),
        pytest.param(
            CRITERIA_YAML.replace("name: clarity", "name: accuracy"),
            "criteria.1.name: 'accuracy' is used twice",
            id="duplicate-criteria",
        ),
        pytest.param(
            "name: b\nkind: binary\nchoices: [YES]\nprompt: {user: '{input}'}\n",
            "a binary rubric needs choices",
            id="binary-needs-two-choices",
        ),
    ],
)
def test_invalid_rubric_is_one_clear_error(yaml_text, expected):
    with pytest.raises(RubricError) as caught:
        parse_rubric(yaml_text, source="r.yaml")
    assert expected in caught.value.message


def test_missing_rubric_file_names_the_path_and_a_hint(tmp_path):
    with pytest.raises(RubricError) as caught:
        load_rubric(tmp_path / "nope.yaml")
    assert "no such rubric file" in caught.value.message
    assert caught.value.hint


def test_bundled_rubrics_are_found_by_name_and_all_valid():
    assert find_rubric("helpfulness").name == "helpfulness.yaml"
    assert library(), "the rubric library is empty"
    for path in library():
        assert load_rubric(path).name == path.stem


def test_unknown_rubric_name_is_an_error():
    with pytest.raises(RubricError, match="no rubric file or library rubric"):
        find_rubric("no-such-rubric")


# Regression (review 2026-11-23, finding 21): `{outptu}` was reported as "prompt.user:
# prompt.user uses {outptu} ... add it to requires", naming the wrong fix.
@pytest.mark.parametrize(
    ("template", "expected"),
    [
        pytest.param(
            "Answer: {outptu}",
            "r.yaml:10: prompt.user: {outptu} is not a case field; did you mean {output}?",
            id="typo-gets-a-suggestion",
        ),
        pytest.param(
            "Answer: {answer}",
            "{answer} is not a case field (fields: {category}, "
            "{context}, {conversation}, {input}, {output}, {reference}, ",
            id="no-close-name-lists-all",
        ),
    ],
)
def test_an_unknown_template_field_is_named_with_the_nearest_field(template, expected):
    with pytest.raises(RubricError) as caught:
        parse_rubric(POINTWISE_YAML.replace("Answer: {output}", template), source="r.yaml")
    assert expected in caught.value.message
    assert "requires" not in caught.value.message
    assert caught.value.message.count("prompt.user") == 1


def test_a_pairwise_prompt_using_output_is_told_about_output_a_and_b():
    text = "name: pw\nkind: pairwise\nprompt:\n  user: 'Q {input} A {output}'\n"
    with pytest.raises(RubricError, match=r"two answers as \{output_a\} and \{output_b\}"):
        parse_rubric(text, source="r.yaml")


# Regression (review 2026-11-23, finding 21): YAML errors were PyYAML's parser jargon
# ("expected <block end>, but found '<block mapping start>'").
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "name: x\nprompt:\n    user: a\n  system: b\n",
            "r.yaml:4: invalid YAML: this line is indented differently from the keys above it",
            id="sibling-key-indented-less",
        ),
        pytest.param(
            "name: x\n  kind: pointwise\n",
            "r.yaml:2: invalid YAML: a ':' where none can be",
            id="key-indented-too-far",
        ),
        pytest.param(
            "scale:\n\tmin: 1\n",
            "r.yaml:2: invalid YAML: a tab character: YAML indents with spaces only",
            id="tab",
        ),
        pytest.param(
            "name: x\nkind pointwise\nscale: 1\n",
            "r.yaml:2: invalid YAML: a line without 'key: value'",
            id="missing-colon-at-its-own-line",
        ),
        pytest.param(
            "name: x\nscale: {min: 1, max: 4\nprompt: {user: x}\n",
            "r.yaml:2: invalid YAML: a { } mapping opened here is not closed",
            id="unclosed-brace",
        ),
        pytest.param(
            'name: "abc\nkind: x\n',
            "r.yaml:1: invalid YAML: a quote opened here is never closed",
            id="unclosed-quote",
        ),
        pytest.param(
            "criteria:\n  - name: a\n - name: b\n",
            "r.yaml:3: invalid YAML: this list item ('- ') is indented differently",
            id="list-item-misaligned",
        ),
    ],
)
def test_yaml_syntax_errors_say_in_plain_words_what_is_wrong_at_which_line(text, expected):
    with pytest.raises(RubricError) as caught:
        parse_rubric(text, source="r.yaml")
    assert expected in caught.value.message
    assert "<block" not in caught.value.message
    assert "token" not in caught.value.message
