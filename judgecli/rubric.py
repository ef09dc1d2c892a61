"""Rubrics: the YAML file that says what a judge grades, on what scale, with which prompt.

A rubric is loaded once, validated strictly (unknown keys are errors, so a typo never
silently changes a grade) and hashed; the hash is written into every result so a run can
always be traced to the exact rubric that produced it.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any, Self

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from judgecli.errors import RubricError

# Where the bundled rubric library lives (the repo's `rubrics/` folder).
LIBRARY_DIR = Path(__file__).resolve().parent.parent / "rubrics"

# Fields a template may name. Pairwise templates use output_a/output_b, filled by the
# prompt builder from the two cases of a pair (the order decides which is which).
CASE_FIELDS = frozenset({"input", "output", "reference", "context", "category"})
PAIRWISE_FIELDS = frozenset({"output_a", "output_b"})


class RubricKind(StrEnum):
    """What the judge returns: a score, one of fixed choices, or a winner of two answers."""

    POINTWISE = "pointwise"
    BINARY = "binary"
    PAIRWISE = "pairwise"


class Strict(BaseModel):
    """Base for user-written formats: unknown keys are errors, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Scale(Strict):
    """The score range of a pointwise rubric."""

    min: float
    """Lowest score."""
    max: float
    """Highest score."""
    integer: bool = True
    """Whole-number scores only (a 1-4 scale); false for continuous ranges such as 0-1."""

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.max <= self.min:
            raise ValueError("scale.max must be greater than scale.min")
        if self.integer and not (self.min.is_integer() and self.max.is_integer()):
            raise ValueError("an integer scale needs whole-number min and max (or integer: false)")
        return self


class Criterion(Strict):
    """One weighted dimension of a pointwise grade."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_-]*$")
    """Identifier used as the key of the criterion's score in the verdict."""
    weight: float = Field(default=1.0, gt=0)
    """Relative weight; weights are normalised to sum 1."""
    description: str = ""
    """What the criterion judges (shown to the judge)."""
    levels: dict[int, str] = Field(default_factory=dict)
    """Optional anchors: what a given score means."""


class JudgeDefaults(Strict):
    """The rubric's `judge:` block: defaults under flags and environment variables."""

    model: str | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)


class PromptTemplates(Strict):
    """The judge's messages; `{field}` placeholders are filled from the case."""

    system: str = ""
    user: str


class Rubric(Strict):
    """A validated rubric."""

    name: str = Field(min_length=1)
    version: int | str = 1
    kind: RubricKind
    description: str = ""
    scale: Scale | None = None
    """Pointwise only: the score range."""
    choices: list[str] | None = None
    """Binary only: the labels the judge picks from, e.g. [YES, NO]."""
    pass_at: float | None = None
    """Pointwise: a case passes at or above this score."""
    pass_choice: str | None = None
    """Binary: the choice that counts as a pass (default: the first choice)."""
    criteria: list[Criterion] = Field(default_factory=list)
    requires: list[str] = Field(default_factory=lambda: ["input", "output"])
    """Case fields every case must have."""
    confidence: bool = False
    """Ask the judge for its confidence (0-1) in the verdict."""
    feedback: bool = False
    """Ask the judge for actionable feedback besides its reasoning."""
    judge: JudgeDefaults = Field(default_factory=JudgeDefaults)
    prompt: PromptTemplates

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.kind is RubricKind.POINTWISE:
            if self.scale is None:
                raise ValueError("a pointwise rubric needs scale: {min: ..., max: ...}")
            if self.choices is not None:
                raise ValueError("choices belong to binary rubrics; a pointwise rubric has a scale")
            if self.pass_at is not None and not self.scale.min <= self.pass_at <= self.scale.max:
                raise ValueError("pass_at must lie within the scale")
        elif self.kind is RubricKind.BINARY:
            if self.scale is not None or self.criteria:
                raise ValueError("a binary rubric has choices, not a scale or criteria")
            if not self.choices or len(self.choices) < 2:
                raise ValueError("a binary rubric needs choices: [YES, NO] (two or more labels)")
            if len({c.casefold() for c in self.choices}) != len(self.choices):
                raise ValueError("choices must be distinct (ignoring case)")
            if self.pass_choice is not None and self.pass_choice not in self.choices:
                raise ValueError("pass_choice must be one of the choices")
        names = [c.name for c in self.criteria]
        if len(set(names)) != len(names):
            raise ValueError("criteria names must be unique")
        unknown = set(self.requires) - CASE_FIELDS
        if unknown:
            raise ValueError(
                f"requires names unknown case fields {sorted(unknown)}; "
                f"known: {sorted(CASE_FIELDS)}"
            )
        self._check_template_fields()
        return self

    def _check_template_fields(self) -> None:
        allowed = set(self.requires)
        if self.kind is RubricKind.PAIRWISE:
            allowed = (allowed - {"output"}) | PAIRWISE_FIELDS
        for part in ("system", "user"):
            for field in template_fields(getattr(self.prompt, part)):
                if field not in allowed:
                    raise ValueError(
                        f"prompt.{part} uses {{{field}}}, which is not in requires "
                        f"{sorted(allowed)}: add it to requires (or write {{{{ }}}} for a brace)"
                    )

    @property
    def weights(self) -> dict[str, float]:
        """Criterion weights normalised to sum 1."""
        total = sum(c.weight for c in self.criteria)
        return {c.name: c.weight / total for c in self.criteria}

    @property
    def passing_choice(self) -> str | None:
        """The binary choice that counts as a pass."""
        if self.kind is not RubricKind.BINARY or not self.choices:
            return None
        return self.pass_choice or self.choices[0]

    @cached_property
    def content_hash(self) -> str:
        """Hash of the validated content: formatting and comments do not change it."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:16]


def template_fields(template: str) -> list[str]:
    """The `{field}` names a template uses, in order (raises ValueError on bad braces)."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]


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


