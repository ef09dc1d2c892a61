from __future__ import annotations

import random

import pytest

from judgecli.errors import ConfigError
from judgecli.grading import escalate
from judgecli.grading.escalate import (
    VARIABLES,
    EscalationRule,
    ScreenFacts,
    VariableType,
    parse_rule,
)
from judgecli.result import Winner

OK = ScreenFacts(failed=False, score=3, confidence=0.9, consistent=True, passed=True, winner="new")
FAILED = ScreenFacts(failed=True)  # a failed screen gives nothing but `failed`


def facts(**kw) -> ScreenFacts:
    return ScreenFacts(**({"failed": False} | kw))


@pytest.mark.parametrize(
    ("rule", "screen", "expected"),
    [
        pytest.param("score < 3", facts(score=2), True, id="lt-below"),
        pytest.param("score < 3", facts(score=3), False, id="lt-equal"),
        pytest.param("score <= 3", facts(score=3), True, id="le-equal"),
        pytest.param("score <= 3", facts(score=3.5), False, id="le-above"),
        pytest.param("score > 3", facts(score=3), False, id="gt-equal"),
        pytest.param("score > 3", facts(score=4), True, id="gt-above"),
        pytest.param("score >= 3", facts(score=3), True, id="ge-equal"),
        pytest.param("score >= 3", facts(score=2.9), False, id="ge-below"),
        pytest.param("score == 3", facts(score=3.0), True, id="eq"),
        pytest.param("score = 3", facts(score=3), True, id="single-equals-is-eq"),
        pytest.param("score != 3", facts(score=3), False, id="ne-equal"),
        pytest.param("score != 3", facts(score=1), True, id="ne-other"),
        pytest.param("score > -1", facts(score=-0.5), True, id="negative-number"),
        pytest.param("confidence < .75", facts(confidence=0.7), True, id="leading-dot-decimal"),
        pytest.param("confidence < 5e-1", facts(confidence=0.4), True, id="exponent"),
        pytest.param("score in [2, 3]", facts(score=2), True, id="range-includes-low-end"),
        pytest.param("score in [2, 3]", facts(score=3), True, id="range-includes-high-end"),
        pytest.param("score in [2, 3]", facts(score=2.5), True, id="range-inside"),
        pytest.param("score in [2, 3]", facts(score=1.99), False, id="range-below"),
        pytest.param("score in [2, 3]", facts(score=3.01), False, id="range-above"),
        pytest.param("score in [2, 2]", facts(score=2), True, id="one-point-range"),
        pytest.param("score not in [2, 3]", facts(score=4), True, id="not-in-outside"),
        pytest.param("score not in [2, 3]", facts(score=3), False, id="not-in-inside"),
        pytest.param("failed", FAILED, True, id="bare-boolean-true"),
        pytest.param("failed", OK, False, id="bare-boolean-false"),
        pytest.param("not consistent", facts(consistent=False), True, id="not-boolean"),
        pytest.param("consistent == false", facts(consistent=False), True, id="eq-false"),
        pytest.param("passed != true", facts(passed=False), True, id="ne-true"),
        pytest.param("winner == tie", facts(winner="tie"), True, id="winner-eq"),
        pytest.param("winner == tie", facts(winner=Winner.TIE), True, id="winner-enum-value"),
        pytest.param("winner != old", facts(winner="old"), False, id="winner-ne"),
        pytest.param("winner == new", facts(winner="old"), False, id="winner-other"),
    ],
)
def test_each_test_compares_the_screen_value(rule, screen, expected):
    assert parse_rule(rule).holds(screen) is expected


@pytest.mark.parametrize(
    ("rule", "screen", "expected"),
    [
        # `a or b and c` is `a or (b and c)`, not `(a or b) and c`.
        pytest.param("failed or passed and consistent", FAILED, True, id="and-binds-tighter"),
        pytest.param("(failed or passed) and consistent", FAILED, False, id="parentheses-win"),
        pytest.param("passed and consistent or failed", FAILED, True, id="and-first-on-the-left"),
        pytest.param("not failed and passed", facts(passed=True), True, id="not-binds-tightest"),
        pytest.param("not (failed or passed)", facts(passed=True), False, id="not-of-a-group"),
        pytest.param("not not passed", facts(passed=True), True, id="double-not"),
        pytest.param("((passed))", facts(passed=True), True, id="redundant-parentheses"),
        pytest.param(
            "failed or score < 2 or confidence < 0.8",
            facts(score=4, confidence=0.5),
            True,
            id="long-or",
        ),
        pytest.param(
            "score > 1 and score < 4 and passed", facts(score=2, passed=False), False, id="long-and"
        ),
    ],
)
def test_precedence_is_not_then_and_then_or(rule, screen, expected):
    assert parse_rule(rule).holds(screen) is expected


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        pytest.param("score < 3", False, id="comparison"),
        pytest.param("score != 3", False, id="not-equal-is-still-a-test"),
        pytest.param("score in [2, 3]", False, id="range"),
        pytest.param("score not in [2, 3]", False, id="not-in-is-one-test"),
        pytest.param("not score in [2, 3]", True, id="not-negates-the-false-test"),
        pytest.param("not score < 3", True, id="not-of-comparison"),
        pytest.param("consistent", False, id="bare-boolean"),
        pytest.param("consistent == false", False, id="boolean-eq"),
        pytest.param("not consistent", True, id="not-boolean"),
        pytest.param("winner != new", False, id="winner-ne"),
        pytest.param("failed", True, id="failed-is-always-known"),
        pytest.param("failed or confidence < 0.8", True, id="failed-or-something"),
    ],
)
def test_a_test_on_a_value_the_screen_did_not_give_is_false(rule, expected):
    assert parse_rule(rule).holds(FAILED) is expected


