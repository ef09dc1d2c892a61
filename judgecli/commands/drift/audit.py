"""The two runs a drift audits: what each is (AuditedRun: a finished run's summary, results
and run.json), whether they can be compared (one command, one kind of verdict), and what
differs in how their verdicts were made. Pure: `files` reads the runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgecli.errors import InputError
from judgecli.result import CaseResult, CaseStatus
from judgecli.rubric import RubricKind
from judgecli.settings.flag_spec import Role
from judgecli.settings.flags import flag_fields
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.drift import Difference
from judgecli.summary.facts import Command
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.run import RunSummary
from judgecli.summary.score import ScoreSummary

NOT_JUDGING = frozenset(
    {"command"}
    | {
        shared.flag.lands_in
        for shared in flag_fields()
        if shared.flag.lands_in and Role.VERDICTS not in shared.flag.roles
    }
)
"""Settings in run.json's config that say how a run went, not what its judge said: the
fields of the flags that change no verdict (declared without Role.VERDICTS), and the
command (check_comparable decides which commands' runs compare). They never count as a
difference of the judge."""


@dataclass(frozen=True)
class AuditedRun:
    """A finished, complete run as drift reads it."""

    path: Path
    summary: RunSummary
    results: list[CaseResult]
    info: dict[str, Any]
    """Its run.json ({} when it has none)."""


def verdict_kind(run: AuditedRun) -> RubricKind:
    """The kind of the run's verdicts, read from the run itself (the rubric file it named
    may have changed since: that is what drift is for).
    """
    if isinstance(run.summary, PairwiseSummary):
        return RubricKind.PAIRWISE
    ok = [r for r in run.results if r.status is CaseStatus.OK]
    # A calibrate run of a pairwise rubric: its judgements were made in both orders.
    if any(r.winner is not None or any(j.order for j in r.judgements) for r in ok):
        return RubricKind.PAIRWISE
    if isinstance(run.summary, ScoreSummary) and run.summary.choices is not None:
        return RubricKind.BINARY
    if any(r.choice is not None for r in ok):
        return RubricKind.BINARY
    return RubricKind.POINTWISE


def command_family(run: AuditedRun, kind: RubricKind) -> Command:
    """The command whose verdicts the run holds: calibrate counts as score (or as pairwise,
    with a pairwise rubric); a refine run, whose answers were generated anew, has no fixed
    cases to compare.
    """
    command = run.summary.command
    if command is Command.REFINE:
        raise InputError(
            f"{run.path} is a refine run: its answers were generated anew, so the cases "
            "its verdicts are of are not fixed",
            hint="compare two score, pairwise or calibrate runs of the same cases",
        )
    if isinstance(run.summary, CalibrateSummary):
        return Command.PAIRWISE if kind is RubricKind.PAIRWISE else Command.SCORE
    return command


def check_comparable(a: AuditedRun, b: AuditedRun) -> RubricKind:
    """The verdict kind both runs share; InputError naming the mismatch otherwise."""
    kind_a, kind_b = verdict_kind(a), verdict_kind(b)
    family_a, family_b = command_family(a, kind_a), command_family(b, kind_b)
    hint = (
        "compare two runs of one command over the same cases, e.g. before and after a judge change"
    )
    if family_a is not family_b:
        raise InputError(
            f"{a.path} is a {a.summary.command} run and {b.path} a {b.summary.command} run: "
            "drift compares runs of one kind (score or calibrate with score, pairwise with "
            "pairwise)",
            hint=hint,
        )
    if kind_a is not kind_b:
        raise InputError(
            f"{a.path} has {kind_a} verdicts and {b.path} {kind_b} verdicts: a flip or a "
            "shift between them means nothing",
            hint=hint,
        )
    return kind_a


def differences_of(a: AuditedRun, b: AuditedRun) -> dict[str, Difference]:
    """What differs in how the two runs' verdicts were made: the judges, the rubric (name,
    version, content hash: the prompt is part of it), and the settings run.json records
    (temperature, max_tokens, the cascade, ...), leaving out those that only say how a run
    went (concurrency, limits, retries, the cache, where it was written).
    """
    found: dict[str, Difference] = {}

    def note(name: str, x: Any, y: Any) -> None:
        if x != y:
            found[name] = Difference(a=x, b=y)

    sa, sb = a.summary, b.summary
    note("models", sa.models, sb.models)
    note("rubric", sa.rubric, sb.rubric)
    note("rubric_version", sa.rubric_version, sb.rubric_version)
    note("rubric_hash", sa.rubric_hash, sb.rubric_hash)
    if not (a.info and b.info):
        return found
    note("api_base", api_bases(a.info), api_bases(b.info))
    note(
        "screen", (a.info.get("screen") or {}).get("name"), (b.info.get("screen") or {}).get("name")
    )
    config_a, config_b = a.info.get("config") or {}, b.info.get("config") or {}
    for key in dict.fromkeys([*config_a, *config_b]):
        if key not in NOT_JUDGING:
            note(key, config_a.get(key), config_b.get(key))
    return found


def api_bases(info: dict[str, Any]) -> list[str | None]:
    """The endpoint of each judge in run.json."""
    return [m.get("api_base") for m in info.get("models", [])]
