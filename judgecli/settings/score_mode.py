"""--score-mode: whether a judgement's score is the verdict the judge wrote or the verdict
weighed by its token probabilities (docs/logprobs.md), and which rubrics allow the latter.
"""

from __future__ import annotations

from enum import StrEnum

from judgecli.errors import ConfigError
from judgecli.rubric import Rubric


class ScoreMode(StrEnum):
    """--score-mode: where a judgement's score comes from."""

    SAMPLE = "sample"
    """The verdict the judge wrote: one sample of what it might have said."""
    LOGPROB = "logprob"
    """The judge's token log-probabilities at the verdict: the expected score over the scale
    points (G-Eval), the probability of each choice or winner (docs/logprobs.md)."""


def parse_score_mode(text: str | None, rubric: Rubric) -> ScoreMode:
    """--score-mode (or JUDGE_SCORE_MODE) as a ScoreMode; ConfigError for another value, or
    for logprob scores on a rubric they are not defined for.
    """
    if text is None:
        return ScoreMode.SAMPLE
    try:
        mode = ScoreMode(text.strip().lower())
    except ValueError:
        allowed = ", ".join(ScoreMode)
        raise ConfigError(f"--score-mode {text!r} is not one of: {allowed}") from None
    if mode is ScoreMode.LOGPROB and rubric.scale is not None:
        if rubric.criteria:
            raise ConfigError(
                f"--score-mode logprob: rubric {rubric.name!r} scores criteria, and expected "
                "scores are read for one score only",
                hint="use --score-mode sample with this rubric, or a rubric without criteria",
            )
        if not rubric.scale.integer:
            raise ConfigError(
                f"--score-mode logprob: rubric {rubric.name!r} has a continuous scale, and "
                "expected scores are taken over the points of an integer scale",
                hint="use --score-mode sample with this rubric, or give it an integer scale",
            )
    return mode
