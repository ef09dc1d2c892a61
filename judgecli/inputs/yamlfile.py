"""Reading YAML the strict way, with line numbers: no aliases (the "billion laughs" bomb),
no duplicate keys (the last would silently win), YAML 1.2 booleans (YES/NO stay strings).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import yaml

from judgecli.errors import InputError


class NoAliasLoader(yaml.SafeLoader):
    """SafeLoader that refuses anchors and aliases: a rubric never needs them, and they are
    how a "billion laughs" file blows up memory.
    """

    def compose_node(self, parent: Any, index: Any) -> Any:  # noqa: D102
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.MarkedYAMLError(
                problem="YAML aliases (*name) are not allowed in a rubric",
                problem_mark=event.start_mark,
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:  # noqa: D102
        # A repeated key would silently override the first: an error in a rubric.
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.MarkedYAMLError(
                    problem=f"duplicate key {key!r} (first on line {seen[key].line + 1})",
                    problem_mark=key_node.start_mark,
                )
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


# YAML 1.1 reads YES/NO/on/off as booleans, so `choices: [YES, NO]` would arrive as
# [True, False]. Rubrics follow YAML 1.2 instead: only true/false are booleans.
NoAliasLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
NoAliasLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def yaml_line(node: yaml.Node | None, loc: list[str]) -> int | None:
    """The 1-based line of the YAML node at `loc` (or of its nearest existing parent)."""
    line = node.start_mark.line + 1 if node is not None else None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if str(k.value) == key), None)
            if pair is None:
                return line
            line = pair[0].start_mark.line + 1
            node = pair[1]
        elif isinstance(node, yaml.SequenceNode) and key.isdigit() and int(key) < len(node.value):
            node = node.value[int(key)]
            line = node.start_mark.line + 1
        else:
            return line
    return line


# PyYAML's parser vocabulary ("<block end>", "simple key", "token") means nothing to someone
# writing a rubric: each common mistake is said in plain words instead. `at_opening` marks
# problems better shown at the line where a construct began (an unclosed bracket or quote,
# a key without its colon) than where the parser gave up.
PLAIN_PROBLEMS: list[tuple[str, str, bool]] = [
    (
        "found '<block mapping start>'",
        "this line is indented differently from the keys "
        "above it at the same level (keys of one block start in the same column)",
        False,
    ),
    (
        "found '<block sequence start>'",
        "this list item ('- ') is indented differently from the items above it",
        False,
    ),
    (
        "but found '-'",
        "a list item ('- ') where a 'key: value' line was expected (indent the list under its key)",
        False,
    ),
    (
        "expected <block end>",
        "this line does not fit the indentation or the brackets of the lines above it",
        False,
    ),
    (
        "mapping values are not allowed here",
        "a ':' where none can be: the line is indented "
        "further than the one above allows, or a value holds ': ' (put it in quotes)",
        False,
    ),
    ("found character '\\t'", "a tab character: YAML indents with spaces only", False),
    (
        "that cannot start any token",
        "a value cannot start with this character (put the value in quotes)",
        False,
    ),
    (
        "could not find expected ':'",
        "a line without 'key: value' (a ':' is missing, or a "
        "multi-line text is not indented under its key)",
        True,
    ),
    (
        "expected ',' or '}'",
        "a { } mapping opened here is not closed with '}' (or lacks a ',' between its entries)",
        True,
    ),
    (
        "expected ',' or ']'",
        "a [ ] list opened here is not closed with ']' (or lacks a ',' between its items)",
        True,
    ),
    ("found unexpected end of stream", "a quote opened here is never closed", True),
]


def plain_problem(err: yaml.MarkedYAMLError) -> tuple[int | None, str]:
    """The 1-based line of a YAML syntax error and what is wrong there, in plain words."""
    problem = err.problem or str(err)
    line = err.problem_mark.line + 1 if err.problem_mark is not None else None
    for pattern, words, at_opening in PLAIN_PROBLEMS:
        if pattern in problem:
            if at_opening and err.context_mark is not None:
                line = err.context_mark.line + 1
            return line, words
    return line, problem


def yaml_hint(problem: str) -> str:
    """The fix for a YAML problem (as plain_problem words it)."""
    if "duplicate key" in problem:
        return "keep one of the two: a key appears once in each mapping"
    if "aliases" in problem:
        return "write the value out in full: a rubric uses no anchors (&name) or aliases (*name)"
    if "tab character" in problem:
        return "indent with spaces (two per level)"
    return (
        "a rubric is YAML `key: value` lines, nested keys indented with spaces; "
        "`judge rubrics show helpfulness` prints one"
    )


def strict_mapping(
    text: str,
    *,
    source: str,
    shape: str,
    error: Callable[..., InputError],
    hint: Callable[[str], str | None],
) -> tuple[dict[str, Any], yaml.Node]:
    """YAML text as a mapping and its node tree (kept for line numbers), read strictly in
    one pass; else `error(message, hint=...)` naming source:line. `shape` says what the
    mapping is (`a rubric must be a YAML mapping (name: ..., kind: ...)`), `hint` the fix
    for a YAML problem's text.
    """
    try:
        loader = NoAliasLoader(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as err:
        at, problem = plain_problem(err)
        line = f":{at}" if at is not None else ""
        raise error(f"{source}{line}: invalid YAML: {problem}", hint=hint(problem)) from None
    except yaml.YAMLError as err:
        raise error(f"{source}: invalid YAML: {err}", hint=hint(str(err))) from None
    if not isinstance(data, dict) or node is None:
        raise error(f"{source}: {shape}", hint=hint(""))
    return data, node
