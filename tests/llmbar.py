"""LLMBar's published judge verdicts, replayed as the results `judge pairwise` writes.

LLMBar (Zeng et al., ICLR 2024; tests/data/llmbar/SOURCE.md) asked GPT-4 and
ChatGPT to pick the better of two outputs, once in each presentation order, and kept
every reply in `result.json` with the verdict already mapped back to the original
numbering ("1"/"2", null when the authors could not parse the reply). Here output_1 is
OLD and output_2 is NEW, "swap = False" is Order.OLD_NEW (output_1 shown as "Output (a)")
and "swap = True" is Order.NEW_OLD, and each instance becomes the CaseResult that
`grading.grade_pairwise` would have built from the same replies (one judge, flip on,
FlipPolicy.TIE). Only comparison strategies load: the Rating* strategies score each
output on its own and keep no reply per order.

Tokens, cost, latency and attempts are not in the files and stay at zero.

For `judge calibrate --results`, `write_calibration_files` writes the replayed results and
the gold labels (as "old"/"new", or as LLMBar's own 1/2 for `--label-map 1=old,2=new`), and
`count_unparsed` reads straight from result.json what judge's failed cases hide from the
authors' counts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgecli.grading.debias import FlipPolicy, combine_winners, reconcile_flip, to_winner
from judgecli.result import CaseResult, CaseStatus, Judgement, Order, Winner
from judgecli.verdict import Position, Verdict
from tests.conftest import DATA

# MIT-licensed: the files the tests read are in the repository (SOURCE.md, LICENSE).
LLMBAR = DATA / "llmbar" / "Dataset"
RUBRIC_HASH = "llmbar"

# result.json key of each presentation order, in the order grade_pairwise asks them.
ORDERS = {"swap = False": Order.OLD_NEW, "swap = True": Order.NEW_OLD}
# LLMBar's output numbering (gold `label` and mapped-back `winner`) as judge's answers.
NUMBERED = {1: Winner.OLD, 2: Winner.NEW}
NUMBER_OF = {winner: number for number, winner in NUMBERED.items()}
# The --label-map that reads LLMBar's numbering.
LABEL_MAP = "1=old,2=new"

COUNT = re.compile(r"(\d+) / (\d+) = [0-9.]+%")


def run_dir(subset: str, evaluator: str, strategy: str) -> Path:
    """Where one evaluator/strategy run over a set lives, e.g. ("LLMBar/Natural", "GPT-4",
    "Vanilla")."""
    return LLMBAR / subset / "evaluators" / evaluator / strategy


@dataclass(frozen=True)
class Replay:
    """One run of one LLMBar evaluator, as judge results plus the gold answer per case."""

    results: tuple[CaseResult, ...]
    gold: tuple[Winner, ...]


def load_replay(directory: Path, *, model: str) -> Replay:
    """Convert `directory/result.json` into one CaseResult per instance, in file order."""
    instances = json.loads((directory / "result.json").read_text(encoding="utf-8"))
    results = tuple(
        case_result(str(index), instance, model=model) for index, instance in enumerate(instances)
    )
    return Replay(results=results, gold=tuple(NUMBERED[i["label"]] for i in instances))


def position_of(winner: Winner, order: Order) -> Position:
    """The slot the judge named, given the answer it picked and which answer sat in A.

    LLMBar stores the answer ("1"/"2"); judge stores the slot and maps it back with
    `debias.to_winner`. Output (a) holds OLD in Order.OLD_NEW and NEW in Order.NEW_OLD.
    """
    old_in_a = order is Order.OLD_NEW
    return Position.A if (winner is Winner.OLD) == old_in_a else Position.B


def judgement_of(reply: dict[str, Any], order: Order, *, model: str) -> Judgement:
    """One order's reply; a null winner is a failed judgement with the reply kept."""
    if "completion" not in reply:
        raise ValueError("no per-order reply: Rating* strategies cannot be replayed pairwise")
    text, finish_reason = reply["completion"]
    if reply["winner"] is None:
        error = f"invalid verdict: LLMBar found no winner (finish_reason {finish_reason!r})"
        return Judgement(model=model, order=order, raw=text, error=error)
    slot = position_of(NUMBERED[int(reply["winner"])], order)
    return Judgement(
        model=model, order=order, raw=text, verdict=Verdict(reasoning=text, winner=slot)
    )


def mapped_back(judgement: Judgement) -> Winner | None:
    """The answer a judgement picked, through judge's own mapping; None when it failed."""
    verdict, order = judgement.verdict, judgement.order
    if verdict is None or verdict.winner is None or order is None:
        return None
    return to_winner(verdict.winner, order)


