"""`load_rubric`: a rubric by name or file, loaded as every command loads one."""

from __future__ import annotations

from pathlib import Path

from judgecli.commands.setup import named_rubric
from judgecli.rubric import Rubric


def load_rubric(rubric: str | Path) -> Rubric:
    """Load a rubric: a library rubric's name (`"helpfulness"`; the folders of
    $JUDGE_RUBRICS_PATH first) or a YAML file, its `extends:` chain merged and every key
    checked.

    Args:
        rubric: The rubric's name or path.

    Returns:
        The validated rubric (a pydantic model: `model_copy(update=...)` makes a variant).

    Raises:
        judgecli.errors.RubricError: No such rubric (the nearest names suggested), or a
            file that is not a valid rubric (its file and line named).
    """
    return named_rubric(rubric)[1]
