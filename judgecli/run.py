"""The run directory and the judging of its items: open (or reopen) the run, record how it
was made, build the judge client, grade every item not judged yet, and write the reports
of a summary. `job` puts these together into the spine every judging command runs on.
"""

from __future__ import annotations

import importlib.metadata
import platform
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from judgecli import __version__
from judgecli.batch_record import BatchReplies, read_batch_replies
from judgecli.config import RunConfig, cache_dir, secret_values
from judgecli.errors import (
    BudgetExceededError,
    InputError,
    JudgeUnavailableError,
    RunIncompleteError,
    TooManyFailuresError,
)
from judgecli.judge.budget import BudgetGuard
from judgecli.judge.cached import CachedJudge
from judgecli.judge.client import JudgeClient, LiteLLMClient
from judgecli.judge.formats import FormatMode
from judgecli.judge.limits import Limits
from judgecli.judge.provider import check_endpoints, import_litellm, warm_up
from judgecli.report.markdown import render_markdown
from judgecli.result import CaseResult
from judgecli.rubric import Rubric
from judgecli.runner import ResultSink, run_cases, run_sync
from judgecli.shard import shard_of
from judgecli.store import (
    JUNIT,
    REPORT_HTML,
    REPORT_MD,
    RESULTS,
    RUN_INFO,
    SUMMARY,
    PreviousRun,
    RunStore,
    append_step_summary,
    read_results,
    read_summary,
)
from judgecli.store.cache import ReplyCache
from judgecli.summary.compare import Delta, compare_runs
from judgecli.summary.run import RunSummary
from judgecli.workers import ShareEnd, run_workers, worker_config

T = TypeVar("T")


def package_version(name: str) -> str | None:
    """Installed version of a package, or None."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def run_info(config: RunConfig, rubric: Rubric, argv: list[str]) -> dict[str, Any]:
    """run.json: enough to reproduce the run. API keys are never part of it."""
    settings = config.model_dump(mode="json", exclude={"models", "screen"})
    return {
        "command": config.command,
        "argv": argv,
        "cwd": str(Path.cwd()),
        "started": now_iso(),
        "models": [m.model_dump(mode="json", exclude={"api_key"}) for m in config.models],
        "screen": config.screen.model_dump(mode="json", exclude={"api_key"})
        if config.screen
        else None,
        "rubric": {"name": rubric.name, "version": rubric.version, "hash": rubric.content_hash},
        "config": settings,
        "versions": {
            "judgecli": __version__,
            "litellm": package_version("litellm"),
            "python": platform.python_version(),
        },
    }


def open_run(
    config: RunConfig, rubric: Rubric, argv: list[str]
) -> tuple[RunStore, PreviousRun, dict[str, Any]]:
    """Create the run directory and write run.json, or reopen it with --resume (after
    checking it was made with the same rubric and judges). Returns the store, what the
    run already holds, and the run.json just written.
    """
    if not config.resume:
        store = RunStore.create(config.out, replace=config.force)
        info = run_info(config, rubric, argv)
        store.write_json(RUN_INFO, info)
        return store, PreviousRun(info={}, done=set(), spent_usd=0.0), info
    store, previous = RunStore.reopen(config.out, retry_failed=config.retry_failed)
    made_with = judged_by(previous.info)
    this_run = judged_by(run_info(config, rubric, argv))
    if made_with != this_run:
        store.close()
        raise InputError(
            f"{config.out} was made with {describe_judging(made_with)}; this command has "
            f"{describe_judging(this_run)}",
            hint="resume with the same rubric and --model/--screen/--escalate flags "
            "(judge resume RUN_DIR does)",
        )
    info = previous.info | {"resumed": [*previous.info.get("resumed", []), now_iso()]}
    store.write_json(RUN_INFO, info)
    return store, previous, info


def judged_by(info: dict[str, Any]) -> dict[str, Any]:
    """What decides a run's verdicts, from its run.json: the rubric, the judges and the
    cascade. A resumed run must keep all of them, or its cases would not be comparable.
    """
    return {
        "rubric": info.get("rubric", {}).get("hash"),
        "judges": [m.get("name") for m in info.get("models", [])],
        "screen": (info.get("screen") or {}).get("name"),
        "escalate": info.get("config", {}).get("escalate"),
    }


def describe_judging(judging: dict[str, Any]) -> str:
    """`rubric H and judges [...]`, plus the cascade when there is one."""
    text = f"rubric {judging['rubric']} and judges {judging['judges']}"
    if judging["screen"]:
        text += f", screen {judging['screen']} escalating on {judging['escalate']!r}"
    return text


def now_iso() -> str:
    """The current UTC time, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def make_client(
    config: RunConfig, *, spent_usd: float = 0.0, formats: dict[str, FormatMode] | None = None
) -> LiteLLMClient:
    """The LiteLLM-backed judge client under the run's limits (call inside the event loop)."""
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
    )


FORMAT_KEY = "response_format_mode"
"""run.json, per model: the response format its server accepted (formats.FormatMode)."""


WARNINGS_KEY = "judging_warnings"
"""run.json: what the calls warned of so far (format steps, unpriced models)."""


def recorded_formats(info: dict[str, Any]) -> dict[str, FormatMode]:
    """The response formats a run's judges ended with, from its run.json (a resume starts
    there instead of asking each server again).
    """
    modes = {}
    for model in info.get("models", []) + ([info["screen"]] if info.get("screen") else []):
        mode = model.get(FORMAT_KEY)
        if mode in {m.value for m in FormatMode}:
            modes[model["name"]] = FormatMode(mode)
    return modes


