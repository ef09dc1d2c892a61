"""A rubric file read: its YAML (strictly: no aliases, unknown keys are errors), its
`extends:` chain merged in, and every problem raised as RubricError naming file, line and
fix. The Rubric model itself, and what it checks, is rubric.py's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from judgecli.errors import RubricError
from judgecli.inputs.rubric_hints import rubric_hint
from judgecli.inputs.rubric_library import LIBRARY_DIR, find_rubric
from judgecli.inputs.yamlfile import strict_mapping, yaml_hint, yaml_line
from judgecli.rubric import Rubric


def load_rubric(path: Path | str, *, dirs: list[Path] | None = None) -> Rubric:
    """Read and validate a rubric file (resolving `extends:`), or raise RubricError naming
    file, line and fix. `dirs` are the library folders an `extends:` name is looked up in.
    """
    path = Path(path)
    data, node = read_mapping(path)
    data = resolve_extends(data, node, path, dirs or [LIBRARY_DIR], seen=(path.resolve(),))
    return validate(data, node, str(path))


def read_mapping(path: Path) -> tuple[dict[str, Any], yaml.Node]:
    """A rubric file's YAML mapping and its node tree (for line numbers)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RubricError(
            f"{path}: no such rubric file", hint="`judge rubrics list` shows the library"
        ) from None
    except UnicodeDecodeError as err:
        line = path.read_bytes()[: err.start].count(b"\n") + 1
        raise RubricError(f"{path}:{line}: not UTF-8", hint="save the file as UTF-8") from None
    except OSError as err:
        raise RubricError(
            f"{path}: cannot read rubric: {err.strerror}", hint="check the file's permissions"
        ) from None
    return parse_mapping(text, source=str(path))


def parse_mapping(text: str, *, source: str) -> tuple[dict[str, Any], yaml.Node]:
    """YAML text as a mapping (strict loader), or RubricError with file:line."""

    def hint(problem: str) -> str:
        if not problem:
            return "write it as `key: value` lines; `judge rubrics show helpfulness` prints one"
        return yaml_hint(problem)

    return strict_mapping(
        text,
        source=source,
        shape="a rubric must be a YAML mapping (name: ..., kind: ...)",
        error=RubricError,
        hint=hint,
    )


# Blocks an extending rubric overrides key by key; any other key it gives replaces the base's.
MERGED_BLOCKS = ("prompt", "judge", "scale")


def resolve_extends(
    data: dict[str, Any],
    node: yaml.Node,
    path: Path,
    dirs: list[Path],
    *,
    seen: tuple[Path, ...],
) -> dict[str, Any]:
    """The rubric's data with its `extends:` chain merged in (base first). An error in the
    chain names the file and line of the `extends:` that led to it.
    """
    parent = data.get("extends")
    if parent is None:
        return data
    where = f"{path}:{yaml_line(node, ['extends'])}"
    if not isinstance(parent, str):
        raise RubricError(f"{where}: extends: must be a rubric name or file path")
    try:
        base_path = find_rubric(parent, [path.parent, *dirs], relative_to=path.parent)
        if base_path.resolve() in seen:
            raise RubricError(
                f"{parent!r} makes a cycle", hint="a rubric cannot extend itself, directly or not"
            )
        base, base_node = read_mapping(base_path)
    except RubricError as err:
        raise RubricError(f"{where}: extends: {err.message}", hint=err.hint) from None
    base = resolve_extends(base, base_node, base_path, dirs, seen=(*seen, base_path.resolve()))
    merged = dict(base)
    for key, value in data.items():
        if key in MERGED_BLOCKS and isinstance(value, dict) and isinstance(base.get(key), dict):
            merged[key] = base[key] | value
        else:
            merged[key] = value
    return merged


def parse_rubric(text: str, *, source: str) -> Rubric:
    """Validate rubric YAML text (no `extends:` resolution); `source` names it in errors."""
    data, node = parse_mapping(text, source=source)
    return validate(data, node, source)


def validate(data: dict[str, Any], node: yaml.Node, source: str) -> Rubric:
    """The Rubric model of the data, or RubricError pointing at the offending line."""
    try:
        return Rubric.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = [str(p) for p in first["loc"]] or key_named_in(first["msg"], data)
        at = yaml_line(node, loc)
        where = f"{source}:{at}" if at else source
        field = ".".join(loc) or "rubric"
        message = first["msg"].removeprefix("Value error, ").removeprefix(f"{field}: ")
        unknown = first["type"] == "extra_forbidden"
        if unknown:
            message = "unknown key"
        hint = rubric_hint(loc, message, unknown_key=unknown)
        raise RubricError(f"{where}: {field}: {message}", hint=hint) from None


def key_named_in(message: str, data: dict[str, Any]) -> list[str]:
    """For a rule that spans several keys (no location of its own): the first rubric key
    the message names that the file has, so the error can still point at a line.
    """
    for path in re.findall(r"[a-z_]+(?:\.[a-z0-9_]+)*", message):
        keys: list[str] = str(path).split(".")
        if keys[0] in data and keys[0] in Rubric.model_fields:
            return keys
    return ["kind"] if "kind" in data else []
