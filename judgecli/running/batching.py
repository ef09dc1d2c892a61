"""--batch and `judge collect`: a run judged through the provider's batch API, in two
phases.

Submit (`judge score|pairwise ... --batch`): every case is graded once against a client
that answers from the reply cache and, for anything else, writes the request down
instead of sending it (`Deferred`), so the batch holds exactly the calls an online run
would make first: both orders, every judge. A case the cache answers whole is judged at
once. The requests go to the provider as batch files (one batch per judge and file), whose
ids batch.json records before anything else happens, and the command exits 0.

Collect (`judge collect RUN [--wait]`): each batch is followed until it ends; its output
and error files are downloaded once into batch-<id>.jsonl (replies at batch prices). The
run is then finished by its own command line (without --batch) as a resume, whose judge
client answers each request from the downloaded replies first (`BatchReplies`): a reply
that does not parse is repaired, and a request whose line failed or never ran is asked,
as ordinary calls; valid replies go into the reply cache. A killed collect starts again
where it was: downloaded batches are not fetched again, judged cases not judged again, and
a reply is never paid twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgecli.errors import InputError, JudgeError, JudgeUnavailableError, RunIncompleteError
from judgecli.judge.batches import (
    BatchApi,
    BatchStatus,
    batch_line,
    check_batchable,
    input_files,
    wire_model,
    worst_case_cost,
)
from judgecli.judge.cached import CachedJudge
from judgecli.judge.client import LiteLLMClient
from judgecli.judge.failures import describe
from judgecli.judge.protocol import JudgeClient, JudgeReply, JudgeRequest
from judgecli.judge.provider import (
    check_endpoints,
    close_clients,
    close_dropped_clients,
    import_litellm,
)
from judgecli.running.batch_record import BatchRecord, SubmittedBatch, read_record
from judgecli.running.fan_out import run_sync
from judgecli.running.judging import make_client
from judgecli.running.run_dir import now_iso, open_run
from judgecli.settings.config import RunConfig, cache_dir
from judgecli.settings.judges import ModelSettings, Price, model_settings
from judgecli.store import BATCH_INFO, RunStore, read_run_info
from judgecli.store.cache import ReplyCache
from judgecli.store.lock import hold_run_dir

if TYPE_CHECKING:
    from judgecli.running.job import Job


class Deferred(Exception):
    """The request goes into the batch; its case is graded when the batch is collected."""


class DeferringClient:
    """A JudgeClient that sends nothing: each request is written down for the batch."""

    def __init__(self, client: LiteLLMClient, models: list[ModelSettings]) -> None:
        self._client = client
        self._models = {m.name: m for m in models}
        self.pending: dict[str, JudgeRequest] = {}

    def accepts_schema(self, model: str) -> bool:
        """As the online client would decide (so the request, and its key, are the same)."""
        return self._client.accepts_schema(model)

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """Write the request down; its case waits for the batch."""
        self.pending.setdefault(request.key(self._models[request.model].api_base), request)
        raise Deferred

    def remember(self, request: JudgeRequest, reply: JudgeReply) -> None:
        """Nothing is replied here, so nothing is remembered."""


@dataclass(frozen=True)
class Submitted:
    """A submitted --batch run."""

    run_dir: Path
    record: BatchRecord


def submit_job(job: Job[Any, Any], *, argv: list[str]) -> Submitted:
    """Grade every case of the job against the cache, and submit what it cannot answer as
    provider batches; InputError (exit 2) for models without a supported batch API.
    """
    config = job.config
    litellm = import_litellm()
    check_batchable(litellm, config.all_models)
    check_endpoints(config.all_models, priced=config.max_cost is not None)
    store, _, _ = open_run(config, job.rubric, argv)
    try:
        record = run_sync(submit(job, store, litellm))
    except InputError:
        store.discard()
        raise
    finally:
        store.close()
    return Submitted(run_dir=store.path, record=record)


async def submit(job: Job[Any, Any], store: RunStore, litellm: Any) -> BatchRecord:
    """Grade, write down, check the cap, upload; batch.json is written after each batch."""
    config = job.config
    online = make_client(config)
    deferring = DeferringClient(online, config.all_models)
    cache = ReplyCache(cache_dir()) if config.use_cache else None
    client: JudgeClient = (
        CachedJudge(lambda: deferring, cache, config.all_models) if cache else deferring
    )
    answered = 0
    try:
        for item in job.items:
            try:
                result = await job.grade(client, job.plan, item)
            except Deferred:
                continue
            store.append_result(result)
            answered += 1
    finally:
        if cache is not None:
            cache.close()
    requests = deferring.pending
    check_batch_cost(litellm, config, requests)
    record = BatchRecord(
        submitted=now_iso(), requests=len(requests), answered_from_cache=answered, batches=[]
    )
    store.write_json(BATCH_INFO, record.model_dump(mode="json"))
    try:
        for settings in config.all_models:
            api = BatchApi(litellm, settings)
            model = wire_model(litellm, settings)
            mode = online.ladder.mode(settings.name)
            lines = [
                batch_line(key, request, model, mode)
                for key, request in requests.items()
                if request.model == settings.name
            ]
            for number, content in enumerate(input_files(lines), start=1):
                name = f"judge-{store.path.name}-{settings.name.replace('/', '_')}-{number}.jsonl"
                batch_id, file_id = await api.submit(content, name)
                record.batches.append(
                    SubmittedBatch(
                        id=batch_id,
                        model=settings.name,
                        input_file_id=file_id,
                        requests=content.count(b"\n"),
                    )
                )
                store.write_json(BATCH_INFO, record.model_dump(mode="json"))
    except JudgeError:
        raise
    except Exception as err:  # noqa: BLE001 - the provider refused or could not be reached
        if not record.batches:
            raise InputError(
                f"--batch: the provider did not take the batch: {describe(err, [])}",
                hint="check --api-base and the API key; nothing was submitted or paid",
            ) from None
        raise JudgeUnavailableError(
            f"--batch: {len(record.batches)} batch(es) submitted, then the provider failed: "
            f"{describe(err, [])}",
            hint=f"judge collect {store.path} finishes the run (what was not submitted is "
            "asked as ordinary calls)",
        ) from None
    finally:
        await online.aclose()
        await close_dropped_clients()
    return record


def check_batch_cost(litellm: Any, config: RunConfig, requests: dict[str, JudgeRequest]) -> None:
    """With --max-cost: refuse (exit 2, nothing submitted) a batch whose worst case (every
    reply max_tokens long, at batch prices) could pass the cap; once submitted, a batch
    cannot be stopped halfway.
    """
    if config.max_cost is None or not requests:
        return
    worst = worst_case_cost(litellm, config.all_models, list(requests.values()))
    if worst > config.max_cost:
        raise InputError(
            f"--batch: the {len(requests)} requests could cost up to ${worst:.4f} at batch "
            f"prices (every reply --max-tokens long), more than --max-cost ${config.max_cost:g}",
            hint="raise --max-cost, lower --max-tokens, or judge a --sample",
        )


def run_models(info: dict[str, Any]) -> dict[str, ModelSettings]:
    """The judges of a run, from its run.json (keys come from the environment, as ever)."""
    settings = {}
    for entry in info.get("models", []):
        [model] = model_settings(
            [entry["name"]], api_base=entry.get("api_base"), price=None, json_schema=None
        )
        price = Price(**entry["price"]) if entry.get("price") else None
        settings[model.name] = model.model_copy(update={"price": price})
    return settings


def collect_batches(
    run_dir: Path,
    *,
    wait: bool,
    poll_s: float,
    on_status: Callable[[SubmittedBatch], None],
) -> BatchRecord:
    """Follow a --batch run's batches and download those that ended; with `wait`, until
    all have (checking every `poll_s` seconds), else RunIncompleteError (exit 3) while any
    is still running.
    """
    read_record(run_dir)  # a --batch run at all, before its lock is made
    # One writer at a time, from the first download to the run's end (the resume that
    # finishes it runs in this process, under the same lock).
    hold_run_dir(run_dir)
    record = read_record(run_dir)
    while True:
        record = run_sync(refresh(run_dir, record, on_status))
        if record.ended:
            return record
        running = sum(not batch.downloaded for batch in record.batches)
        if not wait:
            raise RunIncompleteError(
                f"{running} of {len(record.batches)} batch(es) still running",
                hint=f"collect again later, or wait for them: judge collect {run_dir} --wait",
            )
        time.sleep(poll_s)


async def refresh(
    run_dir: Path, record: BatchRecord, on_status: Callable[[SubmittedBatch], None]
) -> BatchRecord:
    """Ask the provider about every batch not downloaded yet; download those that ended
    (output and error lines into batch-<id>.jsonl, then batch.json marks it).
    """
    litellm = import_litellm()
    models = run_models(read_run_info(run_dir, hint="pass a --batch run's directory"))
    store = RunStore(run_dir)
    try:
        for batch in record.batches:
            if batch.downloaded:
                on_status(batch)
                continue
            api = BatchApi(litellm, models[batch.model])
            status = await api.status(batch.id)
            update_batch(batch, status)
            if status.ended:
                rows = [
                    row
                    for file_id in (status.output_file_id, status.error_file_id)
                    if file_id
                    for row in downloaded_rows(api, await api.download(file_id))
                ]
                store.write_jsonl(batch.replies_file, rows)
                batch.downloaded = True
            store.write_json(BATCH_INFO, record.model_dump(mode="json"))
            on_status(batch)
    except JudgeError:
        raise
    except Exception as err:  # noqa: BLE001 - the provider could not be reached
        raise JudgeUnavailableError(
            f"the batch provider failed: {describe(err, [])}",
            hint=f"collect again later: judge collect {run_dir}",
        ) from None
    finally:
        await close_clients(litellm)
        await close_dropped_clients()
    return record


def update_batch(batch: SubmittedBatch, status: BatchStatus) -> None:
    """The provider's news about a batch, into its record."""
    batch.status = status.status
    batch.completed = status.completed
    batch.failed = status.failed
    batch.error = status.errors


def downloaded_rows(api: BatchApi, text: str) -> list[dict[str, Any]]:
    """A result file's lines as batch-<id>.jsonl keeps them: {key, reply} or {key, error}."""
    rows: list[dict[str, Any]] = []
    for outcome in api.outcomes(text):
        if outcome.reply is not None:
            rows.append({"key": outcome.key, "reply": outcome.reply.model_dump(mode="json")})
        else:
            rows.append({"key": outcome.key, "error": outcome.error})
    return rows