def record_formats(info: dict[str, Any], modes: dict[str, str]) -> dict[str, Any]:
    """run.json with each judge's response format noted."""

    def noted(model: dict[str, Any]) -> dict[str, Any]:
        mode = modes.get(model.get("name", ""))
        return model | {FORMAT_KEY: mode} if mode else model

    screen = info.get("screen")
    return info | {
        "models": [noted(m) for m in info.get("models", [])],
        "screen": noted(screen) if screen else screen,
    }


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
) -> Judged:
    """Open (or reopen) the run directory, grade every item not judged yet under the run's
    limits, and close the results.

    Before the first call each judge is checked as far as LiteLLM can without the network
    (provider, API key, a price under --max-cost); a failed check leaves no new run
    directory. Calls go through the reply cache unless --no-cache; the real client is only
    built on the first cache miss.
    With `total` (the run's case count) the run stops as soon as more cases have failed
    than --max-failures allows; with `done` (a sequential gate), as soon as it says the
    run has decided. Unpriced models and response-format steps are warned of.
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
    # A --batch run being collected: the replies its batches brought are answered first.
    batched = read_batch_replies(store.path) if config.resume else {}

    def judge_share(
        share: RunConfig,
        share_items: Iterable[ItemT],
        sink: ResultSink,
        end: ShareEnd,
        **stops: Any,
    ) -> None:
        """Judge items under `share`'s limits into `sink` (the whole run's, or a worker's);
        `end` learns the warnings and response formats, also when a stop is raised.
        """
        built: list[LiteLLMClient] = []

        def real_client() -> LiteLLMClient:
            if not eager:
                preflight()
            spent = previous.spent_usd / config.workers
            built.append(make_client(share, spent_usd=spent, formats=formats))
            return built[0]

        async def main() -> None:
            cache = ReplyCache(cache_dir()) if config.use_cache else None
            client: JudgeClient = (
                CachedJudge(real_client, cache, config.all_models) if cache else real_client()
            )
            if batched:
                client = BatchReplies(dict(batched), client, config.all_models)
            try:

                async def one(item: ItemT) -> CaseResult:
                    return await grade(client, item)

                await run_cases(share_items, one, concurrency=share.concurrency, sink=sink, **stops)
            finally:
                if built:
                    await built[0].aclose()
                    end.warnings.extend(built[0].ladder.steps)
                    end.unpriced.extend(built[0].unpriced_models())
                    end.formats.update(built[0].ladder.modes)
                if cache is not None:
                    cache.close()

        run_sync(main())

    class Events:
        def case_done(self, result: CaseResult) -> None:
            on_result(result)

    allowed = None if total is None else config.max_failures.allowed(total)
    ends: list[ShareEnd] = []
    try:
        if config.workers == 1:
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
            )
        else:
            share = worker_config(config, config.workers)
            # Imported once here rather than in every worker (~3 s each): a fork shares the
            # loaded module, and importing it starts no thread a fork could lose.
            import_litellm()
            warm_up()
            if config.use_cache:
                ReplyCache(cache_dir()).close()  # made once, in WAL mode, before they open it

            def judge_worker(
                index: int, sink: ResultSink, stop: Callable[[], bool], end: ShareEnd
            ) -> None:
                mine = (item for item in todo if shard_of(item.id, config.workers) == index)
                judge_share(share, mine, sink, end, events=NoEvents(), done=stop)

            ends = run_workers(
                config.workers,
                judge_worker,
                sink=store,
                on_result=on_result,
                failures_allowed=allowed,
                failed_before=previous.failed,
                done=done,
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
        # (Unless a failed first call discarded the new run: then there is none to update.)
        if ends and (store.path / RUN_INFO).exists():
            info = record_formats(info, merged_formats(ends)) | {WARNINGS_KEY: warnings}
            store.write_json(RUN_INFO, info)
        store.close()
    return Judged(run_dir=store.path, warnings=warnings)


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
    return f"continue with: judge resume {run_dir}"


def write_reports(
    run_dir: Path,
    summary: RunSummary,
    results: Sequence[CaseResult],
    *,
    step_summary: Path | None = None,
) -> Path:
    """report.md, report.html and results.junit.xml from the summary and the results (and
    report.md appended to a CI step summary); returns the HTML report's path.
    """
    from judgecli.report.html import render_html
    from judgecli.report.junit import render_junit

    store = RunStore(run_dir)
    markdown = render_markdown(summary)
    store.write_text(REPORT_MD, markdown)
    if step_summary is not None:
        append_step_summary(step_summary, markdown)
    store.write_text(JUNIT, render_junit(summary, results))
    return store.write_text(REPORT_HTML, render_html(summary, results))


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


def compare_finished_runs(run_a: Path, run_b: Path) -> list[Delta]:
    """What changed from run A to run B, case by case: two finished runs of one command
    and one rubric (InputError otherwise: other numbers, or another scale, say nothing
    about a change).
    """
    summary, results = load_run(run_a)
    summary_b, results_b = load_run(run_b)
    if summary.rubric_hash != summary_b.rubric_hash or summary.command != summary_b.command:
        raise InputError(
            f"{run_a} and {run_b} are not runs of the same command and rubric "
            f"({summary.command} {summary.rubric_hash} vs {summary_b.command} "
            f"{summary_b.rubric_hash})",
            hint="compare two runs of one rubric, e.g. before and after a prompt change",
        )
    return compare_runs(summary, results, summary_b, results_b)