@pytest.mark.parametrize(
    ("rule", "text"),
    [
        pytest.param(
            "confidence<0.8 or score in [2,3]", "confidence < 0.8 or score in [2, 3]", id="spacing"
        ),
        pytest.param("  FAILED   Or NOT Consistent ", "failed or not consistent", id="case"),
        pytest.param("Winner == TIE", "winner == tie", id="value-case"),
        pytest.param("score = 3", "score == 3", id="single-equals"),
        pytest.param("score NOT IN [ -1 , 2.50 ]", "score not in [-1, 2.5]", id="range-numbers"),
        pytest.param("score < 3.0", "score < 3", id="whole-number"),
        pytest.param("score<-0", "score < 0", id="negative-zero"),
        pytest.param("confidence < 1e-7", "confidence < 1e-07", id="tiny-number"),
        pytest.param(
            "(failed or passed) and consistent",
            "(failed or passed) and consistent",
            id="needed-parentheses-kept",
        ),
        pytest.param(
            "failed or (passed and consistent)",
            "failed or passed and consistent",
            id="redundant-parentheses-dropped",
        ),
        pytest.param(
            "failed or (passed or (consistent))",
            "failed or passed or consistent",
            id="nested-or-flattened",
        ),
        pytest.param("not (failed and passed)", "not (failed and passed)", id="not-of-group"),
        pytest.param("not(not(failed))", "not not failed", id="not-not"),
        pytest.param("not (score < 3)", "not score < 3", id="not-of-test"),
        pytest.param("\tfailed\nor\r\npassed", "failed or passed", id="any-whitespace"),
    ],
)
def test_canonical_text_normalises_spacing_case_and_parentheses(rule, text):
    assert parse_rule(rule).text == text


@pytest.mark.parametrize(
    "rule",
    [
        "confidence < 0.8 or score in [2, 3]",
        "failed or not consistent",
        "winner == tie or confidence < 0.7",
        "not (failed or passed) and (score < 2 or score > 4)",
        "((score >= -2.5)) and not not passed or winner != old",
        "score not in [0.1, 1e20] and confidence = 0.333333333333",
    ],
)
def test_canonical_text_parses_back_to_itself_and_the_same_meaning(rule):
    parsed = parse_rule(rule)
    again = parse_rule(parsed.text)
    assert again.text == parsed.text
    assert again == parsed
    for screen in (OK, FAILED, facts(score=-3, confidence=0.1, winner="old", passed=False)):
        assert again.holds(screen) is parsed.holds(screen)


@pytest.mark.parametrize(
    ("rule", "variables"),
    [
        pytest.param("failed", {"failed"}, id="one"),
        pytest.param("Score < 2 or score > 4", {"score"}, id="repeated-and-case-folded"),
        pytest.param(
            "winner == tie or not (consistent and confidence > 0.5)",
            {"winner", "consistent", "confidence"},
            id="nested",
        ),
    ],
)
def test_variables_are_the_names_the_rule_mentions(rule, variables):
    assert parse_rule(rule).variables == frozenset(variables)


def test_every_variable_is_documented_with_its_type():
    assert dict(VARIABLES) == {
        "failed": VariableType.BOOLEAN,
        "score": VariableType.NUMBER,
        "confidence": VariableType.NUMBER,
        "consistent": VariableType.BOOLEAN,
        "passed": VariableType.BOOLEAN,
        "winner": VariableType.WINNER,
    }
    for name in VARIABLES:
        assert f"`{name}`" in (escalate.__doc__ or "")


