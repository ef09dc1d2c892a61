"""The `--escalate` rule: which cases go from the cheap screen judge to the strong judge.

A tiered run grades every case with a cheap *screen* judge first; a case is graded again
by the strong judge when the `--escalate` rule holds on what the screen said:

    judge score ... --escalate "confidence < 0.8 or score in [2, 3]"
    judge pairwise ... --escalate "failed or not consistent"
    judge pairwise ... --escalate "winner == tie or confidence < 0.7"

**Variables** (what the screen judge said about one case):

| name         | type        | meaning                                           |
|--------------|-------------|---------------------------------------------------|
| `failed`     | true/false  | the screen gave no valid verdict (always known)   |
| `score`      | number      | pointwise: the screen's score                     |
| `confidence` | number      | the lowest confidence among the screen's replies  |
| `consistent` | true/false  | pairwise: the same verdict in both orders         |
| `passed`     | true/false  | the verdict met the rubric's bar                  |
| `winner`     | old/new/tie | pairwise: the answer the screen preferred         |

**Tests**:

* numbers: `score < 3`, `<=`, `>`, `>=`, `==` (or `=`), `!=`; `score in [2, 3]` is the
  closed range 2 <= score <= 3 (both ends included, low end first); `score not in [2, 3]`.
  Numbers may be negative or decimal: `-1`, `0.75`, `.5`, `1e-3`.
* true/false: the bare name (`consistent` holds when it is true), or `== true`, `!= false`.
* winner: `winner == tie`, `winner != new` (values `old`, `new`, `tie`, without quotes).

**Combining**: `not`, `and`, `or` and parentheses, with the usual precedence (`not` binds
tightest, then `and`, then `or`): `failed or score < 2 and confidence < 0.9` means
`failed or (score < 2 and confidence < 0.9)`. Keywords, names and values are
case-insensitive; spacing does not matter.

**Unknown values.** A test on a value the screen did not give is false. A failed reply has
no score, so for it `score < 3` is false and so is `score not in [2, 3]`, while
`not score in [2, 3]` is true (`not` negates the test's result). Pointwise runs have no
`winner` or `consistent`; a screen that reports no confidence has no `confidence`. Start
the rule with `failed or ...` to escalate failed screens too.

A rule that does not parse, names an unknown variable or compares a value with the wrong
kind of thing (`score == true`, `winner < 3`) is an input error that points at a column.
"""

from __future__ import annotations

import difflib
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Final, NamedTuple, NoReturn

from judgecli.errors import ConfigError
from judgecli.result import Winner


class VariableType(StrEnum):
    """What a rule variable holds, which decides the tests it allows."""

    NUMBER = "a number"
    BOOLEAN = "true/false"
    WINNER = "old/new/tie"


VARIABLES: Final[Mapping[str, VariableType]] = MappingProxyType(
    {
        "failed": VariableType.BOOLEAN,
        "score": VariableType.NUMBER,
        "confidence": VariableType.NUMBER,
        "consistent": VariableType.BOOLEAN,
        "passed": VariableType.BOOLEAN,
        "winner": VariableType.WINNER,
    }
)
"""Every variable a rule may name, with its type (meanings in the module docstring)."""

FLAG: Final = "--escalate"
MAX_DEPTH: Final = 32
"""Deepest nesting of `not` and parentheses: keeps parsing off Python's recursion limit."""
_EXAMPLES: Final = {
    "failed": "failed or confidence < 0.8",
    "score": "score in [2, 3]",
    "confidence": "confidence < 0.8",
    "consistent": "failed or not consistent",
    "passed": "not passed",
    "winner": "winner == tie",
    "": "confidence < 0.8 or score in [2, 3]",
}
_VALUES: Final[dict[VariableType, dict[str, bool | Winner]]] = {
    VariableType.BOOLEAN: {"true": True, "false": False},
    VariableType.WINNER: {w.value: w for w in Winner},
}
_KEYWORDS: Final = {
    "and",
    "or",
    "not",
    "in",
    *_VALUES[VariableType.BOOLEAN],
    *_VALUES[VariableType.WINNER],
}
_COMPARE: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
# Habits from other languages, and what to write instead.
_UNQUOTED: Final = "write values without quotes"
_CHAR_ADVICE: Final = {
    "!": "write 'not' (or '!=')",
    "&": "write 'and'",
    "|": "write 'or'",
    '"': _UNQUOTED,
    "'": _UNQUOTED,
}
_TOKEN: Final = re.compile(
    r"(?P<number>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?P<junk>[\w.]*))"
    r"|(?P<name>[A-Za-z_]\w*)|(?P<op>[<>=!]=|[<>=])|(?P<punct>[()\[\],])",
    re.ASCII,
)


