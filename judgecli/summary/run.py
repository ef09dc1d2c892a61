"""RunSummary: the summary.json of any command (docs/results.md, "Stable keys"), one typed model per
command, told apart by `command`.

The summary is always computed from results.jsonl, never from the runner's memory, so a
resumed run and `judge report` give exactly the numbers a single uninterrupted run would.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.refine import RefineSummary
from judgecli.summary.score import ScoreSummary

RunSummary = Annotated[
    ScoreSummary | PairwiseSummary | CalibrateSummary | RefineSummary,
    Field(discriminator="command"),
]

SUMMARY: TypeAdapter[RunSummary] = TypeAdapter(RunSummary)


def parse_summary(text: str) -> RunSummary:
    """A summary.json's text as its command's model (pydantic's ValidationError when it is
    not one). Keys this version does not know are ignored: the contract lets later versions
    add keys, and `judge gate` must still read their summaries (docs/contract.md, "Stable keys").
    """
    return SUMMARY.validate_json(text, extra="ignore")


def summary_json(summary: RunSummary) -> dict[str, Any]:
    """The summary as summary.json holds it (and `--json` prints it): None left out."""
    return summary.model_dump(mode="json", exclude_none=True)
