"""The judging commands as functions: each takes what its command takes (the dataset, the
rubric, the judging flags and the gate's thresholds as keyword arguments), prepares its job
as the command does (`commands.jobs`), runs it on the spine (`running.job.run_job`) into
a run directory, and returns the finished `Run`.

Errors: what the command line exits 2 on (a rubric, a dataset or settings that are not
usable; nothing is called or written) is raised as an `InputError`; what it exits 3 on
before the run could finish (the judge unusable, `max_cost` reached, an interrupt) as a
`RunIncompleteError`, the results so far kept for a resume. A run that finished is a `Run`,
even when more cases failed than `max_failures` allows (`exit_code` 3) or its gate failed
(1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgecli.api.argv import command_line
from judgecli.api.runs import Dataset, Preparing, Run, run_prepared
from judgecli.api.settings import COMMAND_LINE_ONLY, choice, read_settings
from judgecli.commands.jobs import Sides, prepare_pairwise, prepare_score
from judgecli.commands.setup import GateAsked
from judgecli.deciding.gate import GateOn, GateSpec
from judgecli.grading.debias import FlipPolicy
from judgecli.settings.flag_spec import FlagField
from judgecli.settings.flags import CHECKLIST_FLAGS, flag_fields
from judgecli.settings.gate_flags import PAIRWISE, SCORE, thresholds_of

if TYPE_CHECKING:
    from judgecli.result import CaseResult
    from judgecli.rubric import Rubric
    from judgecli.summary.pairwise import PairwiseSummary
    from judgecli.summary.score import ScoreSummary

GATE_OWN = ("on", "sequential", "labels", "fdr")
PAIR_OWN = ("flip", "flip_policy", "allow_partial")


def offered(without: frozenset[str] = frozenset()) -> list[FlagField]:
    """The shared flags a command's function takes: its command's, but the command line's
    own.
    """
    left_out = without | COMMAND_LINE_ONLY
    return [shared for shared in flag_fields() if shared.name not in left_out]


def gate_words(asked: GateAsked) -> list[tuple[str, Any, Any]]:
    """A score or pairwise gate's own options, as command_line writes them."""
    return [
        ("--on", asked.gate.on, GateOn.POINT),
        ("--sequential", asked.sequential, False),
        ("--alpha", asked.alpha, None),
        ("--labels", asked.labels, None),
        ("--fdr", asked.fdr, False),
    ]


def score_dataset(
    dataset: Dataset,
    *,
    rubric: str | Path | Rubric,
    model: str | Sequence[str] | None = None,
    api_base: str | None = None,
    out: str | Path | None = None,
    cache: bool = True,
    on: GateOn | str = GateOn.POINT,
    sequential: bool = False,
    labels: str | Path | None = None,
    fdr: bool = False,
    on_result: Callable[[CaseResult], None] | None = None,
    **settings: Any,
) -> Run[ScoreSummary]:
    """Grade every case of a dataset with a pointwise, binary or checklist rubric: `judge
    score`.

    Args:
        dataset: A JSONL, CSV or Parquet file, `hf://owner/name[:split]`, or the cases
            themselves (dicts with a dataset row's keys, or `Case`s), which the run keeps
            as RUN_DIR/inputs/dataset.jsonl.
        rubric: A library rubric's name, a YAML file, or a `Rubric`.
        model: The judge's LiteLLM model string, or a list for a panel (None: the
            rubric's `judge: {model}`).
        api_base: An OpenAI-compatible server's endpoint (`--api-base`).
        out: The run directory. None: a new one, runs/<UTC time>-score-<rubric> under the
            current directory (as the command line's default, with a -2, -3... suffix
            when that name is taken).
        cache: False: neither read nor write the reply cache (`--no-cache`).
        on: What the thresholds compare: `"point"`, `"lower-bound"`, `"corrected"`,
            `"corrected-lower-bound"` or `"sequential"` (`--on`).
        sequential: Stop as soon as the gated number's confidence sequence decides.
        labels: Human labels of some cases: report (and gate on) the corrected estimate.
        fdr: Mark categories by Benjamini-Hochberg instead of Holm.
        on_result: Called with each case's result as it is written.
        **settings: The judging flags by their JudgeFlags names (`concurrency`, `rpm`,
            `max_cost`, `repeats`, `temperature`, `limit`, `sample`, `seed`, `field`,
            `max_failures`, `resume`, `force`, `shard`, `items_per_call`, ...) and the
            gate's thresholds (`min_pass_rate`, `min_mean`, `min_stability`,
            `min_pass_k`; with a rubric's tool-call check `min_tool_f1`,
            `min_tool_recall`, `min_tool_precision`; with a checklist rubric
            `min_checklist_score`). A rubric that only checks tool calls (`tool-calls`)
            needs no `model`.

    Returns:
        The finished run: `summary` (summary.json), `results`, `run_dir`, `exit_code`.
    """
    read = read_settings(
        {"model": model, "api_base": api_base, "out": out, "cache": cache, **settings},
        caller="score_dataset",
        flags=offered(),
        thresholds=thresholds_of(SCORE),
        own=("dataset", "rubric", *GATE_OWN, "on_result"),
    )
    gate = GateSpec.of(read.thresholds, on=choice(GateOn, "on", on))
    asked = GateAsked(gate, sequential=sequential, labels=as_path(labels), fdr=fdr)
    with Preparing("score", rubric, read.flags) as prep:
        path = prep.dataset(dataset, "dataset")
        job = prepare_score(path, prep.rubric, prep.flags, asked)
        argv = command_line(
            "score",
            [path],
            prep.flags,
            read.thresholds,
            ("--rubric", prep.rubric_word, None),
            *gate_words(asked),
        )
        return run_prepared(job, argv=argv, on_result=on_result)


