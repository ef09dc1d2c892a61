"""RunSummary: the summary.json of any command (docs/results.md, "Stable keys"), one typed
model per command, told apart by `command`; reading one back (`read_summary`), and a finished
run's summary with its results (`load_run`).

The summary is always computed from results.jsonl, never from the runner's memory, so a
resumed run and `judge report` give exactly the numbers a single uninterrupted run would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from judgecli.errors import InputError
from judgecli.result import CaseResult
from judgecli.store import RESULTS, RUN_INFO, SUMMARY, read_results
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.facts import Command
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.refine import RefineSummary
from judgecli.summary.score import ScoreSummary

RunSummary = Annotated[
    ScoreSummary | PairwiseSummary | CalibrateSummary | RefineSummary,
    Field(discriminator="command"),
]

SUMMARY_MODEL: TypeAdapter[RunSummary] = TypeAdapter(RunSummary)


def parse_summary(text: str) -> RunSummary:
    """A summary.json's text as its command's model (pydantic's ValidationError when it is
    not one). Keys this version does not know are ignored: the contract lets later versions
    add keys, and `judge gate` must still read their summaries (docs/contract.md, "Stable keys").
    """
    return SUMMARY_MODEL.validate_json(text, extra="ignore")


def summary_json(summary: RunSummary) -> dict[str, Any]:
    """The summary as summary.json holds it (and `--json` prints it): None left out."""
    return summary.model_dump(mode="json", exclude_none=True)


def read_summary(path: Path) -> RunSummary:
    """A run's summary.json, validated as its command's summary."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file", hint="pass a run's summary.json") from None
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror}") from None
    try:
        return parse_summary(text)
    except ValidationError as err:
        first = err.errors()[0]
        if first["type"] == "json_invalid":
            # pydantic's own words for broken JSON ("(: Invalid JSON...") say nothing a
            # user can act on; a JSONL dataset or results file is the usual mix-up.
            raise InputError(
                f"{path}: not a judge summary.json: {json_problem(text)}",
                hint="pass the summary.json of a finished run (RUN_DIR/summary.json)",
            ) from None
        raise InputError(f"{path}: not a judge summary.json ({summary_problem(first)})") from None


def json_problem(text: str) -> str:
    """What is wrong with a text that is not one JSON document."""
    try:
        json.loads(text)
    except json.JSONDecodeError as err:
        if err.msg == "Extra data":
            return f"holds more than one JSON value (line {err.lineno}): JSON Lines?"
        return f"not JSON ({err.msg} at line {err.lineno}, column {err.colno})"
    return "not JSON"


def summary_problem(error: ErrorDetails) -> str:
    """One validation error of a summary.json, said as `field: problem`."""
    commands = ", ".join(c.value for c in Command)
    if error["type"] == "union_tag_not_found":
        return f"command: Field required (one of {commands})"
    if error["type"] == "union_tag_invalid":
        return f"command: {error.get('ctx', {}).get('tag')!r} is not one of {commands}"
    # Past the tag, the location starts with the command's name: it says which model.
    where = ".".join(str(p) for p in error["loc"][1:])
    return f"{where}: {error['msg']}" if where else error["msg"]


def load_run(run_dir: Path) -> tuple[RunSummary, list[CaseResult]]:
    """A finished run's summary and results (InputError when it is not one). A folder that
    is no run at all gets an error that does not suggest `judge resume`: only a run.json
    makes a run that can be continued.
    """
    if not (run_dir / SUMMARY).exists() and not (run_dir / RUN_INFO).exists():
        raise InputError(
            f"{run_dir}: not a judge run directory (no {SUMMARY} or {RUN_INFO})",
            hint="pass a directory a judge command wrote, e.g. runs/<time>-<command>-<rubric>",
        )
    if not (run_dir / SUMMARY).exists():
        raise InputError(
            f"{run_dir}: no {SUMMARY} (not a finished run)",
            hint=f"an interrupted run is continued with: judge resume {run_dir}",
        )
    results_path = run_dir / RESULTS
    results = list(read_results(results_path)) if results_path.exists() else []
    return read_summary(run_dir / SUMMARY), results
