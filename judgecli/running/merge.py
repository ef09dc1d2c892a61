"""`judge merge`: join the runs of N shards (`--shard i/N`) into the run one machine would
have made.

The shards must be one run cut in N: the same command, rubric, judges and flags (all but
those that say where, how fast or how loudly a shard ran: Role.PER_MACHINE, declared with
each flag in settings/flags.py), every shard present once, each finished and complete.
Their results are joined into one results.jsonl, and the run is then concluded by the
command line that made the shards, without --shard and judging nothing
(`--conclude-only`): so summary.json, the reports and the gate come from the same code as a
single machine's run, and the same verdicts give the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgecli.errors import InputError
from judgecli.inputs.shard import Shard
from judgecli.result import CaseResult
from judgecli.running.run_dir import (
    UNFINISHED_KEY,
    WARNINGS_KEY,
    describe_judging,
    judged_by,
    now_iso,
    recorded_unfinished,
)
from judgecli.settings.flag_spec import FlagField, Role
from judgecli.settings.flags import flags_with
from judgecli.store import (
    RESULTS,
    RUN_INFO,
    SUMMARY,
    RunStore,
    read_results,
    read_run_info,
)
from judgecli.summary.run import read_summary
from judgecli.usage import CallSpend


def spellings(flags: Iterable[FlagField], *, switches: bool) -> set[str]:
    """How the command line spells the flags that take a value (`switches`: those that take
    none).
    """
    return {
        spelt for shared in flags if shared.switch is switches for spelt in shared.flag.spellings
    }


# Flags that say where, how fast or how loudly a shard ran, not what it judged
# (Role.PER_MACHINE): shards may differ in them. A shard judged through the batch API has
# the verdicts an online one has (judge collect finished it before the merge).
PER_MACHINE = spellings(flags_with(Role.PER_MACHINE), switches=False)
PER_MACHINE_SWITCHES = spellings(flags_with(Role.PER_MACHINE), switches=True)
# Of those, the ones each shard was given for its own run (Role.THIS_RUN: its directory,
# its shard, --batch, what it printed): the merged run is a run of its own, and the merge's
# own --quiet and --json say what it prints.
SHARDS_OWN = [f for f in flags_with(Role.PER_MACHINE) if Role.THIS_RUN in f.flag.roles]
HINT = "pass the --out directories of all N runs of one --shard i/N command"


@dataclass(frozen=True)
class ShardRun:
    """One shard's finished run."""

    path: Path
    info: dict[str, Any]
    shard: Shard
    results: list[CaseResult]


def without_flags(argv: list[str], valued: set[str], switches: set[str]) -> list[str]:
    """A command line without the given flags (`valued` take a value, as `--x V` or
    `--x=V`; `switches` take none).
    """
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if arg in switches:
            continue
        if name in valued:
            skip = "=" not in arg
            continue
        kept.append(arg)
    return kept


def what_was_judged(info: dict[str, Any]) -> list[str]:
    """A shard's command line without its per-machine flags: equal for all shards of
    one run.
    """
    return without_flags(list(info.get("argv", [])), PER_MACHINE, PER_MACHINE_SWITCHES)


def read_shard(path: Path) -> ShardRun:
    """A shard run, checked to be finished and complete (InputError naming the fix)."""
    info = read_run_info(path, hint=HINT)
    shard = (info.get("config") or {}).get("shard")
    if not shard:
        raise InputError(f"{path}: not a shard run (it was not made with --shard)", hint=HINT)
    summary_path = path / SUMMARY
    if not summary_path.exists():
        raise InputError(
            f"{path}: shard {Shard(**shard)} has not finished (no {SUMMARY})",
            hint=f"finish it first: judge resume {path}",
        )
    summary = read_summary(summary_path)
    if summary.incomplete:
        raise InputError(
            f"{path}: shard {Shard(**shard)} is incomplete ({summary.incomplete})",
            hint=f"finish it first: judge resume {path} (--retry-failed for failed cases)",
        )
    return ShardRun(path, info, Shard(**shard), list(read_results(path / RESULTS)))


