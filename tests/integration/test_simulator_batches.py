"""The simulator's Files and Batch APIs driven through real LiteLLM over a real socket:
upload, create, retrieve step by step, cancel, read the output and error files.

Batches move one step per retrieve, never by the clock, so every status sequence and count
here is exact. What LiteLLM returns, pinned here for the batch client: `acreate_file` an
``OpenAIFileObject``; `acreate_batch`, `aretrieve_batch`, `acancel_batch` a ``LiteLLMBatch``
(``request_counts`` a ``BatchRequestCounts``, ``errors.data`` ``BatchError``s); `afile_content`
an object whose ``.content`` is the file's bytes; an unknown id raises the OpenAI SDK's
``openai.NotFoundError`` (404) and a refused creation ``openai.BadRequestError`` (400), not
LiteLLM's mapped exceptions; and `aretrieve_batch` of a completed batch makes LiteLLM's
logging worker read its output and error files in the background, to price it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import openai
import pytest

from judgecli.simulator.server import Fault, SimulatorConfig, SimulatorServer
from judgecli.simulator.verdicts import MALFORMED_CONTENT
from tests.unit.simulator.requests import JSON_SCHEMA_FORMAT, post, request

T = TypeVar("T")
ENDPOINT = "/v1/chat/completions"


@pytest.fixture(scope="module")
def shared() -> Iterator[SimulatorServer]:
    with SimulatorServer(SimulatorConfig()) as server:
        yield server


@pytest.fixture
def server(shared: SimulatorServer) -> SimulatorServer:
    """A simulator with the default two batch steps, cleared for this test."""
    shared.reset()
    return shared


def run(make: Callable[[], Awaitable[T]]) -> T:
    """Run one coroutine to its end (a test's whole conversation in one event loop)."""
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

    async def main() -> T:
        result = await make()
        # Retrieving a completed batch makes LiteLLM price it in its logging worker, which
        # reads the output and error files: let that finish before the loop closes, or the
        # unawaited reads fail the test as unraisable warnings.
        await GLOBAL_LOGGING_WORKER.flush()
        return result

    return asyncio.run(main())


def bodies(count: int, **kwargs: Any) -> dict[str, dict[str, Any]]:
    """``count`` distinct judge requests by custom_id ``c0``, ``c1`` ..."""
    return {
        f"c{i}": request(answer=f"Answer {i}: vaccines teach immunity, case number {i}.", **kwargs)
        for i in range(count)
    }


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    """``rows`` as the bytes of a JSONL file."""
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def batch_file(requests: dict[str, dict[str, Any]]) -> bytes:
    """A batch input file asking ``ENDPOINT`` for each request under its custom_id."""
    return jsonl(
        [
            {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}
            for custom_id, body in requests.items()
        ]
    )


class Client:
    """The LiteLLM batch calls against one simulator."""

    def __init__(self, server: SimulatorServer) -> None:
        """Talk to ``server`` as the openai provider with a dummy key."""
        self.server = server
        self.where = {
            "custom_llm_provider": "openai",
            "api_base": f"{server.url}/v1",
            "api_key": "sk-test-dummy",
        }

    async def upload(self, content: bytes, purpose: str = "batch") -> Any:
        """`litellm.acreate_file` of ``content`` as a JSONL upload."""
        import litellm

        return await litellm.acreate_file(
            file=("requests.jsonl", content, "application/jsonl"), purpose=purpose, **self.where
        )

    async def create(self, input_file_id: str, **kwargs: Any) -> Any:
        """`litellm.acreate_batch` over an uploaded file (24h, chat completions by default)."""
        import litellm

        settings = {"completion_window": "24h", "endpoint": ENDPOINT, **kwargs}
        return await litellm.acreate_batch(input_file_id=input_file_id, **settings, **self.where)

    async def submit(self, content: bytes, **kwargs: Any) -> Any:
        """Upload ``content`` and start a batch over it."""
        uploaded = await self.upload(content)
        return await self.create(uploaded.id, **kwargs)

    async def retrieve(self, batch_id: str) -> Any:
        """`litellm.aretrieve_batch`: one step of the batch."""
        import litellm

        return await litellm.aretrieve_batch(batch_id=batch_id, **self.where)

    async def cancel(self, batch_id: str) -> Any:
        """`litellm.acancel_batch`."""
        import litellm

        return await litellm.acancel_batch(batch_id=batch_id, **self.where)

    async def rows(self, file_id: str | None) -> list[dict[str, Any]]:
        """The JSON lines of a file ([] for no file)."""
        import litellm

        if file_id is None:
            return []
        found = await litellm.afile_content(file_id=file_id, **self.where)
        return [json.loads(line) for line in found.content.decode().splitlines()]

    async def until_done(self, batch: Any) -> tuple[Any, list[str]]:
        """Retrieve until the batch ends; it, and every status seen from creation on."""
        seen = [batch.status]
        for _ in range(20):
            if batch.status in {"completed", "failed", "expired", "cancelled"}:
                return batch, seen
            batch = await self.retrieve(batch.id)
            seen.append(batch.status)
        raise AssertionError(f"batch still {batch.status} after 20 retrieves")


def counts(batch: Any) -> tuple[int, int, int]:
    """(completed, failed, total) of a batch."""
    found = batch.request_counts
    return found.completed, found.failed, found.total


def by_custom_id(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Output or error file rows by their custom_id."""
    return {row["custom_id"]: row for row in rows}


def comparable(body: dict[str, Any]) -> dict[str, Any]:
    """A reply body without what differs between any two replies (its id and time)."""
    return {k: v for k, v in body.items() if k not in {"id", "created"}}


def paid(server: SimulatorServer, batch_id: str) -> list[Any]:
    """The requests the simulator answered as lines of this batch."""
    return [r for r in server.requests if r.batch_id == batch_id]


# --- The lifecycle, step by step ---


def test_a_batch_is_validating_then_in_progress_then_completed_one_retrieve_each(server):
    client, requests = Client(server), bodies(6)

    async def conversation() -> tuple[list[tuple[str, tuple[int, int, int]]], Any, Any]:
        uploaded = await client.upload(batch_file(requests))
        batch = await client.create(uploaded.id, metadata={"run": "t1"})
        steps = [(batch.status, counts(batch))]
        for _ in range(3):  # the third retrieve of an ended batch changes nothing
            batch = await client.retrieve(batch.id)
            steps.append((batch.status, counts(batch)))
        return steps, batch, uploaded

    steps, batch, uploaded = run(conversation)

    assert steps == [
        ("validating", (0, 0, 6)),
        ("in_progress", (3, 0, 6)),
        ("completed", (6, 0, 6)),
        ("completed", (6, 0, 6)),
    ]
    assert uploaded.id.startswith("file-")
    assert uploaded.purpose == "batch"
    assert uploaded.bytes == len(batch_file(requests))
    assert uploaded.status == "processed"
    assert batch.id.startswith("batch_")
    assert batch.object == "batch"
    assert (batch.endpoint, batch.completion_window) == (ENDPOINT, "24h")
    assert batch.input_file_id == uploaded.id
    assert batch.metadata == {"run": "t1"}
    assert batch.error_file_id is None
    assert batch.errors is None
    for moment in ("created_at", "in_progress_at", "finalizing_at", "completed_at"):
        assert isinstance(getattr(batch, moment), int), moment
    assert batch.failed_at is None
    assert batch.cancelled_at is None
    assert batch.expired_at is None
    # Answered in input order as the steps reached them, each once, marked with its batch.
    lines = paid(server, batch.id)
    assert [r.custom_id for r in lines] == list(requests)
    assert [r.body for r in lines] == list(requests.values())
    assert all(r.status == 200 and r.fault is None for r in lines)
    assert len(server.requests) == 6


def test_the_output_file_holds_one_openai_shaped_line_per_request(server):
    client, requests = Client(server), bodies(5)

    async def conversation() -> tuple[Any, list[dict[str, Any]], Any]:
        batch, _ = await client.until_done(await client.submit(batch_file(requests)))
        import litellm

        described = await litellm.afile_retrieve(file_id=batch.output_file_id, **client.where)
        return batch, await client.rows(batch.output_file_id), described

    batch, rows, described = run(conversation)

    assert sorted(row["custom_id"] for row in rows) == sorted(requests)
    for row in rows:
        assert row["id"].startswith("batch_req_")
        assert row["error"] is None
        response = row["response"]
        assert response["status_code"] == 200
        assert response["request_id"].startswith("req_")
        body = response["body"]
        assert body["object"] == "chat.completion"
        assert body["model"] == "sim"
        assert set(body["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}
    assert len({row["id"] for row in rows}) == 5
    assert described.purpose == "batch_output"
    assert described.filename.startswith(batch.id)
    assert batch.usage.total_tokens == sum(
        row["response"]["body"]["usage"]["total_tokens"] for row in rows
    )


def test_three_steps_pass_through_finalizing_and_zero_steps_end_at_creation():
    with (
        SimulatorServer(SimulatorConfig(batch_steps=3)) as three,
        SimulatorServer(SimulatorConfig(batch_steps=0)) as zero,
    ):

        async def conversation() -> tuple[list[tuple[str, Any]], Any, list[dict[str, Any]]]:
            slow = Client(three)
            batch = await slow.submit(batch_file(bodies(4)))
            steps = [(batch.status, counts(batch))]
            for _ in range(3):
                batch = await slow.retrieve(batch.id)
                steps.append((batch.status, counts(batch)))
            quick = Client(zero)
            at_once = await quick.submit(batch_file(bodies(4)))
            return steps, at_once, await quick.rows(at_once.output_file_id)

        steps, at_once, rows = run(conversation)
        answered = len(zero.requests)

    assert steps == [
        ("validating", (0, 0, 4)),
        ("in_progress", (2, 0, 4)),
        ("finalizing", (4, 0, 4)),
        ("completed", (4, 0, 4)),
    ]
    assert (at_once.status, counts(at_once)) == ("completed", (4, 0, 4))
    assert len(rows) == 4
    assert answered == 4


def test_a_batch_answers_each_line_exactly_as_the_same_request_sent_online():
    # Every path a body can take: computed verdicts in a style, malformed draws, an enforced
    # json_object, and json_schema refused with llama-cpp-python's 500.
    config = SimulatorConfig(
        seed=7, style="reasoning-content", formats="llama-cpp", malformed_rate=0.3
    )
    requests = {
        **bodies(10),
        **{
            f"object{i}": request(answer=f"Object {i}.", response_format={"type": "json_object"})
            for i in range(3)
        },
        **{
            f"schema{i}": request(answer=f"Schema {i}.", response_format=JSON_SCHEMA_FORMAT)
            for i in range(2)
        },
    }
    with SimulatorServer(config) as server:
        client = Client(server)

        async def conversation() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            batch, _ = await client.until_done(await client.submit(batch_file(requests)))
            return await client.rows(batch.output_file_id), await client.rows(batch.error_file_id)

        output, errors = run(conversation)
        batch_records = {r.custom_id: (r.status, r.fault) for r in server.requests}
        # Forget the fault attempts: each body is sent online as the same first attempt.
        server.reset()
        online = {custom_id: post(server.url, body) for custom_id, body in requests.items()}
        online_records = [(r.status, r.fault) for r in server.requests]

    answered = by_custom_id(output + errors)
    assert sorted(answered) == sorted(requests)
    for custom_id, (status, _, body) in online.items():
        response = answered[custom_id]["response"]
        assert response["status_code"] == status, custom_id
        expected = comparable(body) if status == 200 else body
        got = comparable(response["body"]) if status == 200 else response["body"]
        assert got == expected, custom_id
    assert {row["custom_id"] for row in errors} == {"schema0", "schema1"}
    contents = [row["response"]["body"]["choices"][0]["message"]["content"] for row in output]
    assert 0 < contents.count(MALFORMED_CONTENT) < len(contents)
    assert list(batch_records.values()) == online_records
    assert Fault.MALFORMED in {fault for _, fault in online_records}


def test_repeats_in_a_batch_draw_their_jitter_as_the_same_repeats_sent_online():
    # Issue 17: K identical lines are K samples of a jittery judge, not one answer K times,
    # and they draw the same multiset as K online repeats on a fresh server.
    repeats = {f"r{i}": request(response_format=JSON_SCHEMA_FORMAT) for i in range(20)}
    with SimulatorServer(SimulatorConfig(jitter=1.0, seed=4)) as server:
        client = Client(server)

        async def conversation() -> list[dict[str, Any]]:
            batch, _ = await client.until_done(await client.submit(batch_file(repeats)))
            return await client.rows(batch.output_file_id)

        output = run(conversation)
        server.reset()
        online = [post(server.url, body)[2] for body in repeats.values()]

    def contents(bodies: list[dict[str, Any]]) -> list[str]:
        return sorted(body["choices"][0]["message"]["content"] for body in bodies)

    batched = contents([row["response"]["body"] for row in output])
    assert len(batched) == 20
    assert len({json.loads(text)["score"] for text in batched}) > 1
    assert batched == contents(online)


# --- Faults ---


def test_the_fail_rate_sends_its_exact_share_to_the_error_file_and_the_same_lines_each_time():
    requests = bodies(20)
    with SimulatorServer(SimulatorConfig(batch_fail_rate=0.25)) as server:
        client = Client(server)

        async def conversation() -> list[tuple[Any, list[dict[str, Any]], list[dict[str, Any]]]]:
            found = []
            for _ in range(2):
                batch, _ = await client.until_done(await client.submit(batch_file(requests)))
                found.append(
                    (
                        batch,
                        await client.rows(batch.output_file_id),
                        await client.rows(batch.error_file_id),
                    )
                )
            return found

        (first, output, errors), (second, _, errors_again) = run(conversation)
        records = paid(server, first.id)

    assert (first.status, counts(first)) == ("completed", (15, 5, 20))
    assert len(output) == 15
    assert len(errors) == 5
    for row in errors:
        assert row["error"] is None
        assert row["id"].startswith("batch_req_")
        assert row["response"]["status_code"] == 500
        assert row["response"]["body"]["error"]["type"] == "server_error"
    failed = {row["custom_id"] for row in errors}
    assert failed.isdisjoint(row["custom_id"] for row in output)
    assert {row["custom_id"] for row in errors_again} == failed
    assert counts(second) == (15, 5, 20)
    assert {r.custom_id for r in records if r.status == 500 and r.fault is Fault.ERROR} == failed
    assert sum(r.status == 200 for r in records) == 15


def test_output_lines_are_shuffled_by_seed_not_in_input_order(server):
    client, requests = Client(server), bodies(20)

    async def conversation() -> list[list[str]]:
        orders = []
        for _ in range(2):
            batch, _ = await client.until_done(await client.submit(batch_file(requests)))
            orders.append([row["custom_id"] for row in await client.rows(batch.output_file_id)])
        return orders

    first, second = run(conversation)

    assert sorted(first) == sorted(requests)
    assert first != list(requests)
    assert first == second


def test_an_expiring_batch_answers_its_first_half_and_expires_the_rest():
    requests = bodies(10)
    with SimulatorServer(SimulatorConfig(batch_expire=True)) as server:
        client = Client(server)

        async def conversation() -> tuple[list[tuple[str, Any]], Any, Any, Any]:
            batch = await client.submit(batch_file(requests))
            steps = [(batch.status, counts(batch))]
            batch, seen = await client.until_done(batch)
            steps += [(status, None) for status in seen[1:]]
            output = await client.rows(batch.output_file_id)
            return steps, batch, output, await client.rows(batch.error_file_id)

        steps, batch, output, errors = run(conversation)
        records = paid(server, batch.id)

    assert [status for status, _ in steps] == ["validating", "in_progress", "expired"]
    assert (batch.status, counts(batch)) == ("expired", (5, 0, 10))
    assert isinstance(batch.expired_at, int)
    assert batch.completed_at is None
    assert sorted(row["custom_id"] for row in output) == [f"c{i}" for i in range(5)]
    assert sorted(row["custom_id"] for row in errors) == [f"c{i}" for i in range(5, 10)]
    for row in errors:
        assert row["response"] is None
        assert row["error"]["code"] == "batch_expired"
        assert row["error"]["message"]
    assert [r.custom_id for r in records] == [f"c{i}" for i in range(5)]


def test_a_cancelled_batch_is_cancelling_then_cancelled_with_what_it_answered_so_far():
    requests = bodies(9)
    with SimulatorServer(SimulatorConfig(batch_steps=4)) as server:
        client = Client(server)

        async def conversation() -> tuple[list[tuple[str, Any]], list[dict[str, Any]], Exception]:
            batch = await client.submit(batch_file(requests))
            batch = await client.retrieve(batch.id)
            steps = [(batch.status, counts(batch))]
            batch = await client.cancel(batch.id)
            steps.append((batch.status, counts(batch)))
            for _ in range(2):
                batch = await client.retrieve(batch.id)
                steps.append((batch.status, counts(batch)))
            output = await client.rows(batch.output_file_id)
            try:
                await client.cancel(batch.id)
            except openai.BadRequestError as error:
                return steps, output, error
            raise AssertionError("cancelling a cancelled batch was accepted")

        steps, output, refused = run(conversation)
        answered = [r.custom_id for r in server.requests]

    assert steps == [
        ("in_progress", (3, 0, 9)),
        ("cancelling", (3, 0, 9)),
        ("cancelled", (3, 0, 9)),
        ("cancelled", (3, 0, 9)),
    ]
    assert sorted(row["custom_id"] for row in output) == ["c0", "c1", "c2"]
    assert answered == ["c0", "c1", "c2"]
    assert "cancelled" in str(refused)


def test_an_invalid_input_file_fails_the_batch_at_its_first_retrieve_naming_each_line(server):
    good = {"custom_id": "ok", "method": "POST", "url": ENDPOINT, "body": request()}
    rows = [
        good,
        {**good, "custom_id": "ok"},
        {**good, "custom_id": "get", "method": "GET"},
        {**good, "custom_id": "url", "url": "/v1/embeddings"},
        {**good, "custom_id": "stream", "body": {**request(), "stream": True}},
        {**good, "custom_id": "other", "body": request(model="other")},
        {"method": "POST", "url": ENDPOINT, "body": request()},
    ]
    content = jsonl(rows) + b"not json\n"
    client = Client(server)

    async def conversation() -> list[Any]:
        batch = await client.submit(content)
        return [batch, await client.retrieve(batch.id), await client.retrieve(batch.id)]

    created, failed, again = run(conversation)

    assert created.status == "validating"
    assert failed.status == again.status == "failed"
    assert isinstance(failed.failed_at, int)
    assert counts(failed) == (0, 0, 0)
    assert failed.output_file_id is None
    assert failed.error_file_id is None
    found = [(e.line, e.code, e.param) for e in failed.errors.data]
    assert sorted(found, key=lambda e: e[0] or 0) == [
        (2, "duplicate_custom_id", "custom_id"),
        (3, "invalid_value", "method"),
        (4, "url_mismatch", "url"),
        (5, "invalid_request", "body"),
        (6, "model_mismatch", "body.model"),
        (7, "missing_required_parameter", "custom_id"),
        (8, "invalid_json_line", None),
    ]
    assert all(e.message for e in failed.errors.data)
    assert server.requests == []


def test_fail_next_batch_fails_the_next_valid_batch_only(server):
    client = Client(server)
    server.fail_next_batch()

    async def conversation() -> tuple[Any, Any]:
        uploaded = await client.upload(batch_file(bodies(3)))
        failed = await client.create(uploaded.id)
        failed = await client.retrieve(failed.id)
        fine, _ = await client.until_done(await client.create(uploaded.id))
        return failed, fine

    failed, fine = run(conversation)

    assert failed.status == "failed"
    assert [(e.code, e.line) for e in failed.errors.data] == [("token_limit_exceeded", None)]
    assert fine.status == "completed"
    assert counts(fine) == (3, 0, 3)
    assert {r.batch_id for r in server.requests} == {fine.id}


def test_batches_are_listed_newest_first_without_moving_them(server):
    client = Client(server)

    async def conversation() -> tuple[list[str], Any, list[str]]:
        import litellm

        uploaded = await client.upload(batch_file(bodies(2)))
        made = [(await client.create(uploaded.id)).id for _ in range(3)]
        listed = await litellm.alist_batches(limit=2, **client.where)
        return made, listed, [b.status for b in listed.data]

    made, listed, statuses = run(conversation)

    assert [b.id for b in listed.data] == made[::-1][:2]
    assert listed.has_more is True
    assert statuses == ["validating", "validating"]


# --- Unknown ids and refused requests ---


def test_unknown_ids_are_404_and_a_refused_batch_is_400(server):
    client = Client(server)

    async def conversation() -> dict[str, Exception]:
        import litellm

        output = await client.upload(b"{}\n", purpose="user_data")
        attempts: dict[str, Callable[[], Awaitable[Any]]] = {
            "retrieve": lambda: client.retrieve("batch_nope"),
            "cancel": lambda: client.cancel("batch_nope"),
            "content": lambda: client.rows("file-nope"),
            "file": lambda: litellm.afile_retrieve(file_id="file-nope", **client.where),
            "unknown input": lambda: client.create("file-nope"),
            "not a batch file": lambda: client.create(output.id),
            "endpoint": lambda: client.create(output.id, endpoint="/v1/embeddings"),
        }
        raised: dict[str, Exception] = {}
        for name, attempt in attempts.items():
            try:
                await attempt()
            except openai.APIStatusError as error:
                raised[name] = error
        return raised

    raised = run(conversation)

    statuses = {name: getattr(error, "status_code", None) for name, error in raised.items()}
    assert statuses == {
        "retrieve": 404,
        "cancel": 404,
        "content": 404,
        "file": 404,
        "unknown input": 400,
        "not a batch file": 400,
        "endpoint": 400,
    }
    body = raised["retrieve"].body
    assert isinstance(body, dict)
    assert body["type"] == "invalid_request_error"
    assert "batch_nope" in body["message"]
    assert "/v1/embeddings" in str(raised["endpoint"])
    assert server.requests == []


def test_online_requests_are_not_marked_as_batch_lines_nor_do_batch_lines_enter_status_bins(server):
    client = Client(server)
    status, _, _ = post(server.url, request())

    async def conversation() -> tuple[Any, list[str]]:
        return await client.until_done(await client.submit(batch_file(bodies(2))))

    run(conversation)

    assert status == 200
    online = [r for r in server.requests if r.batch_id is None]
    assert len(online) == 1
    assert online[0].custom_id is None
    assert len(server.requests) == 3
    assert sum(b.ok for b in server.status_bins(60)) == 1
