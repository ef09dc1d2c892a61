"""Rubrics: the YAML file that says what a judge grades, on what scale, with which prompt.

A rubric is loaded once (inputs/rubric_file), validated strictly (unknown keys are errors,
so a typo never silently changes a grade) and hashed; the hash is written into every result
so a run can always be traced to the exact rubric that produced it. Every stage speaks of
rubrics, so the package's names are imported from here (`from judgecli.rubric import
Rubric`):

- `model`: the Rubric model, its checks and its content hash; the format's JSON Schema
- `kinds`: RubricKind, and Turns, Steps and TurnAggregate (what of a conversation or an
  agent's run is graded, and how its verdicts make the case's)
- `parts`: the blocks: Strict (the base of every user-written block), Scale, Criterion,
  JudgeDefaults, PromptTemplates
- `fields`: the case fields a template may name or a rubric require; reading a template's
  fields
- `tool_check`: the `tool_calls` block: how an agent's calls are matched against the
  expected ones, and which cases a judge grades beside the check
"""

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
from judgecli.rubric.model import LATER_KEYS, Rubric, rubric_json_schema
from judgecli.rubric.parts import (
    MAX_POINTS,
    Criterion,
    JudgeDefaults,
    PromptTemplates,
    Scale,
    Strict,
    plain_number,
    round_step,
)
from judgecli.rubric.tool_check import ArgumentMatch, CallOrder, CheckedCases, ToolCallsCheck

__all__ = [
    "CASE_FIELDS",
    "LATER_KEYS",
    "MAX_POINTS",
    "NOT_PAIRWISE",
    "PAIRWISE_FIELDS",
    "REQUIRABLE",
    "ArgumentMatch",
    "CallOrder",
    "CheckedCases",
    "Criterion",
    "JudgeDefaults",
    "PromptTemplates",
    "Rubric",
    "RubricKind",
    "Scale",
    "Steps",
    "Strict",
    "ToolCallsCheck",
    "TurnAggregate",
    "Turns",
    "fields_or_none",
    "plain_number",
    "round_step",
    "rubric_json_schema",
    "template_fields",
    "unknown_field",
]
