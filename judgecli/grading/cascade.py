"""The tiered cascade (`--screen MODEL`): every case goes to a cheap screen judge first, and
on to the strong judge(s) of `--model` only when the screen's verdict meets the
`--escalate` rule (escalate.py has the language).

The case then records which tier decided it (`tier`), and an escalated case keeps the
screen's own result (`screen`): its calls were paid for, and it is what the report
compares with the strong verdict. The strong tier grades exactly as a run without a screen
would (same plan, same prompts, both orders for pairwise), so an escalated case's verdict
is the one the strong judge would have given anyway.

Default rules, when --escalate is not given, send the cases where a screen's error is
most likely to change the outcome:
* pointwise with pass_at: a failed screen, a score next to the pass line (one scale point
  either side: `pass_at - 1 <= score < pass_at + 1`, the last failing and the first passing
  score, as `judge review export` calls borderline; a tenth of the scale on continuous
  scales), and low confidence when the rubric asks for one;
* binary: a failed screen and low confidence;
* pairwise: a failed screen and a position-inconsistent verdict (its two orders disagree);
  with --no-flip, low confidence instead.
"Low confidence" is a stated confidence under 0.8 (the rubric must ask for one).
A rubric that gives the default rule nothing to look at but failures (binary without
confidence, say) needs an explicit --escalate.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from judgecli.errors import ConfigError
from judgecli.grading.grade import GradingPlan
from judgecli.judge.protocol import JudgeClient
from judgecli.result import CaseResult, CaseStatus, Tier
from judgecli.rubric import Rubric, RubricKind
from judgecli.settings.config import RunConfig

if TYPE_CHECKING:
    # The rule language is imported by the functions of a run with a screen: every run
    # passes through this module, most without one.
    from judgecli.grading.escalate import EscalationRule, ScreenFacts

# Below this stated confidence a screen verdict escalates by default.
DEFAULT_LOW_CONFIDENCE = 0.8

ItemT = TypeVar("ItemT")
Grader = Callable[[JudgeClient, GradingPlan, ItemT], Awaitable[CaseResult]]


@dataclass(frozen=True)
class Cascade:
    """How a run's cases are screened: the screen's plan and the rule that escalates."""

    screen_plan: GradingPlan
    rule: EscalationRule

    @property
    def screen(self) -> str:
        """The screen judge's model string."""
        return self.screen_plan.models[0]


def plan_cascade(plan: GradingPlan, screen: str | None, rule_text: str | None) -> Cascade | None:
    """The run's cascade (None without --screen); ConfigError for a rule that is invalid or
    does not fit the rubric.
    """
    if screen is None:
        return None
    rule = escalation_rule(rule_text, plan.rubric, flip=plan.flip)
    return Cascade(screen_plan=replace(plan, models=[screen]), rule=rule)


def recorded_rule(config: RunConfig, cascade: Cascade | None) -> RunConfig:
    """The config with the rule the run really uses (the default spelled out), so run.json
    records it and a resume can check it is unchanged.
    """
    return config if cascade is None else config.model_copy(update={"escalate": cascade.rule.text})


def escalation_rule(text: str | None, rubric: Rubric, *, flip: bool) -> EscalationRule:
    """The --escalate rule, or the rubric's default one, checked against what the screen's
    verdict will hold.
    """
    from judgecli.grading.escalate import parse_rule

    rule = parse_rule(text if text is not None else default_rule_text(rubric, flip=flip))
    for name in sorted(rule.variables):
        problem = unavailable(name, rubric, flip=flip)
        if problem:
            raise ConfigError(
                f"--escalate {rule.text!r}: {name} {problem}",
                hint=f"the default for this rubric is: {default_or_none(rubric, flip=flip)}",
            )
    return rule


def unavailable(variable: str, rubric: Rubric, *, flip: bool) -> str | None:
    """Why a rule variable has no value under this rubric, or None when it has one."""
    kind = rubric.kind
    if variable == "score" and kind is not RubricKind.POINTWISE:
        return f"is for pointwise rubrics; {rubric.name!r} is {kind.value}"
    if variable == "passed" and not (
        kind is RubricKind.BINARY or (kind is RubricKind.POINTWISE and rubric.pass_at is not None)
    ):
        return f"needs a pass line (pass_at or choices); {rubric.name!r} has none"
    if variable in ("consistent", "winner") and kind is not RubricKind.PAIRWISE:
        return f"is for pairwise rubrics; {rubric.name!r} is {kind.value}"
    if variable == "consistent" and not flip:
        return "needs both orders, and --no-flip judges one"
    if variable == "confidence" and not rubric.confidence:
        return f"is not asked for: rubric {rubric.name!r} has no `confidence: true`"
    return None


def default_rule_text(rubric: Rubric, *, flip: bool) -> str:
    """The rule used without --escalate (see the module docstring); ConfigError when the
    rubric leaves it nothing but failures to look at.
    """
    text = default_or_none(rubric, flip=flip)
    if text is None:
        raise ConfigError(
            f"rubric {rubric.name!r} gives the screen nothing to escalate on but failures "
            "(no pass_at, no confidence, no flip)",
            hint='give a rule, e.g. --escalate "failed or passed == false"',
        )
    return text


def default_or_none(rubric: Rubric, *, flip: bool) -> str | None:
    """The default rule's text, or None when it would only test `failed`."""
    parts = ["failed"]
    if rubric.kind is RubricKind.POINTWISE and rubric.pass_at is not None:
        assert rubric.scale is not None
        band = rubric.scale.borderline_band
        low, high = rubric.pass_at - band, rubric.pass_at + band
        parts.append(f"(score >= {low:g} and score < {high:g})")
    if rubric.kind is RubricKind.PAIRWISE and flip:
        parts.append("not consistent")
    elif rubric.confidence:
        # Pairwise: both orders are the better signal (a judge can be sure and still
        # position-biased); confidence is the fallback only without them.
        parts.append(f"confidence < {DEFAULT_LOW_CONFIDENCE:g}")
    return " or ".join(parts) if len(parts) > 1 else None


def screen_facts(result: CaseResult) -> ScreenFacts:
    """What the rule sees of the screen's result. Confidence is the lowest the screen
    stated in any of its replies (both orders of a pair): one unsure reply is unsure.
    """
    from judgecli.grading.escalate import ScreenFacts

    confidences = [j.verdict.confidence if j.verdict else None for j in result.judgements]
    known = [c for c in confidences if c is not None]
    return ScreenFacts(
        failed=result.status is CaseStatus.FAILED,
        score=result.score,
        confidence=min(known) if known and len(known) == len(confidences) else None,
        consistent=result.consistent,
        passed=result.passed,
        winner=result.winner.value if result.winner is not None else None,
    )


def tiered(
    grade: Grader[ItemT], plan: GradingPlan, cascade: Cascade | None
) -> Callable[[JudgeClient, ItemT], Awaitable[CaseResult]]:
    """A grader for the run's items: `grade` with the plan, through the cascade if any."""

    async def one(client: JudgeClient, item: ItemT) -> CaseResult:
        if cascade is None:
            return await grade(client, plan, item)
        screened = await grade(client, cascade.screen_plan, item)
        if not cascade.rule.holds(screen_facts(screened)):
            return screened.model_copy(update={"tier": Tier.SCREEN})
        decided = await grade(client, plan, item)
        return decided.model_copy(update={"tier": Tier.STRONG, "screen": screened})

    return one
