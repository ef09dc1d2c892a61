"""The Rubric model: a rubric file's content, validated whole (each kind's keys, turns and
steps, the tool-call check, the fields its templates name) and hashed.
"""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from typing import Any, Self

from pydantic import Field, ValidationInfo, field_validator, model_validator

from judgecli.rubric.fields import (
    CASE_FIELDS,
    NOT_PAIRWISE,
    PAIRWISE_FIELDS,
    REQUIRABLE,
    fields_or_none,
    template_fields,
    unknown_field,
)
from judgecli.rubric.kinds import RubricKind, Steps, TurnAggregate, Turns
from judgecli.rubric.parts import Criterion, JudgeDefaults, PromptTemplates, Scale, Strict
from judgecli.rubric.tool_check import ToolCallsCheck


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
    """Ask the judge for its confidence in the verdict: one of 0, 0.05, ..., 1."""
    feedback: bool = False
    """Ask the judge for actionable feedback besides its reasoning."""
    judge: JudgeDefaults = Field(default_factory=JudgeDefaults)
    tool_calls: ToolCallsCheck | None = None
    """Check each case's tool calls against its `expected_tool_calls` before any judge
    (docs/tool-calls.md): the check decides the cases it can, the judge grades the rest; a
    rubric with this block and no prompt asks no judge at all."""
    prompt: PromptTemplates | None = Field(default=None, validate_default=True)
    """The judge's messages; none only in a rubric that only checks tool calls."""
    turns: Turns = Turns.LAST
    """Conversations (cases with `messages`): grade the `last` assistant turn, or `each`."""
    steps: Steps = Steps.FINAL
    """Agents' runs: grade the `final` outcome (the run whole), or `each` tool call in its
    context."""
    aggregate: TurnAggregate | None = None
    """`turns: each` or `steps: each` only: how their verdicts make the case's (default
    mean)."""
    extends: str | None = None
    """The rubric this one builds on (a library name or a path); its prompt, judge and
    scale blocks are merged key by key, any other key given here replaces the base's."""

    @model_validator(mode="before")
    @classmethod
    def _check_only_requires(cls, data: Any) -> Any:
        # A rubric that only checks tool calls needs the calls expected of each case, unless
        # it says otherwise (a case without messages made no call).
        only_checks = isinstance(data, dict) and data.get("prompt") is None
        if only_checks and data.get("tool_calls") is not None and "requires" not in data:
            return {**data, "requires": ["expected_tool_calls"]}
        return data

    @field_validator("prompt")
    @classmethod
    def _prompted(cls, prompt: PromptTemplates | None, info: ValidationInfo) -> Any:
        if prompt is None and info.data.get("tool_calls") is None:
            raise ValueError(
                "a rubric needs prompt: {user: ...}, what the judge is asked (only a rubric "
                "that checks tool calls alone, with tool_calls: and no judge, has none)"
            )
        return prompt

    @property
    def asks_judge(self) -> bool:
        """Whether a judge is asked at all: false for a rubric that only checks tool calls."""
        return self.prompt is not None

    @property
    def prompt_fields(self) -> set[str]:
        """The case fields the prompt's templates name (none without a prompt)."""
        if self.prompt is None:
            return set()
        return {*template_fields(self.prompt.system), *template_fields(self.prompt.user)}

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
        elif self.kind is RubricKind.CHECKLIST:
            self._check_checklist()
        self._check_turns()
        self._check_tool_calls()
        names = [c.name for c in self.criteria]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise ValueError(
                    f"criteria.{i}.name: {name!r} is used twice (names must be unique)"
                )
        unknown = set(self.requires) - REQUIRABLE
        if unknown:
            known = sorted(REQUIRABLE)
            raise ValueError(
                f"requires names unknown case fields {sorted(unknown)}; known: {known}"
            )
        self._check_template_fields()
        return self

    def _check_checklist(self) -> None:
        if self.scale is not None or self.choices is not None or self.criteria:
            raise ValueError(
                "a checklist rubric grades each case's own rubric_items met or not met: it has "
                "no scale, choices or criteria"
            )
        if self.pass_choice is not None or self.confidence or self.feedback:
            raise ValueError(
                "pass_choice, confidence and feedback are not for a checklist rubric: its "
                "verdicts are its items, each met or not met, with the judge's reasoning"
            )
        if self.pass_at is not None and self.pass_at > 1:
            raise ValueError(
                "pass_at is on the checklist score (the points of the met items over the "
                "positive points: at most 1), e.g. pass_at: 0.6"
            )
        if "rubric_items" not in self.requires:
            raise ValueError(
                "a checklist rubric grades each case's rubric_items: add rubric_items to requires"
            )
        shown = [] if self.prompt is None else [self.prompt.system, self.prompt.user]
        if not any("rubric_items" in fields_or_none(text) for text in shown):
            raise ValueError(
                "a checklist rubric's prompt shows the judge the item(s) it grades: put "
                "{rubric_items} in prompt.user"
            )
        if self.graded_each or self.tool_calls is not None:
            raise ValueError(
                "turns, steps and tool_calls are not for a checklist rubric: it grades the "
                "answer (the run's outcome) against each item"
            )

    def _check_turns(self) -> None:
        if self.kind is RubricKind.PAIRWISE and (
            self.turns is not Turns.LAST or self.aggregate is not None
        ):
            raise ValueError(
                "turns and aggregate are for pointwise and binary rubrics: a pairwise rubric "
                "compares the two conversations whole"
            )
        if self.kind is RubricKind.PAIRWISE and self.steps is not Steps.FINAL:
            raise ValueError(
                "steps: each is for pointwise and binary rubrics: a pairwise rubric compares "
                "the two runs whole"
            )
        if self.turns is Turns.EACH and self.steps is Steps.EACH:
            raise ValueError(
                "steps: each grades every tool call, turns: each every assistant turn: choose "
                "one (drop turns: each to grade the steps)"
            )
        if self.aggregate is not None and not self.graded_each:
            raise ValueError(
                "aggregate combines the verdicts of turns: each or steps: each; add one of "
                "them or drop it"
            )

    def _check_tool_calls(self) -> None:
        check = self.tool_calls
        if check is None:
            return
        if self.kind is RubricKind.PAIRWISE:
            raise ValueError(
                "tool_calls is for pointwise and binary rubrics: check each version's runs "
                "with judge score"
            )
        if self.prompt is not None:
            return
        if check.judge is not None:
            raise ValueError(
                "which cases the judge grades, and a rubric without a prompt has no judge: "
                "add a prompt, or drop tool_calls.judge"
            )
        if self.kind is not RubricKind.BINARY or len(self.choices or []) != 2:
            raise ValueError(
                "a rubric that only checks tool calls (no prompt) gives pass or fail: write "
                "kind: binary with two choices, e.g. choices: [PASS, FAIL]"
            )
        if self.confidence or self.feedback or self.graded_each:
            raise ValueError(
                "confidence, feedback, turns and steps are asked of a judge; a rubric that "
                "only checks tool calls (no prompt) has none"
            )
        if "expected_tool_calls" not in self.requires:
            raise ValueError(
                "a rubric that only checks tool calls (no prompt) decides every case by its "
                "expected_tool_calls: add expected_tool_calls to requires"
            )

    @property
    def graded_each(self) -> bool:
        """Whether a case gets several verdicts that aggregate into one (`turns: each` or
        `steps: each`).
        """
        return self.turns is Turns.EACH or self.steps is Steps.EACH

    @property
    def turn_aggregate(self) -> TurnAggregate:
        """How `turns: each` combines the turns' verdicts (the mean unless told)."""
        return self.aggregate or TurnAggregate.MEAN

    @property
    def averages_turns(self) -> bool:
        """Whether a case's score is the mean of its turns' or steps' (`turns: each` or
        `steps: each`, the mean aggregate), which falls between the points of a scale.
        """
        return self.graded_each and self.turn_aggregate is TurnAggregate.MEAN

    def _check_template_fields(self) -> None:
        pairwise = self.kind is RubricKind.PAIRWISE
        known = (CASE_FIELDS - set(NOT_PAIRWISE)) | PAIRWISE_FIELDS if pairwise else CASE_FIELDS
        allowed = (set(self.requires) & known) | (PAIRWISE_FIELDS if pairwise else set())
        for part in ("system", "user") if self.prompt is not None else ():
            try:
                fields = template_fields(getattr(self.prompt, part))
            except ValueError as err:
                raise ValueError(
                    f"prompt.{part}: {err} (write {{{{ and }}}} for literal braces)"
                ) from None
            for field in fields:
                if pairwise and field in NOT_PAIRWISE:
                    raise ValueError(f"prompt.{part}: {NOT_PAIRWISE[field]}")
                if field not in known:
                    raise ValueError(f"prompt.{part}: {unknown_field(field, known)}")
                if field == "step" and self.steps is not Steps.EACH:
                    raise ValueError(
                        f"prompt.{part}: {{step}} is the tool call graded under steps: each; "
                        "add steps: each (or show the whole run with {trajectory})"
                    )
                if field not in allowed:
                    raise ValueError(
                        f"prompt.{part}: {{{field}}} is used but not in requires "
                        f"{self.requires}: add {field} to requires"
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
        content = self.model_dump(mode="json")
        # Keys added after rubrics were first hashed count only when set, so that a rubric
        # that does not use them keeps its hash (and its runs can be resumed and compared).
        for key, default in LATER_KEYS.items():
            if content.get(key) == default:
                del content[key]
        canonical = json.dumps(content, sort_keys=True, ensure_ascii=False)
        return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:16]


# Rubric keys that enter the content hash only when they differ from these defaults.
LATER_KEYS: dict[str, Any] = {
    "turns": Turns.LAST.value,
    "aggregate": None,
    "steps": Steps.FINAL.value,
    "tool_calls": None,
}


def rubric_json_schema() -> dict[str, Any]:
    """JSON Schema of the rubric format (published as rubrics/schema.json for editors)."""
    schema = Rubric.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "judge rubric"
    return schema
