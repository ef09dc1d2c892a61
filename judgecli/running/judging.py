"""Judging a run's items: build the judge client under the run's limits (behind the reply
cache, and a collected batch's replies), grade every item the run does not hold yet, in
this process or in --workers processes, and stop as the failure limit, the budget or a
sequential gate says. The run directory itself is `run_dir`'s.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from judgecli.errors import (
    BudgetExceededError,
    InputError,
    JudgeUnavailableError,
    RunIncompleteError,
    RunStorageError,
    TooManyFailuresError,
)
from judgecli.gc_pause import resume_gc
from judgecli.inputs.shard import shard_of
from judgecli.judge.budget import BudgetGuard
from judgecli.judge.cached import CachedJudge
from judgecli.judge.client import LiteLLMClient
from judgecli.judge.formats import FormatMode
from judgecli.judge.halt import Halt
from judgecli.judge.limits import Limits
from judgecli.judge.protocol import JudgeClient, JudgeReply
from judgecli.judge.provider import check_endpoints, import_litellm, warm_up
from judgecli.judge.route import routes, through_sdk
from judgecli.result import CaseResult
from judgecli.rubric import Rubric
from judgecli.running.auto_workers import choose_workers_for
from judgecli.running.fan_out import ResultSink, run_cases, run_sync
from judgecli.running.run_dir import (
    UNFINISHED_KEY,
    WARNINGS_KEY,
    open_run,
    record_formats,
    recorded_formats,
    recorded_unfinished,
)
from judgecli.running.share import ShareEnd, describe_shares
from judgecli.settings.config import RunConfig, cache_dir
from judgecli.settings.judges import secret_values
from judgecli.store import RUN_INFO, RunStore
from judgecli.store.cache import ReplyCache
from judgecli.usage import CallSpend


def make_client(
    config: RunConfig,
    *,
    spent_usd: float = 0.0,
    formats: dict[str, FormatMode] | None = None,
    halt: Halt | None = None,
) -> LiteLLMClient:
    """The LiteLLM-backed judge client under the run's limits (call inside the event loop);
    `halt` stops its calls when the run is asked to stop.
    """
    limits = Limits(concurrency=config.concurrency, rpm=config.rpm, tpm=config.tpm)
    budget = None if config.max_cost is None else BudgetGuard(config.max_cost, spent_usd=spent_usd)
    return LiteLLMClient(
        config.all_models,
        limits,
        max_retries=config.max_retries,
        timeout_s=config.timeout_s,
        budget=budget,
        secrets=secret_values(config.all_models),
        formats=formats,
        halt=halt,
    )


class HasId(Protocol):
    """A case or a pair: something with an id."""

    @property
    def id(self) -> str:
        """The case id."""
        ...


ItemT = TypeVar("ItemT", bound=HasId)


@dataclass(frozen=True)
class Judged:
    """Items judged into a run directory, and what the judging warned of."""

    run_dir: Path
    warnings: list[str]
    unfinished: CallSpend = field(default_factory=CallSpend)
    """The calls of cases that did not finish in the session that sent them, over every
    session of the run (run.json keeps them: run.UNFINISHED_KEY)."""


def judge_all(
    config: RunConfig,
    rubric: Rubric,
    items: Iterable[ItemT],
    grade: Callable[[JudgeClient, ItemT], Awaitable[CaseResult]],
    *,
    argv: list[str],
    on_result: Callable[[CaseResult], None],
    total: int | None = None,
    done: Callable[[], bool] | None = None,
    on_stopping: Callable[[str], None] | None = None,
    fresh: Callable[[], Iterable[ItemT]] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> Judged:
    """Open (or reopen) the run directory, grade every item not judged yet under the run's
    limits, and close the results.

    Before the first call each judge is checked as far as LiteLLM can without the network
    (provider, API key, a price under --max-cost); a failed check leaves no new run
    directory. Calls go through the reply cache unless --no-cache; the real client is only
    built on the first cache miss.
    With `total` (the run's case count) the run stops as soon as more cases have failed
    than --max-failures allows; with `done` (a sequential gate), as soon as it says the
    run has decided. A first SIGTERM or Ctrl-C lets the calls in flight land (fan_out.py),
    and `on_stopping` hears what the run waits for. Unpriced models and response-format
    steps are warned of; the calls of cases that did not finish are kept in run.json.
    Without --workers, the run forks one process per core when its calls the cache cannot
    answer are enough to pay for it (auto_workers.py: the first of `fresh()`, a second
    pass over the items, are graded against the cache); `on_note` hears that it did.
    """
    warnings: list[str] = []

    # What LiteLLM can check without the network is checked before the first call: at
    # once when that call is certain (no cache) or --force would delete the old run first;
    # else at the first cache miss, so a fully cached re-run never imports LiteLLM (~3 s),
    # and a failed check discards the new run directory (nothing was called).
    def preflight() -> None:
        check_endpoints(config.all_models, priced=config.max_cost is not None)

    eager = config.force or not config.use_cache
    if eager:
        preflight()
    store, previous, info = open_run(config, rubric, argv)
    todo: Iterable[ItemT] = (item for item in items if item.id not in previous.done)
    if config.conclude_only:
        todo = nothing_left(todo, store)
    formats = recorded_formats(previous.info)
    unfinished_before = recorded_unfinished(previous.info)
    # A --batch run being collected (a resume): the replies its batches brought are answered
    # first. Batches are imported only here and where they answer: other runs have none.
    batched: dict[str, JudgeReply] = {}
    if config.resume:
        from judgecli.running.batch_record import read_batch_replies

        batched = read_batch_replies(store.path)
    workers = config.workers or 1

    def judge_share(
        share: RunConfig,
        share_items: Iterable[ItemT],
        sink: ResultSink,
        end: ShareEnd,
        *,
        on_stopping: Callable[[str], None] | None = None,
        **stops: Any,
    ) -> None:
        """Judge items under `share`'s limits into `sink` (the whole run's, or a worker's);
        `end` learns the warnings, the response formats and the calls of unfinished cases,
        also when a stop is raised.
        """
        built: list[LiteLLMClient] = []
        halt = Halt()

        def real_client() -> LiteLLMClient:
            if not eager:
                preflight()
            # What earlier sessions paid, their unfinished cases' calls included.
            spent = (previous.spent_usd + unfinished_before.cost_usd) / workers
            built.append(make_client(share, spent_usd=spent, formats=formats, halt=halt))
            return built[0]

        async def main() -> None:
            cache = ReplyCache(cache_dir()) if config.use_cache else None
            client: JudgeClient = (
                CachedJudge(real_client, cache, config.all_models) if cache else real_client()
            )
            if batched:
                from judgecli.running.batch_record import BatchReplies

                client = BatchReplies(dict(batched), client, config.all_models)
            try:

                async def one(item: ItemT) -> CaseResult:
                    return await grade(client, item)

                await run_cases(
                    share_items,
                    one,
                    concurrency=share.concurrency,
                    sink=sink,
                    halt=halt,
                    unfinished=end.unfinished,
                    **stops,
                )
            finally:
                if built:
                    await built[0].aclose()
                    end.warnings.extend(built[0].ladder.steps)
                    end.unpriced.extend(built[0].unpriced_models())
                    end.formats.update(built[0].ladder.modes)
                if cache is not None:
                    cache.close()

        run_sync(main(), halt=halt, on_stopping=on_stopping)

    class Events:
        def case_done(self, result: CaseResult) -> None:
            on_result(result)

    allowed = None if total is None else config.max_failures.allowed(total)
    ends: list[ShareEnd] = []
    try:
        if config.workers is None and fresh is not None and total is not None and not batched:
            choice = choose_workers_for(
                config,
                (item for item in fresh() if item.id not in previous.done),
                grade,
                pending=max(0, total - len(previous.done)),
            )
            workers = choice.workers
            if workers > 1 and not eager:
                # The run will call: what LiteLLM can check without the network is checked
                # before the fork is announced (a missing key is exit 2, not a worker's stop).
                preflight()
            if workers > 1 and on_note is not None:
                on_note(f"{choice.describe()}; {describe_shares(config, workers)}")
        if workers == 1:
            ends.append(ShareEnd())
            judge_share(
                config,
                todo,
                store,
                ends[0],
                events=Events(),
                failures_allowed=allowed,
                failed_before=previous.failed,
                done=done,
                on_stopping=on_stopping,
            )
        else:
            # Only a --workers run forks (multiprocessing and workers.py, imported here).
            from judgecli.running.share import worker_config
            from judgecli.running.workers import run_workers

            share = worker_config(config, workers)
            # Imported once here rather than in every worker (~3 s each): a fork shares the
            # loaded module, and importing it starts no thread a fork could lose.
            # The routes as each worker's client will take them (route.py), filed once here.
            warm_up(sdk=through_sdk(routes(import_litellm(), config.all_models).values()))
            if config.use_cache:
                ReplyCache(cache_dir()).close()  # made once, in WAL mode, before they open it

            def judge_worker(
                index: int, sink: ResultSink, stop: Callable[[], bool], end: ShareEnd
            ) -> None:
                mine = (item for item in todo if shard_of(item.id, workers) == index)
                judge_share(share, mine, sink, end, events=NoEvents(), done=stop)

            resume_gc()  # the parent collects again while it gathers the workers' results
            # `ends` is filled as each worker ends, also when the run is stopped.
            run_workers(
                workers,
                judge_worker,
                sink=store,
                on_result=on_result,
                ends=ends,
                failures_allowed=allowed,
                failed_before=previous.failed,
                done=done,
                on_stopping=on_stopping,
            )
    except InputError:
        if store.created:
            store.discard()
        raise
    except TooManyFailuresError:
        # Not an error to report bare: the run is summarised and marked incomplete
        # (job.conclude), so the report shows which cases failed and why.
        pass
    except RunIncompleteError as err:
        err.hint = resume_hint(err, store.path)
        raise
    finally:
        # Kept in run.json, so that a resumed or merged run still warns of what an earlier
        # session's calls found (a format step, an unpriced model).
        warnings.extend(dict.fromkeys([*info.get(WARNINGS_KEY, []), *ended_warnings(ends)]))
        # So are the calls of the cases that did not finish: no result line holds them.
        unfinished = unfinished_before.model_copy()
        for end in ends:
            unfinished.add(end.unfinished)
        # (Unless a failed first call discarded the new run: then there is none to update.)
        try:
            if ends and (store.path / RUN_INFO).exists():
                info = record_formats(info, merged_formats(ends)) | {WARNINGS_KEY: warnings}
                if unfinished.calls:
                    info[UNFINISHED_KEY] = unfinished.model_dump(mode="json")
                store.write_json(RUN_INFO, info)
        finally:
            store.close()  # also when the disk refused run.json
    return Judged(run_dir=store.path, warnings=warnings, unfinished=unfinished)


class NoEvents:
    """A worker reports nothing itself: its results reach the parent's progress."""

    def case_done(self, result: CaseResult) -> None:
        """Nothing to draw here."""


def nothing_left(todo: Iterable[ItemT], store: RunStore) -> Iterable[ItemT]:
    """--conclude-only (judge merge): the run must hold a result for every case, since
    nothing may be judged; InputError naming the first case without one.
    """
    left = [item.id for item in todo]
    if left:
        store.close()
        raise InputError(
            f"{len(left)} case(s) of the dataset have no result in the merged runs, e.g. "
            f"{left[0]!r}",
            hint="the dataset changed since the shards ran, or a shard's run is missing or "
            "incomplete: finish it (judge resume SHARD_RUN) and merge again",
        )
    return ()


def merged_formats(ends: Sequence[ShareEnd]) -> dict[str, str]:
    """The response format each judge ended with, over every worker (each steps down on
    its own; the lowest step any took is the one a resume starts from).
    """
    order = [mode.value for mode in FormatMode]
    modes: dict[str, str] = {}
    for end in ends:
        for model, mode in end.formats.items():
            known = modes.get(model)
            if known is None or order.index(mode) > order.index(known):
                modes[model] = mode
    return modes


def ended_warnings(ends: Sequence[ShareEnd]) -> list[str]:
    """What the judging warned of (format steps, unpriced models), once each."""
    steps = [step for end in ends for step in end.warnings]
    unpriced = [model for end in ends for model in end.unpriced]
    return list(
        dict.fromkeys(
            [
                *steps,
                *(
                    f"{name}: no price known, cost counts as 0 (set --price IN,OUT per 1M tokens)"
                    for name in unpriced
                ),
            ]
        )
    )


def resume_hint(err: RunIncompleteError, run_dir: Path) -> str:
    """How to continue a run that stopped with `err`."""
    if isinstance(err, BudgetExceededError):
        return f"continue with: judge resume {run_dir} --max-cost USD (higher)"
    if isinstance(err, JudgeUnavailableError) and err.hint:
        return f"{err.hint}; then continue with: judge resume {run_dir}"
    if isinstance(err, RunStorageError) and err.hint:
        return err.hint  # the fix (free space), then the resume
    return f"continue with: judge resume {run_dir}"