def check_shards(runs: list[ShardRun]) -> None:
    """The runs are the N shards of one run: one command line, all N, each once."""
    first = runs[0]
    for run in runs[1:]:
        if judged_by(run.info) != judged_by(first.info):
            raise InputError(
                f"{run.path} was judged with {describe_judging(judged_by(run.info))}, "
                f"{first.path} with {describe_judging(judged_by(first.info))}",
                hint=HINT,
            )
        if what_was_judged(run.info) != what_was_judged(first.info):
            raise InputError(
                f"{run.path} and {first.path} were made by different command lines: "
                f"{' '.join(what_was_judged(run.info))!r} vs "
                f"{' '.join(what_was_judged(first.info))!r}",
                hint=HINT,
            )
        if run.shard.count != first.shard.count:
            raise InputError(
                f"{run.path} is shard {run.shard}, {first.path} shard {first.shard}: "
                "not shards of one split",
                hint=HINT,
            )
    seen: dict[int, Path] = {}
    for run in runs:
        if run.shard.index in seen:
            raise InputError(
                f"{seen[run.shard.index]} and {run.path} are both shard {run.shard}",
                hint="pass each shard's run once",
            )
        seen[run.shard.index] = run.path
    count = first.shard.count
    missing = [f"{index}/{count}" for index in range(count) if index not in seen]
    if missing:
        raise InputError(
            f"missing shard(s) {', '.join(missing)}: {len(runs)} of {count} runs given",
            hint=HINT,
        )


def joined_results(runs: list[ShardRun]) -> list[CaseResult]:
    """Every shard's results, each case once (InputError naming a case two shards hold)."""
    owner: dict[str, Path] = {}
    joined: list[CaseResult] = []
    for run in runs:
        for result in run.results:
            if result.id in owner:
                raise InputError(
                    f"case {result.id!r} is in {owner[result.id]} and in {run.path}",
                    hint="shards of one --shard i/N split never share a case: were these "
                    "made from different datasets?",
                )
            owner[result.id] = run.path
            joined.append(result)
    return sorted(joined, key=lambda result: result.id)


def merged_info(runs: list[ShardRun]) -> dict[str, Any]:
    """The merged run's run.json: the first shard's, its command line without the flags
    that shard was given for its own run, and where its results came from.
    """
    info = dict(runs[0].info)
    own = spellings(SHARDS_OWN, switches=False), spellings(SHARDS_OWN, switches=True)
    argv = without_flags(list(info["argv"]), *own)
    config = dict(info.get("config") or {}) | {"shard": None, "batch": False}
    merged = [
        {"run": str(run.path.resolve()), "shard": str(run.shard), "cases": len(run.results)}
        for run in sorted(runs, key=lambda run: run.shard.index)
    ]
    warned = [w for run in runs for w in run.info.get(WARNINGS_KEY, [])]
    # Every shard's calls of unfinished cases (not only the first shard's, copied above).
    unfinished = CallSpend()
    for run in runs:
        unfinished.add(recorded_unfinished(run.info))
    info.pop(UNFINISHED_KEY, None)
    if unfinished.calls:
        info[UNFINISHED_KEY] = unfinished.model_dump(mode="json")
    return info | {
        "argv": argv,
        "config": config,
        "merged": merged,
        "merged_at": now_iso(),
        WARNINGS_KEY: list(dict.fromkeys(warned)),
    }


def merge_shards(paths: list[Path], out: Path, *, replace: bool) -> dict[str, Any]:
    """Write the merged run's results.jsonl and run.json into `out` (checked first: a
    failed check writes nothing); returns its run.json, whose command line concludes it.
    """
    if not paths:
        raise InputError("no runs to merge", hint=HINT)
    runs = [read_shard(path) for path in dict.fromkeys(paths)]
    check_shards(runs)
    results = joined_results(runs)
    info = merged_info(runs)
    if out.resolve() in {run.path.resolve() for run in runs}:
        raise InputError(f"--out {out} is one of the shards", hint="merge into a new directory")
    store = RunStore.create(out, replace=replace)
    try:
        for result in results:
            store.append_result(result)
        store.write_json(RUN_INFO, info)
    finally:
        store.close()
    return info
