"""What `Judge.grade` and `Judge.compare` return: one case's verdict (`Verdict`) or one
comparison's (`Comparison`), with every judgement behind it and what its calls cost
(`Usage`). A case the judge could not grade is not one of these: it raises GradeError with
the raw replies (`checked`), so no caller can read a failure as a low score.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judgecli.errors import GradeError
from judgecli.result import CaseResult, CaseStatus, Judgement, Winner
from judgecli.usage import Metered


class Usage(Metered):
    """What one grade's calls cost: tokens each way, USD and the wall time of the calls
    (from Metered), how many HTTP calls were made, and how many judgements the reply cache
    answered (those cost nothing and made no call).
    """

    model_config = ConfigDict(frozen=True)

    calls: int = 0
    """HTTP calls made, retries and re-asks included (0 when the cache answered all)."""
    cached: int = 0
    """Judgements answered from the reply cache."""


def usage_of(judgements: list[Judgement]) -> Usage:
    """The summed spend of some judgements."""
    spent = Metered()
    for j in judgements:
        spent.add_tokens(j)
        spent.latency_s += j.latency_s
    return Usage(
        **spent.model_dump(),
        calls=sum(j.attempts for j in judgements),
        cached=sum(j.cached for j in judgements),
    )


def reason_of(judgements: list[Judgement]) -> str:
    """The judges' reasoning: one judgement's as it is; several (a panel, both orders,
    repeats, a conversation's turns), each on a line of its own, labelled by judge, order
    and repeat.
    """
    said = [j for j in judgements if j.verdict is not None]
    if len(said) == 1:
        return said[0].verdict.reasoning if said[0].verdict else ""
    lines = []
    for j in said:
        label = j.model + (f" ({j.order})" if j.order else "")
        label += f" [repeat {j.repeat}]" if j.repeat is not None else ""
        lines.append(f"- {label}: {j.verdict.reasoning if j.verdict else ''}")
    return "\n".join(lines)


class Verdict(BaseModel):
    """A pointwise, binary or checklist rubric's verdict on one case (`Judge.grade`); a
    checklist's items, each met or not, are `result.items`.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    """The case's id (`case-1` for a case given without one)."""
    score: float | None = None
    """Pointwise: the score on the rubric's scale (the panel's mean, the repeats' mean)."""
    passed: bool | None = None
    """Whether the case met the rubric's bar (pass_at or pass_choice); None without one."""
    choice: str | None = None
    """Binary: the choice made (the panel's majority)."""
    criteria: dict[str, float] = Field(default_factory=dict)
    """Pointwise rubrics with criteria: each criterion's score."""
    reason: str = ""
    """The judges' reasoning, joined (one line per judgement when there are several; a
    checklist's: one line per item, met or not)."""
    judgements: list[Judgement] = Field(default_factory=list)
    """Every judge call behind the verdict, as results.jsonl holds them (raw replies too)."""
    usage: Usage = Field(default_factory=Usage)
    """What the calls cost (nothing when the reply cache answered)."""
    result: CaseResult
    """The whole results.jsonl line a run would hold for the case (repeats, stability,
    turns, probabilities, the cascade's tier)."""

    @classmethod
    def of(cls, result: CaseResult) -> Verdict:
        """The verdict of a graded case (GradeError when it failed)."""
        result = checked(result)
        return cls(
            score=result.score,
            passed=result.passed,
            choice=result.choice,
            criteria=result.criteria,
            **graded_fields(result),
        )


class Comparison(BaseModel):
    """A pairwise rubric's verdict on two answers to one case (`Judge.compare`): every
    judge asked in both orders (unless flip=False), the orders reconciled by the flip
    policy and the panel combined.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    """The pair's id (`case-1` for cases given without one)."""
    winner: Winner | None = None
    """Winner.NEW, Winner.OLD or Winner.TIE; None when the `drop` flip policy dropped a
    pair whose orders disagreed."""
    consistent: bool | None = None
    """Whether every judge gave the same verdict in both orders (None with flip=False)."""
    judge_winners: dict[str, Winner | None] = Field(default_factory=dict)
    """Each judge's verdict, its two orders reconciled."""
    reason: str = ""
    """The judges' reasoning, one line per judgement (judge and order named)."""
    judgements: list[Judgement] = Field(default_factory=list)
    """Every judge call, each order of each judge (`order`: "old-new" or "new-old")."""
    usage: Usage = Field(default_factory=Usage)
    """What the calls cost (nothing when the reply cache answered)."""
    result: CaseResult
    """The whole results.jsonl line a pairwise run would hold for the pair."""

    @classmethod
    def of(cls, result: CaseResult) -> Comparison:
        """The comparison of a judged pair (GradeError when it failed)."""
        result = checked(result)
        return cls(
            winner=result.winner,
            consistent=result.consistent,
            judge_winners=result.judge_winners,
            **graded_fields(result),
        )


def items_reason(result: CaseResult) -> str:
    """A checklist's reasoning: each item, met or not, with the judge's reason for it."""
    return "\n".join(
        f"- {'met' if i.met else 'not met'} [{i.points}] {i.criterion}: {i.reasoning}"
        for i in result.items or []
    )


def graded_fields(result: CaseResult) -> dict[str, Any]:
    """What a Verdict and a Comparison both say of a graded case: its id, the judges'
    reasoning, every judgement (a cascade's screen first) and what they cost, the line.
    """
    judgements = result.all_judgements
    return {
        "id": result.id,
        "reason": items_reason(result) if result.items else reason_of(result.judgements),
        "judgements": judgements,
        "usage": usage_of(judgements),
        "result": result,
    }


def checked(result: CaseResult) -> CaseResult:
    """A graded case as it is; GradeError with every raw reply when it failed."""
    if result.status is CaseStatus.OK:
        return result
    failed = [j for j in result.all_judgements if j.verdict is None]
    raise GradeError(
        f"the judge could not grade case {result.id!r}: {result.error}",
        case_id=result.id,
        reasons=tuple(f"{j.model}: {j.error}" for j in failed if j.error),
        raw=tuple(j.raw for j in result.all_judgements if j.raw is not None),
        hint="the raw replies are the error's `raw`; a reply cut off needs a higher "
        "max_tokens, one that does not fit the rubric a clearer prompt or another judge",
    )