@pytest.mark.parametrize(
    ("rule", "fragment"),
    [
        pytest.param("", "the rule is empty", id="empty"),
        pytest.param("   ", "the rule is empty", id="blank"),
        pytest.param("score <", "expected a number after '<' (column 8)", id="missing-number"),
        pytest.param(
            "scroe < 3",
            "unknown variable 'scroe'; did you mean 'score'?",
            id="unknown-variable-suggests",
        ),
        pytest.param(
            "quality > 3",
            "known variables: failed, score, confidence, consistent",
            id="unknown-variable-lists-known",
        ),
        pytest.param(
            "score == true",
            "score is a number: expected a number after '=='",
            id="number-vs-boolean",
        ),
        pytest.param(
            "winner < 3", "winner is old/new/tie, so '<' does not apply", id="winner-ordered"
        ),
        pytest.param(
            "winner == draw",
            "expected old, new or tie after '==', found 'draw'",
            id="winner-bad-value",
        ),
        pytest.param(
            "winner in [1, 2]",
            "winner is old/new/tie: 'in [low, high]' needs a number",
            id="winner-range",
        ),
        pytest.param("winner", "winner is old/new/tie and needs a comparison", id="bare-winner"),
        pytest.param(
            "failed in [1,2]", "failed is true/false: 'in [low, high]'", id="boolean-range"
        ),
        pytest.param(
            "consistent > 0.5",
            "consistent is true/false, so '>' does not apply",
            id="boolean-ordered",
        ),
        pytest.param(
            "passed == 1", "expected true or false after '==', found '1'", id="boolean-number"
        ),
        pytest.param(
            "score",
            "score is a number and needs a comparison, e.g. 'score in [2, 3]' (column 6)",
            id="bare-number",
        ),
        pytest.param(
            "confidence not 3", "confidence is a number and needs a comparison", id="not-without-in"
        ),
        pytest.param(
            "score in [3, 2]",
            "the range [3, 2] is empty: write the low end first",
            id="reversed-range",
        ),
        pytest.param("score in [1, 2", "expected ']' to close the range", id="open-range"),
        pytest.param("score in 1, 2]", "expected '[' after 'in', found '1'", id="no-bracket"),
        pytest.param("score in [1; 2]", "unexpected character ';'", id="bad-separator"),
        pytest.param("score in [1 2]", "expected ',' between the two ends", id="no-comma"),
        pytest.param("score in [a, 2]", "expected a number after '['", id="range-not-number"),
        pytest.param(
            "(failed or passed", "the '(' at column 1 is never closed", id="unclosed-parenthesis"
        ),
        pytest.param("failed)", "no '(' opens this ')' (column 7)", id="extra-parenthesis"),
        pytest.param(
            "(failed passed)",
            "expected ')' to close the '(' at column 1",
            id="junk-inside-parentheses",
        ),
        pytest.param("()", "expected a test", id="empty-parentheses"),
        pytest.param(
            "failed passed", "unexpected 'passed' after a complete test", id="trailing-token"
        ),
        pytest.param("score < 3 4", "unexpected '4'", id="trailing-number"),
        pytest.param(
            "failed or", "expected a test (a variable, 'not' or '(') after 'or'", id="dangling-or"
        ),
        pytest.param("and failed", "found 'and' (column 1)", id="leading-and"),
        pytest.param("not", "expected a test", id="bare-not"),
        pytest.param("3 < score", "expected a test", id="number-first"),
        pytest.param("tie", "expected a test", id="value-as-test"),
        pytest.param("failed && passed", "unexpected character '&'; write 'and'", id="ampersand"),
        pytest.param("!failed", "write 'not'", id="bang"),
        pytest.param("winner == 'tie'", "write values without quotes", id="quotes"),
        pytest.param("score < 3abc", "malformed number '3abc'", id="number-glued-to-word"),
        pytest.param("score < 1.2.3", "malformed number '1.2.3'", id="two-dots"),
        pytest.param("score < 1e999", "the number '1e999' is too large", id="overflow"),
        pytest.param("score <== 3", "expected a number after '<=', found '='", id="double-op"),
        pytest.param("scöre < 3", "unexpected character 'ö' (column 3)", id="non-ascii"),
        pytest.param("not " * 40 + "failed", "more than 32 levels", id="too-deep-not"),
        pytest.param("(" * 40 + "failed" + ")" * 40, "more than 32 levels", id="too-deep-parens"),
    ],
)
def test_invalid_rules_are_config_errors_that_say_what_and_where(rule, fragment):
    with pytest.raises(ConfigError) as caught:
        parse_rule(rule)
    message = caught.value.message
    assert fragment in message
    assert message.startswith(f'--escalate "{rule}": ')
    assert "\n" not in message
    assert "(column " in message