def case_result(case_id: str, instance: dict[str, Any], *, model: str) -> CaseResult:
    """One instance as grade_pairwise builds it: any failed order fails the case."""
    replies = instance["results"][-1]  # earlier steps are self-generated metrics/references
    judgements = [judgement_of(replies[key], order, model=model) for key, order in ORDERS.items()]
    common: dict[str, Any] = {
        "id": case_id,
        "rubric_hash": RUBRIC_HASH,
        "lengths": {"old": len(instance["output_1"]), "new": len(instance["output_2"])},
        "judgements": judgements,
    }
    failed = [j for j in judgements if j.verdict is None]
    if failed:
        error = "; ".join(f"{j.model} ({j.order}): {j.error}" for j in failed)
        return CaseResult(status=CaseStatus.FAILED, error=error, **common)
    first, second = (mapped_back(j) for j in judgements)
    assert first is not None
    assert second is not None
    flip = reconcile_flip(first, second, FlipPolicy.TIE)
    return CaseResult(
        status=CaseStatus.OK,
        winner=combine_winners([flip.winner] if flip.winner is not None else []),
        consistent=flip.consistent,
        judge_winners={model: flip.winner},
        **common,
    )


@dataclass(frozen=True)
class Statistics:
    """The authors' `statistics.json` as integer counts out of `n` instances."""

    n: int
    correct_false: int
    correct_true: int
    correct_both: int
    equal: int
    correct_average: float
    """Acc. in percent, exactly the float the authors printed."""


def read_statistics(directory: Path) -> Statistics:
    """Parse "95 / 100 = 95.0%" fields into counts; every field must share one n."""
    raw = json.loads((directory / "statistics.json").read_text(encoding="utf-8"))
    counts: dict[str, int] = {}
    totals = set()
    for key in ("correct_False", "correct_True", "correct_both", "equal"):
        match = COUNT.fullmatch(raw[key])
        if match is None:
            raise ValueError(f"{directory}/statistics.json: {key} = {raw[key]!r} is not k / n = p%")
        counts[key.lower()] = int(match[1])
        totals.add(int(match[2]))
    if len(totals) != 1:
        raise ValueError(f"{directory}/statistics.json: fields count out of different n {totals}")
    return Statistics(
        n=totals.pop(),
        correct_average=float(raw["correct_average"].removesuffix("%")),
        **counts,
    )


def label_lines(replay: Replay, *, numbered: bool) -> Iterator[str]:
    """labels.jsonl lines of the gold answers: "old"/"new", or LLMBar's 1/2 when `numbered`."""
    for result, gold in zip(replay.results, replay.gold, strict=True):
        label: int | str = NUMBER_OF[gold] if numbered else gold.value
        yield json.dumps({"id": result.id, "label": label}) + "\n"


def write_calibration_files(
    directory: Path, replay: Replay, *, numbered: bool
) -> tuple[Path, Path]:
    """Write results.jsonl and labels.jsonl for `judge calibrate --results`; return both."""
    results, labels = directory / "results.jsonl", directory / "labels.jsonl"
    lines = (r.model_dump_json(exclude_none=True) + "\n" for r in replay.results)
    results.write_text("".join(lines), encoding="utf-8")
    labels.write_text("".join(label_lines(replay, numbered=numbered)), encoding="utf-8")
    return results, labels


@dataclass(frozen=True)
class RawVerdict:
    """One instance as result.json has it: gold 1/2 and the winner of each order."""

    label: int
    unswapped: str | None
    """"swap = False" winner: "1", "2", or None when unparsed."""
    swapped: str | None
    """"swap = True" winner, already mapped back to the original numbering."""


def read_raw_verdicts(directory: Path) -> list[RawVerdict]:
    """result.json's verdicts untouched by judge's types (an oracle for the replay)."""
    instances = json.loads((directory / "result.json").read_text(encoding="utf-8"))
    return [
        RawVerdict(
            label=i["label"],
            unswapped=i["results"][-1]["swap = False"]["winner"],
            swapped=i["results"][-1]["swap = True"]["winner"],
        )
        for i in instances
    ]


@dataclass(frozen=True)
class Unparsed:
    """What the instances with a null winner add to the authors' counts.

    judge fails such an instance as a whole (never guess a verdict), so none of it reaches
    a judge statistic; the authors keep it in n, count the null as wrong, and count the
    other order's verdict, when parsed and right, in its order's accuracy.
    """

    failed: int
    """Instances null in at least one order: judge's failed cases."""
    both: int
    """Of those, null in both orders (the authors count them as "equal")."""
    correct_false: int
    """Of those, right in "swap = False" (so null only in "swap = True")."""
    correct_true: int
    """Of those, right in "swap = True"."""


def count_unparsed(directory: Path) -> Unparsed:
    """Count the null verdicts of a run's result.json."""
    failed = [v for v in read_raw_verdicts(directory) if None in (v.unswapped, v.swapped)]
    return Unparsed(
        failed=len(failed),
        both=sum(v.unswapped is None and v.swapped is None for v in failed),
        correct_false=sum(v.unswapped == str(v.label) for v in failed),
        correct_true=sum(v.swapped == str(v.label) for v in failed),
    )