@dataclass(frozen=True)
class ScreenFacts:
    """What the screen judge said about one case, as the rule sees it."""

    failed: bool  # the screen gave no valid verdict
    score: float | None = None  # pointwise score
    confidence: float | None = None  # the lowest confidence among the screen's replies
    consistent: bool | None = None  # pairwise: same verdict in both orders
    passed: bool | None = None  # met the rubric's bar
    winner: str | None = None  # pairwise: "old" | "new" | "tie" (a Winner compares equal)


@dataclass(frozen=True)
class EscalationRule:
    """A parsed `--escalate` rule; build it with `parse_rule`."""

    text: str
    """Canonical text: single spaces, lower case, `==` for `=`, no redundant parentheses."""
    variables: frozenset[str]
    """The variable names the rule mentions (to check them against the kind of run)."""
    check: Callable[[ScreenFacts], bool] = field(repr=False, compare=False)

    def holds(self, facts: ScreenFacts) -> bool:
        """Whether the case escalates to the strong judge."""
        return self.check(facts)


def parse_rule(text: str) -> EscalationRule:
    """Parse an `--escalate` rule.

    Raises:
        ConfigError: the rule is empty, malformed, names an unknown variable or tests a
            value against the wrong kind of thing; the message quotes the rule and a column.
    """
    parser = _Parser(text)
    part = parser.parse()
    return EscalationRule(part.text, frozenset(parser.names), part.holds)


class _Part(NamedTuple):
    """A parsed piece of a rule: its canonical text, how tightly it binds, its test."""

    text: str
    precedence: int  # or=1 < and=2 < not=3 < a single test=4
    holds: Callable[[ScreenFacts], bool]

    def within(self, precedence: int) -> str:
        """The text inside an operator of `precedence`: parenthesised only if it binds looser."""
        return f"({self.text})" if self.precedence < precedence else self.text


class _Token(NamedTuple):
    kind: str  # number | name | op | punct | end
    text: str  # as written; `word` is what the grammar matches
    column: int  # 1-based, as editors count

    @property
    def word(self) -> str:
        return self.text.lower()

    def found(self) -> str:
        return "" if self.kind == "end" else f", found '{self.text}'"


def _fail(text: str, problem: str, column: int, name: str = "") -> NoReturn:
    # Control characters would break the one-line message; spaces keep the columns right.
    shown = "".join(ch if ch.isprintable() else " " for ch in text)
    raise ConfigError(
        f'{FLAG} "{shown}": {problem} (column {column})',
        hint=f'for example: {FLAG} "{_EXAMPLES[name]}"',
    )


def _tokenize(text: str) -> list[_Token]:
    tokens, pos = [], 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        match = _TOKEN.match(text, pos)
        if match is None:
            advice = _CHAR_ADVICE.get(text[pos])
            _fail(
                text,
                f"unexpected character {text[pos]!r}" + (f"; {advice}" if advice else ""),
                pos + 1,
            )
        if match["junk"]:  # `3abc`, `1.2.3`: not a number and a name
            _fail(text, f"malformed number '{match.group()}'", pos + 1)
        tokens.append(_Token(match.lastgroup or "", match.group(), pos + 1))
        pos = match.end()
    return [*tokens, _Token("end", "", len(text.rstrip()) + 1)]


def _number_text(value: float) -> str:
    # Shortest text that reads back as the same float; whole numbers without ".0".
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