def load_rubric(path: Path | str) -> Rubric:
    """Read and validate a rubric file, or raise RubricError naming file, line and fix."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RubricError(
            f"{path}: no such rubric file", hint="`judge rubrics list` shows the bundled ones"
        ) from None
    except UnicodeDecodeError as err:
        line = path.read_bytes()[: err.start].count(b"\n") + 1
        raise RubricError(f"{path}:{line}: not UTF-8", hint="save the file as UTF-8") from None
    except OSError as err:
        raise RubricError(f"{path}: cannot read rubric: {err.strerror}") from None
    return parse_rubric(text, source=str(path))


def parse_rubric(text: str, *, source: str) -> Rubric:
    """Validate rubric YAML text; `source` names it in error messages."""
    try:
        node = yaml.compose(text, Loader=NoAliasLoader)  # noqa: S506 - SafeLoader subclass
        data = yaml.load(text, Loader=NoAliasLoader)  # noqa: S506
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        raise RubricError(f"{source}{line}: invalid YAML: {err.problem}") from None
    except yaml.YAMLError as err:
        raise RubricError(f"{source}: invalid YAML: {err}") from None
    if not isinstance(data, dict):
        raise RubricError(f"{source}: a rubric must be a YAML mapping (name: ..., kind: ...)")
    try:
        return Rubric.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = [str(p) for p in first["loc"]] or key_named_in(first["msg"], data)
        at = yaml_line(node, loc)
        where = f"{source}:{at}" if at else source
        field = ".".join(loc) or "rubric"
        message = first["msg"].removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            message = (
                "unknown key (check the spelling; `judge rubrics show helpfulness` has an example)"
            )
        raise RubricError(f"{where}: {field}: {message}") from None


def key_named_in(message: str, data: dict[str, Any]) -> list[str]:
    """For a rule that spans several keys (no location of its own): the first rubric key
    the message names that the file has, so the error can still point at a line.
    """
    for path in re.findall(r"[a-z_]+(?:\.[a-z_]+)*", message):
        keys = path.split(".")
        if keys[0] in data and keys[0] in Rubric.model_fields:
            return keys
    return ["kind"] if "kind" in data else []


def yaml_line(node: yaml.Node | None, loc: list[str]) -> int | None:
    """The 1-based line of the YAML node at `loc` (or of its nearest existing parent)."""
    line = node.start_mark.line + 1 if node is not None else None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if str(k.value) == key), None)
            key_node = next((k for k, v in node.value if str(k.value) == key), None)
            if match is None:
                return line
            line = (key_node or match).start_mark.line + 1
            node = match
        elif isinstance(node, yaml.SequenceNode) and key.isdigit() and int(key) < len(node.value):
            node = node.value[int(key)]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def find_rubric(name_or_path: str) -> Path:
    """Resolve `--rubric`: an existing file path, or the name of a bundled rubric."""
    path = Path(name_or_path)
    if path.exists() or path.suffix in {".yaml", ".yml"}:
        return path
    bundled = LIBRARY_DIR / f"{name_or_path}.yaml"
    if bundled.exists():
        return bundled
    raise RubricError(
        f"no rubric file or bundled rubric named {name_or_path!r}",
        hint="`judge rubrics list` shows the bundled rubrics",
    )


def library() -> list[Path]:
    """The bundled rubric files, sorted by name."""
    return sorted(LIBRARY_DIR.glob("*.yaml"))