def test_the_hint_shows_a_valid_example_for_the_variable_at_fault():
    with pytest.raises(ConfigError) as caught:
        parse_rule("winner < 3")
    assert caught.value.hint == 'for example: --escalate "winner == tie"'


def test_every_hint_example_is_itself_a_valid_rule():
    for rule in [
        "",
        "score",
        "confidence <",
        "failed in [1, 2]",
        "consistent > 1",
        "passed = 3",
        "winner",
    ]:
        with pytest.raises(ConfigError) as caught:
            parse_rule(rule)
        hint = caught.value.hint or ""
        example = hint.removeprefix('for example: --escalate "').removesuffix('"')
        assert isinstance(parse_rule(example), EscalationRule), hint


def test_control_characters_do_not_break_the_one_line_message():
    with pytest.raises(ConfigError) as caught:
        parse_rule("failed\x00 or\x1b passed")
    assert caught.value.message.startswith('--escalate "failed  or  passed": ')
    assert "unexpected character '\\x00' (column 7)" in caught.value.message


def test_a_newline_in_the_rule_is_whitespace_but_not_in_the_message():
    with pytest.raises(ConfigError) as caught:
        parse_rule("failed or\nscore")
    assert "\n" not in caught.value.message
    assert "(column 16)" in caught.value.message


VOCABULARY = [
    "score",
    "confidence",
    "failed",
    "consistent",
    "passed",
    "winner",
    "quality",
    "and",
    "or",
    "not",
    "in",
    "true",
    "false",
    "old",
    "new",
    "tie",
    "(",
    ")",
    "[",
    "]",
    ",",
    "<",
    "<=",
    ">",
    ">=",
    "==",
    "=",
    "!=",
    "!",
    "0",
    "3",
    "-1",
    "2.5",
    ".5",
    "1e3",
    "1e999",
    "1.2.3",
    "3x",
    "'",
    '"',
    "&&",
    "é",
    "\x00",
    "\n",
    "-",
    "+",
    "",
]


def test_random_token_soups_give_a_rule_or_a_config_error_and_nothing_else():
    rng = random.Random(20240601)
    screens = [OK, FAILED, facts(score=2, confidence=0.5, winner="tie", consistent=False)]
    rules, errors = [], []
    for _ in range(5000):
        tokens = rng.choices(VOCABULARY, k=rng.randint(0, 12))
        try:
            rules.append(parse_rule(rng.choice([" ", "", "  "]).join(tokens)))
        except ConfigError as error:  # anything else fails the test
            errors.append(error)
    assert rules  # the soup exercises both sides
    assert errors
    assert all("\n" not in error.message and error.hint for error in errors)
    for rule in rules:
        assert parse_rule(rule.text).text == rule.text
        assert all(isinstance(rule.holds(screen), bool) for screen in screens)


ATOMS = {
    "failed": lambda f: f.failed,
    "consistent": lambda f: f.consistent is True,
    "passed == false": lambda f: f.passed is False,
    "score < 3": lambda f: f.score is not None and f.score < 3,
    "score in [2, 3]": lambda f: f.score is not None and 2 <= f.score <= 3,
    "score not in [1, 4]": lambda f: f.score is not None and not 1 <= f.score <= 4,
    "confidence >= 0.5": lambda f: f.confidence is not None and f.confidence >= 0.5,
    "winner == tie": lambda f: f.winner == "tie",
    "winner != old": lambda f: f.winner is not None and f.winner != "old",
}


def test_dropping_redundant_parentheses_keeps_the_meaning():
    """Random fully-parenthesised rules, checked against a direct evaluation of their tree."""
    rng = random.Random(7)

    def generate(depth: int):
        if depth == 0 or rng.random() < 0.3:
            text = rng.choice(list(ATOMS))
            return text, ATOMS[text]
        shape = rng.randrange(3)
        left_text, left = generate(depth - 1)
        if shape == 0:
            return f"not ({left_text})", lambda f: not left(f)
        right_text, right = generate(depth - 1)
        if shape == 1:
            return f"({left_text}) and ({right_text})", lambda f: left(f) and right(f)
        return f"({left_text}) or ({right_text})", lambda f: left(f) or right(f)

    screens = [
        facts(score=s, confidence=c, winner=w, consistent=k, passed=p)
        for s in (None, 1, 2, 5)
        for c in (None, 0.4, 0.9)
        for w in (None, "tie", "old")
        for k in (None, True)
        for p in (None, False)
    ] + [FAILED]
    for _ in range(300):
        text, oracle = generate(4)
        canonical = parse_rule(parse_rule(text).text)
        assert canonical.text == parse_rule(text).text
        assert [canonical.holds(s) for s in screens] == [bool(oracle(s)) for s in screens], text