def compare_datasets(
    old: Dataset,
    new: Dataset,
    *,
    rubric: str | Path | Rubric = "pairwise",
    model: str | Sequence[str] | None = None,
    api_base: str | None = None,
    out: str | Path | None = None,
    cache: bool = True,
    flip: bool = True,
    flip_policy: FlipPolicy | str = FlipPolicy.TIE,
    allow_partial: bool = False,
    on: GateOn | str = GateOn.POINT,
    sequential: bool = False,
    labels: str | Path | None = None,
    fdr: bool = False,
    on_result: Callable[[CaseResult], None] | None = None,
    **settings: Any,
) -> Run[PairwiseSummary]:
    """Compare NEW's answers against OLD's, case by case (joined on id): `judge pairwise`.

    Args:
        old: The current answers: a path (JSONL, CSV, Parquet, hf://...) or rows, kept as
            RUN_DIR/inputs/old.jsonl.
        new: The candidate answers, the same way (inputs/new.jsonl).
        rubric: A pairwise rubric (default: the library's `pairwise`).
        model: The judge, or a list for a panel (None: the rubric's).
        api_base: An OpenAI-compatible server's endpoint.
        out: The run directory (None: a new runs/<UTC time>-pairwise-<rubric>).
        cache: False: no reply cache.
        flip: Judge each pair in both orders (the position-bias fix).
        flip_policy: A judge whose two orders disagree says `"tie"`, `"drop"` or `"vote"`.
        allow_partial: Judge only the ids present in both (reported) instead of refusing.
        on: What the thresholds compare (see score_dataset).
        sequential: Stop as soon as the win rate's confidence sequence decides.
        labels: Human labels of some pairs (the corrected win rate).
        fdr: Mark categories by Benjamini-Hochberg instead of Holm.
        on_result: Called with each pair's result as it is written.
        **settings: The judging flags and the gate's thresholds (`min_win_rate`,
            `max_loss_rate`, `min_consistency`, `min_stability`).

    Returns:
        The finished run (`summary.win_rate`, `summary.win_rate_ci`, `summary.gate`, ...).
    """
    read = read_settings(
        {"model": model, "api_base": api_base, "out": out, "cache": cache, **settings},
        caller="compare_datasets",
        flags=offered(CHECKLIST_FLAGS),
        thresholds=thresholds_of(PAIRWISE),
        own=("old", "new", "rubric", *PAIR_OWN, *GATE_OWN, "on_result"),
    )
    gate = GateSpec.of(read.thresholds, on=choice(GateOn, "on", on))
    asked = GateAsked(gate, sequential=sequential, labels=as_path(labels), fdr=fdr)
    policy = choice(FlipPolicy, "flip_policy", flip_policy)
    sides = Sides(flip=flip, flip_policy=policy, allow_partial=allow_partial)
    with Preparing("pairwise", rubric, read.flags) as prep:
        old_path, new_path = prep.dataset(old, "old"), prep.dataset(new, "new")
        job = prepare_pairwise(old_path, new_path, prep.rubric, prep.flags, asked, sides)
        argv = command_line(
            "pairwise",
            [old_path, new_path],
            prep.flags,
            read.thresholds,
            ("--rubric", prep.rubric_word, None),
            *pair_words(sides),
            *gate_words(asked),
        )
        return run_prepared(job, argv=argv, on_result=on_result)


def pair_words(sides: Sides) -> list[tuple[str, Any, Any]]:
    """How pairs are compared, as command_line writes it."""
    return [
        ("--flip/--no-flip", sides.flip, True),
        ("--flip-policy", sides.flip_policy, FlipPolicy.TIE),
        ("--allow-partial", sides.allow_partial, False),
    ]


def as_path(value: str | Path | None) -> Path | None:
    """A path setting as a Path (None stays None)."""
    return None if value is None else Path(value)
