"""ChatGPT's star ratings of OpenMEVA story endings, replayed as the results `judge score` writes.

Wang et al. (2023, "Is ChatGPT a Good NLG Evaluator?", arXiv 2303.04048) asked ChatGPT for
one to five stars for each of 5 systems' continuations of 200 OpenMEVA-ROC story
beginnings, and kept the stars beside the mean human rating of each continuation
(`data/openmeva.json` of SOURCE_REPOSITORY at SOURCE_COMMIT: 200 beginnings, each with its
systems' continuations under `gen`, each continuation's `score` holding `human` and
`chatgpt`). Each (beginning, system) becomes one pointwise CaseResult with the stars as
its score (status ok, one Judgement by "chatgpt"), and one labels.jsonl line with the human
mean as its label. The human means are averages of raters, in steps of 0.2, so they are
not points of any scale: that is what calibrate must cope with here.

The authors kept no reply text, tokens or cost; those stay empty or zero.

Their repository states no licence, so the repository cannot carry the file: the tests that
read it are opt-in. Put it at `$JUDGE_TEST_DATA/chatgpt_openmeva/openmeva.json` (MISSING
says so when it is not there).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgecli.result import CaseResult, CaseStatus, Judgement
from judgecli.verdict import Verdict
from tests.conftest import EXTERNAL_DATA, EXTERNAL_DATA_ENV

SOURCE_REPOSITORY = "https://github.com/krystalan/chatgpt_as_nlg_evaluator"
SOURCE_COMMIT = "982e7867eb27d0971b4cf8f7cb50f7cda5c5bdf1"
SOURCE_PATH = "data/openmeva.json"
PLACE = Path("chatgpt_openmeva") / "openmeva.json"
"""Where the file goes under $JUDGE_TEST_DATA."""
OPENMEVA = EXTERNAL_DATA / PLACE if EXTERNAL_DATA is not None else None


def missing_reason() -> str | None:
    """Why the OpenMEVA tests cannot run here (where to get the file), or None."""
    if OPENMEVA is not None and OPENMEVA.is_file():
        return None
    where = (
        f"{EXTERNAL_DATA_ENV} is not set"
        if OPENMEVA is None
        else f"there is no {OPENMEVA} ({EXTERNAL_DATA_ENV}={EXTERNAL_DATA})"
    )
    return (
        f"OpenMEVA ratings not found: {where}. Their repository states no licence, so this "
        f"one does not carry them: save {SOURCE_PATH} of {SOURCE_REPOSITORY} (commit "
        f"{SOURCE_COMMIT}) as ${EXTERNAL_DATA_ENV}/{PLACE.as_posix()}"
    )


MISSING = missing_reason()
MODEL = "chatgpt"
RUBRIC_HASH = "openmeva"


@dataclass(frozen=True)
class Rating:
    """One continuation: ChatGPT's stars and the mean human rating."""

    id: str
    """`{doc_id}/{system}`, unique over the file."""
    system: str
    stars: int
    human: float


def read_ratings(path: Path) -> list[Rating]:
    """Every rated continuation of an openmeva.json, beginnings in file order, systems in
    each one's order.
    """
    beginnings: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return [
        Rating(
            id=f"{beginning['doc_id']}/{system}",
            system=system,
            stars=generated["score"]["chatgpt"],
            human=generated["score"]["human"],
        )
        for beginning in beginnings
        for system, generated in beginning["gen"].items()
    ]


def case_result(rating: Rating) -> CaseResult:
    """The continuation as `grade_pointwise` would record one judge's score."""
    # Reasoning is required by Verdict; the paper's prompt asked for stars only.
    verdict = Verdict(reasoning="", score=float(rating.stars))
    return CaseResult(
        id=rating.id,
        status=CaseStatus.OK,
        category=rating.system,
        score=float(rating.stars),
        judgements=[Judgement(model=MODEL, verdict=verdict)],
        rubric_hash=RUBRIC_HASH,
    )


def result_lines(ratings: list[Rating]) -> Iterator[str]:
    """results.jsonl lines, one per continuation."""
    for rating in ratings:
        yield case_result(rating).model_dump_json(exclude_none=True) + "\n"


def label_lines(ratings: list[Rating]) -> Iterator[str]:
    """labels.jsonl lines: the mean human rating (a float) of each continuation."""
    for rating in ratings:
        yield json.dumps({"id": rating.id, "label": rating.human}) + "\n"


def write_files(directory: Path, ratings: list[Rating]) -> tuple[Path, Path]:
    """Write results.jsonl and labels.jsonl into `directory`; return both paths."""
    results, labels = directory / "results.jsonl", directory / "labels.jsonl"
    results.write_text("".join(result_lines(ratings)), encoding="utf-8")
    labels.write_text("".join(label_lines(ratings)), encoding="utf-8")
    return results, labels
