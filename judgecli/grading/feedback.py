"""The self-refine loop's rules, shared by `judge refine` (commands.refine) and the Python
API's runtime guard (api.guard): the feedback template and its checks, the judges' advice
drawn from their judgements, the success bar an answer must reach, and the self-preference
warning when the generator also judges.
"""

from __future__ import annotations

import string

from judgecli.errors import ConfigError, RubricError
from judgecli.result import Judgement
from judgecli.rubric import Rubric, RubricKind

TEMPLATE_FIELDS = ("answer", "feedback")
DEFAULT_FEEDBACK_TEMPLATE = (
    "Your previous answer was:\n{answer}\n\n"
    "A reviewer rated it below the bar and said:\n{feedback}\n\n"
    "Write an improved answer to the request above. Reply with the answer only."
)


def check_template(template: str) -> None:
    """A feedback template may use {answer} and {feedback} (and {{ }} for braces); it must use
    {feedback}, or the generator would never see what to improve.
    """
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as err:
        raise ConfigError(
            f"--feedback-template: {err}", hint="write {{ and }} for literal braces"
        ) from None
    unknown = [n for n in names if n not in TEMPLATE_FIELDS]
    if unknown:
        raise ConfigError(
            f"--feedback-template uses {{{unknown[0]}}}; only {{answer}} and {{feedback}} exist",
            hint="write {{ and }} for literal braces",
        )
    if "feedback" not in names:
        raise ConfigError(
            "--feedback-template has no {feedback} placeholder",
            hint="the judge's feedback goes where {feedback} is",
        )


def render_feedback(template: str, *, answer: str, feedback: str) -> str:
    """The feedback part of the next request, from a checked template."""
    return template.format_map({"answer": answer, "feedback": feedback})


def feedback_of(judgements: list[Judgement]) -> str:
    """The judges' advice: each one's feedback, else its reasoning (labelled by judge, and
    by repeat under --repeats, when there are several).
    """
    said = [
        (j.model + (f" [repeat {j.repeat}]" if j.repeat is not None else ""), j.verdict)
        for j in judgements
        if j.verdict is not None
    ]
    if len(said) == 1:
        return said[0][1].feedback or said[0][1].reasoning
    return "\n".join(f"- {label}: {v.feedback or v.reasoning}" for label, v in said)


def success_bar(rubric: Rubric, success_rating: float | None) -> float | None:
    """The score an answer must reach (pointwise), or None when the rubric's pass_choice
    decides (binary). ConfigError when there is no bar to reach.
    """
    if rubric.kind is RubricKind.PAIRWISE:
        raise RubricError(
            f"rubric {rubric.name!r} is pairwise; a refine loop grades one answer",
            hint="use a pointwise or binary rubric",
        )
    if rubric.kind is RubricKind.BINARY:
        if success_rating is not None:
            raise ConfigError(
                "--success-rating needs a pointwise rubric",
                hint="a binary rubric's pass_choice is the bar",
            )
        return None
    assert rubric.scale is not None
    bar = success_rating if success_rating is not None else rubric.pass_at
    if bar is None:
        raise ConfigError(
            f"rubric {rubric.name!r} has no pass_at", hint="give the bar with --success-rating"
        )
    if not rubric.scale.min <= bar <= rubric.scale.max:
        raise ConfigError(
            f"--success-rating {bar:g} is outside the scale {rubric.scale.min:g}"
            f"..{rubric.scale.max:g}"
        )
    return bar


def reaches_bar(bar: float | None, *, score: float | None, passed: bool | None) -> bool | None:
    """Whether a graded answer passes: its score against a pointwise bar, else (binary) the
    verdict's own pass (its pass_choice).
    """
    if bar is None:
        return passed
    return score is not None and score >= bar


def self_preference_warning(generator: str, judges: list[str]) -> str | None:
    """A warning when the generator also judges (models tend to rate their own text higher)."""
    if generator not in judges:
        return None
    return (
        f"{generator} both generates and judges: models tend to prefer their own answers "
        "(self-preference); use a different --model to judge"
    )
