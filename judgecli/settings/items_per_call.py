"""--items: how a `checklist` rubric asks the judge about a case's items (one call
per item, or all of a case's items in one call), and what a checklist run cannot be asked
(docs/checklists.md).

One item per call is the default. It is what HealthBench does, and it suits the judges a
grammar holds to a schema: each reply is one short object (`{"reasoning", "met"}`, the shape
measured valid 24 of 24 times from SmolLM2-135M under llama.cpp's grammar,
docs/development.md), where a reply for n items is n reasonings long, so a small
--max-tokens cuts it off, and a small model loses track of which item it is on. `all` costs
one call per case instead of n, for judges that handle a long structured reply.
"""

from __future__ import annotations

from enum import StrEnum

from judgecli.errors import ConfigError
from judgecli.rubric import Rubric, RubricKind
from judgecli.settings.score_mode import ScoreMode


class ItemsPerCall(StrEnum):
    """--items: the checklist items one judge call grades."""

    ONE = "one"
    """One call per item: each reply says whether one criterion is met."""
    ALL = "all"
    """One call per case: the reply says, item by item, whether each is met."""


def parse_items_per_call(text: str | None, rubric: Rubric) -> ItemsPerCall:
    """--items as an ItemsPerCall; ConfigError for another value, or for the flag on
    a rubric that grades no checklist. It has no JUDGE_* variable: one set for every run
    would refuse the runs of other rubrics (and its name would not fit `--help` at 80
    columns).
    """
    if text is None:
        return ItemsPerCall.ONE
    try:
        mode = ItemsPerCall(text.strip().lower())
    except ValueError:
        raise ConfigError(
            f"--items {text!r} is not one of: {', '.join(ItemsPerCall)}",
            hint="one (a call per item, the default) or all (a case's items in one call)",
        ) from None
    if rubric.kind is not RubricKind.CHECKLIST:
        raise ConfigError(
            f"--items: rubric {rubric.name!r} is {rubric.kind.value}, and only a "
            "checklist rubric grades items",
            hint="drop --items, or grade the cases' rubric_items with --rubric checklist",
        )
    return mode


def check_checklist_run(
    rubric: Rubric,
    *,
    command: str,
    judges: int,
    repeats: int,
    screen: bool,
    score_mode: ScoreMode,
) -> None:
    """ConfigError (exit 2, nothing called) for what a checklist rubric is not graded with:
    a command other than score, a panel of `judges`, --repeats, a --screen cascade, logprob
    scores.
    """
    if rubric.kind is not RubricKind.CHECKLIST:
        return
    if command != "score":
        raise ConfigError(
            f"rubric {rubric.name!r} grades each case's checklist, which `judge {command}` "
            "does not do",
            hint="grade the cases with judge score DATASET --rubric " + rubric.name,
        )
    refused = [
        ("a panel of judges", judges > 1),
        ("--repeats", repeats > 1),
        ("--screen", screen),
        ("--score-mode logprob", score_mode is not ScoreMode.SAMPLE),
    ]
    given = [name for name, asked in refused if asked]
    if given:
        raise ConfigError(
            f"a checklist rubric ({rubric.name!r}) is graded by one judge, one sampled "
            f"verdict per item: {' and '.join(given)} would need a rule to combine verdicts "
            "of an item that judge does not have",
            hint="grade with one --model; to compare judges, run each and compare the runs "
            "(judge drift)",
        )
