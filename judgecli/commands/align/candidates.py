"""The candidates: each an `extends:` of the rubric that changes only its instructions (the
system prompt) — labelled examples from train cases, or a revision an optimizer model
proposes from the train disagreements — and how one becomes a Rubric.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from judgecli.rubric import Rubric


class Method(StrEnum):
    """How a candidate was made (summary.json's `method`)."""

    BASELINE = "baseline"
    FEW_SHOT = "few-shot"
    REVISION = "revision"
    PASS_MARK = "pass-mark"


@dataclass(frozen=True)
class TrainCase:
    """One train case as the choosing sees it: its text, the human's verdict and reason,
    and (once judged) the baseline judge's. Test cases never become one.
    """

    id: str
    input: str
    output: str
    label: str
    """The human's outcome (a choice; pass or fail on a pointwise scale)."""
    shown: str
    """The human's label as an example shows it (a choice, or a score)."""
    reason: str | None = None
    judged: str | None = None
    """The baseline judge's outcome."""
    judge_reason: str | None = None
    score: float | None = None
    """The baseline judge's score (pointwise)."""


EXAMPLES_HEADER = "Examples graded by people (their verdicts are right; follow them):"
FEW_SHOT_K = 4


def braced(text: str) -> str:
    """Text safe inside a template: a literal brace doubled."""
    return text.replace("{", "{{").replace("}", "}}")


def pick_examples(cases: Sequence[TrainCase], k: int = FEW_SHOT_K) -> list[TrainCase]:
    """Up to ``k`` examples: the cases the baseline judge got wrong first, then the rest,
    alternating between the labels so each verdict is shown (order as given otherwise).
    """
    ranked = sorted(cases, key=lambda c: (c.judged is None or c.judged == c.label, c.id))
    by_label: dict[str, list[TrainCase]] = {}
    for case in ranked:
        by_label.setdefault(case.label, []).append(case)
    picked: list[TrainCase] = []
    while len(picked) < k and any(by_label.values()):
        for queue in by_label.values():
            if queue and len(picked) < k:
                picked.append(queue.pop(0))
    return picked


def few_shot_system(system: str, examples: Sequence[TrainCase]) -> str:
    """The system prompt with the labelled examples after it."""
    shown = []
    for case in examples:
        lines = [f"Question: {case.input}", f"Answer: {case.output}", f"Verdict: {case.shown}"]
        if case.reason:
            lines.append(f"Why: {case.reason}")
        shown.append("\n".join(lines))
    body = "\n\n".join(f"Example {i}:\n{braced(s)}" for i, s in enumerate(shown, 1))
    return f"{system.rstrip()}\n\n{EXAMPLES_HEADER}\n\n{body}\n"


OPTIMIZER_SYSTEM = (
    "You revise a grading instruction so that a judge agrees with people. You are shown the "
    "instruction and the cases where the judge disagreed with the people's verdict, with "
    "both reasons. Reply with the whole revised instruction inside <instruction> tags."
)


def optimizer_prompt(system: str, disagreements: Sequence[TrainCase]) -> list[dict[str, Any]]:
    """The optimizer's messages: the instruction and the train disagreements."""
    cases = []
    for case in disagreements:
        cases.append(
            f"<question>\n{case.input}\n</question>\n<answer>\n{case.output}\n</answer>\n"
            f"Judge said: {case.judged} ({case.judge_reason or 'no reason given'})\n"
            f"People said: {case.label}" + (f" ({case.reason})" if case.reason else "")
        )
    user = f"<instruction>\n{system.strip()}\n</instruction>\n\n" + "\n\n".join(cases)
    return [{"role": "system", "content": OPTIMIZER_SYSTEM}, {"role": "user", "content": user}]


def revised_instruction(reply: str) -> str | None:
    """The instruction in the optimizer's reply (inside <instruction> tags, else the whole
    reply), or None when it is empty.
    """
    start, end = reply.find("<instruction>"), reply.rfind("</instruction>")
    text = reply[start + len("<instruction>") : end] if 0 <= start < end else reply
    text = text.strip()
    return text or None


@dataclass(frozen=True)
class Candidate:
    """One candidate: how it was made, and the system prompt it gives the rubric."""

    method: Method
    system: str | None = None
    """None: the rubric's own."""
    pass_at: float | None = None
    """A pointwise rubric's pass mark; None: the rubric's own."""

    @property
    def asks_differently(self) -> bool:
        """Whether the judge is asked anything other than the base rubric asks."""
        return self.system is not None

    def rubric(self, base: Rubric) -> Rubric:
        """The rubric with this candidate's changes (an `extends:` of ``base``)."""
        data = base.model_dump(exclude_unset=True)
        if self.system is not None and base.prompt is not None:
            data["prompt"] = {**data.get("prompt", {}), "system": self.system}
        if self.pass_at is not None:
            data["pass_at"] = self.pass_at
        return base if data == base.model_dump(exclude_unset=True) else Rubric.model_validate(data)

    def overlay(self, base_ref: str, base: Rubric) -> dict[str, Any]:
        """The YAML mapping of the candidate as a rubric file: `extends:` the base, with
        the system prompt it changes.
        """
        changed = self.system is not None or self.pass_at is not None
        name = f"{base.name}-aligned" if changed else base.name
        data: dict[str, Any] = {"name": name, "extends": base_ref}
        if self.system is not None:
            data["prompt"] = {"system": self.system}
        if self.pass_at is not None:
            data["pass_at"] = self.pass_at
        return data
