"""A --batch run's record of its batches (batch.json), the replies its collected batches
hold (batch-<id>.jsonl), and the judge client that answers from them first. The read side
of `batching`, which the judging spine (judging.judge_all) uses on every resumed run.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ValidationError

from judgecli.errors import InputError
from judgecli.judge.protocol import JudgeClient, JudgeReply, JudgeRequest, Recalling
from judgecli.settings.judges import ModelSettings
from judgecli.store import BATCH_INFO, read_run_info


class SubmittedBatch(BaseModel):
    """One provider batch of a run, as batch.json keeps it."""

    id: str
    model: str
    input_file_id: str
    requests: int
    status: str = "validating"
    completed: int = 0
    failed: int = 0
    downloaded: bool = False
    """Its output and error files are in batch-<id>.jsonl."""
    error: str | None = None
    """Why the provider failed the batch as a whole."""

    @property
    def replies_file(self) -> str:
        """Where its downloaded lines are kept in the run directory."""
        return f"batch-{self.id}.jsonl"


class BatchRecord(BaseModel):
    """batch.json: what a --batch run submitted."""

    submitted: str
    requests: int
    """Requests in the batches (each distinct request once)."""
    answered_from_cache: int
    """Cases the reply cache judged whole at submit time."""
    batches: list[SubmittedBatch]

    @property
    def ended(self) -> bool:
        """Every batch is downloaded: the run can be finished."""
        return all(batch.downloaded for batch in self.batches)


def read_record(run_dir: Path) -> BatchRecord:
    """A --batch run's batch.json (InputError when RUN is not one)."""
    path = run_dir / BATCH_INFO
    hint = "pass the directory of a run made with --batch"
    if not path.exists():
        read_run_info(run_dir, hint=hint)  # says "not a judge run" when it is none
        raise InputError(f"{run_dir}: not a --batch run (no {BATCH_INFO})", hint=hint)
    try:
        return BatchRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError) as err:
        raise InputError(f"{path}: cannot read ({err})", hint=hint) from None


class BatchReplies:
    """A JudgeClient that answers each request from a collected batch first (once: a
    repeat, or a repair turn, goes on to the client behind it).
    """

    def __init__(
        self, replies: dict[str, JudgeReply], client: JudgeClient, models: list[ModelSettings]
    ) -> None:
        self._replies = replies
        self._client = client
        self._models = {m.name: m for m in models}

    def accepts_schema(self, model: str) -> bool:
        """The client's decision."""
        return self._client.accepts_schema(model)

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """The batch's reply to this request, else the client's."""
        reply = self._replies.pop(request.key(self._models[request.model].api_base), None)
        return reply if reply is not None else await self._client.complete(request)

    def remember(self, request: JudgeRequest, reply: JudgeReply) -> None:
        """Valid replies go to the cache behind."""
        self._client.remember(request, reply)

    def recall(self, request: JudgeRequest) -> JudgeReply | None:
        """What the client behind holds (the reply cache), as the run that submitted the
        batch recalled it: the requests, and their keys, come out the same.
        """
        return self._client.recall(request) if isinstance(self._client, Recalling) else None


def read_batch_replies(run_dir: Path) -> dict[str, JudgeReply]:
    """Every reply the run's downloaded batches hold, by request key (none when the run is
    no --batch run).
    """
    if not (run_dir / BATCH_INFO).exists():
        return {}
    replies: dict[str, JudgeReply] = {}
    for batch in read_record(run_dir).batches:
        path = run_dir / batch.replies_file
        if not batch.downloaded or not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if "reply" in row:
                replies[row["key"]] = JudgeReply.model_validate(row["reply"])
    return replies