class _Parser:
    """Recursive descent over the grammar: or := and ("or" and)*, and := unary ("and" ...)*."""

    def __init__(self, text: str) -> None:
        self.text, self.tokens = text, _tokenize(text)
        self.pos = self.depth = 0
        self.names: set[str] = set()

    def parse(self) -> _Part:
        if self.peek().kind == "end":
            self.fail("the rule is empty", self.peek())
        part = self.parse_joined("or")
        token = self.peek()
        if token.text == ")":
            self.fail("unbalanced parentheses: no '(' opens this ')'", token)
        if token.kind != "end":
            self.fail(
                f"unexpected '{token.text}' after a complete test; join tests with 'and' or 'or'",
                token,
            )
        return part

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def advance(self) -> _Token:
        token = self.peek()
        self.pos = min(self.pos + 1, len(self.tokens) - 1)
        return token

    def fail(self, problem: str, token: _Token, name: str = "") -> NoReturn:
        _fail(self.text, problem, token.column, name)

    def parse_joined(self, keyword: str) -> _Part:
        """`or` of `and`s, `and` of unaries; a same-keyword child needs no parentheses."""
        below: Callable[[], _Part] = (
            (lambda: self.parse_joined("and")) if keyword == "or" else self.parse_unary
        )
        parts = [below()]
        while self.peek().word == keyword:
            self.advance()
            parts.append(below())
        if len(parts) == 1:
            return parts[0]
        precedence = 1 if keyword == "or" else 2
        combine = any if keyword == "or" else all
        text = f" {keyword} ".join(part.within(precedence) for part in parts)
        return _Part(text, precedence, lambda f: combine(part.holds(f) for part in parts))

    def parse_unary(self) -> _Part:
        token = self.peek()
        if token.word not in ("not", "("):
            return self.parse_test()
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(f"more than {MAX_DEPTH} levels of 'not' and parentheses", token)
        self.advance()
        if token.word == "not":
            inner = self.parse_unary()
            part = _Part(f"not {inner.within(3)}", 3, lambda f: not inner.holds(f))
        else:
            part, closing = self.parse_joined("or"), self.advance()
            if closing.kind == "end":
                self.fail(
                    f"unbalanced parentheses: the '(' at column {token.column} is never closed",
                    closing,
                )
            if closing.text != ")":
                self.fail(
                    f"expected ')' to close the '(' at column {token.column}{closing.found()}",
                    closing,
                )
        self.depth -= 1
        return part

    def parse_test(self) -> _Part:
        before, token = self.tokens[self.pos - 1] if self.pos else None, self.advance()
        if token.kind != "name" or token.word in _KEYWORDS:
            after = f" after '{before.text}'" if before else ""
            self.fail(f"expected a test (a variable, 'not' or '('){after}{token.found()}", token)
        name, kind = token.word, VARIABLES.get(token.word)
        if kind is None:
            close = difflib.get_close_matches(name, VARIABLES, n=1)
            guess = f"did you mean '{close[0]}'? " if close else ""
            self.fail(
                f"unknown variable '{token.text}'; {guess}known variables: {', '.join(VARIABLES)}",
                token,
            )
        self.names.add(name)
        following = self.peek()
        if following.kind == "op":
            return self.parse_comparison(name, kind)
        if following.word == "in" or (following.word == "not" and self.peek(1).word == "in"):
            return self.parse_range(name, kind)
        if kind is VariableType.BOOLEAN:
            return _Part(name, 4, lambda f: getattr(f, name) is True)
        self.fail(
            f"{name} is {kind} and needs a comparison, e.g. '{_EXAMPLES[name]}'{following.found()}",
            following,
            name,
        )

    def parse_comparison(self, name: str, kind: VariableType) -> _Part:
        op_token, value_token = self.advance(), self.advance()
        op = "==" if op_token.text == "=" else op_token.text
        if kind is VariableType.NUMBER:
            number = self.number(value_token, f"after '{op_token.text}'", name)
            value: float | bool | Winner = number
            shown = _number_text(number)
        elif op not in ("==", "!="):
            self.fail(f"{name} is {kind}, so '{op}' does not apply; use == or !=", op_token, name)
        elif value_token.word in _VALUES[kind]:
            value, shown = _VALUES[kind][value_token.word], value_token.word
        else:
            *others, last = _VALUES[kind]
            expected = f"{', '.join(others)} or {last}"
            self.fail(
                f"{name} is {kind}: expected {expected} after '{op_token.text}'"
                f"{value_token.found()}",
                value_token,
                name,
            )
        compare = _COMPARE[op]

        def holds(facts: ScreenFacts) -> bool:
            actual = getattr(facts, name)
            return actual is not None and bool(compare(actual, value))

        return _Part(f"{name} {op} {shown}", 4, holds)

    def parse_range(self, name: str, kind: VariableType) -> _Part:
        negated = self.peek().word == "not"
        if negated:
            self.advance()
        in_token = self.advance()
        if kind is not VariableType.NUMBER:
            self.fail(f"{name} is {kind}: 'in [low, high]' needs a number variable", in_token, name)
        bracket = self.expect("[", "after 'in'", name)
        low = self.number(self.advance(), "after '['", name)
        self.expect(",", "between the two ends of the range", name)
        high = self.number(self.advance(), "after ','", name)
        self.expect("]", "to close the range", name)
        span = f"[{_number_text(low)}, {_number_text(high)}]"
        if low > high:
            self.fail(f"the range {span} is empty: write the low end first", bracket, name)

        def holds(facts: ScreenFacts) -> bool:
            actual = getattr(facts, name)
            return actual is not None and (low <= actual <= high) != negated

        return _Part(f"{name} {'not in' if negated else 'in'} {span}", 4, holds)

    def expect(self, punct: str, where: str, name: str) -> _Token:
        token = self.advance()
        if token.text != punct:
            self.fail(f"expected '{punct}' {where}{token.found()}", token, name)
        return token

    def number(self, token: _Token, where: str, name: str) -> float:
        if token.kind != "number":
            # A word where a number belongs is a type mix-up (`score == true`): say so.
            mixup = f"{name} is a number: " if token.kind == "name" else ""
            self.fail(f"{mixup}expected a number {where}{token.found()}", token, name)
        value = float(token.text)
        if value in (float("inf"), float("-inf")):
            self.fail(f"the number '{token.text}' is too large", token, name)
        return value
