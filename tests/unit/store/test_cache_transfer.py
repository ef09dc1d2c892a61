"""Carrying the reply cache between machines, at the store: ReplyCache.entries (what an
export reads) and merge/merge_all (what an import writes: new keys only, in one
transaction), and the export file itself (JSON Lines, gzipped by name, written atomically;
read back with every bad line named by file:line).
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest

from judgecli.errors import InputError
from judgecli.store.cache import CachedReply, MergeCount, ReplyCache
from judgecli.store.cache_transfer import (
    export_entries,
    open_export,
    read_entries,
    write_entries,
)


def reply(text: str) -> str:
    """A stored reply as the cache holds one (JSON text of a JudgeReply)."""
    return json.dumps({"text": text, "attempts": 1})


def entry(key: str, model: str = "openai/a", text: str | None = None) -> CachedReply:
    return CachedReply(key=key, model=model, created=1700000000.5, reply=reply(text or key))


@pytest.fixture
def cache(tmp_path: Path):
    handle = ReplyCache(tmp_path / "one")
    yield handle
    handle.close()


@pytest.fixture
def other(tmp_path: Path):
    handle = ReplyCache(tmp_path / "two")
    yield handle
    handle.close()


def fill(cache: ReplyCache) -> None:
    cache.put("k1", "openai/a", reply("one"))
    cache.put("k2", "openai/b", reply("two"))
    cache.put("k3", "openai/a", reply("three"))


def read(path: Path) -> list[CachedReply]:
    with open_export(path) as handle:
        return list(read_entries(handle, str(path)))


def test_entries_yield_every_row_with_its_fields(cache):
    fill(cache)
    rows = list(cache.entries())
    assert {r.key for r in rows} == {"k1", "k2", "k3"}
    k2 = next(r for r in rows if r.key == "k2")
    assert (k2.model, json.loads(k2.reply)["text"]) == ("openai/b", "two")
    assert k2.created > 0


def test_entries_filter_by_model(cache):
    fill(cache)
    assert {r.key for r in cache.entries(["openai/a"])} == {"k1", "k3"}
    assert {r.key for r in cache.entries(["openai/a", "openai/b"])} == {"k1", "k2", "k3"}
    assert list(cache.entries(["openai/none"])) == []


def test_merge_adds_new_keys_and_counts_those_already_held(cache, other):
    fill(cache)
    other.put("k1", "openai/a", reply("mine"))
    count = other.merge(cache.entries())
    assert count == MergeCount(added=2, already=1)
    assert other.stats().entries == 3
    assert json.loads(other.get("k3") or "")["text"] == "three"


def test_merge_never_overwrites_an_entry_already_cached(other):
    other.put("k1", "openai/a", reply("first"))
    other.merge([entry("k1", text="second")])
    assert json.loads(other.get("k1") or "")["text"] == "first"


def test_duplicate_keys_in_one_import_keep_the_first(other):
    count = other.merge([entry("k", text="first"), entry("k", text="second")])
    assert count == MergeCount(added=1, already=1)
    assert json.loads(other.get("k") or "")["text"] == "first"


def test_merge_keeps_the_exported_creation_time(cache, other):
    fill(cache)
    other.merge(cache.entries())
    assert sorted(cache.entries(), key=lambda r: r.key) == sorted(
        other.entries(), key=lambda r: r.key
    )


def test_merge_of_many_entries_counts_across_batches(other):
    count = other.merge(entry(f"k{i}") for i in range(2500))
    assert count == MergeCount(added=2500, already=0)
    assert other.stats().entries == 2500


def test_an_error_while_reading_rolls_the_whole_merge_back(other):
    other.put("old", "openai/a", reply("old"))

    def entries():
        for i in range(1500):  # past a batch: some rows were already inserted
            yield entry(f"k{i}")
        raise InputError("bad.jsonl:1501: not JSON")

    with pytest.raises(InputError, match=r"bad\.jsonl:1501"):
        other.merge(entries())
    assert [r.key for r in other.entries()] == ["old"]
    other.put("after", "openai/a", reply("after"))  # the connection is usable again
    assert other.stats().entries == 2


def test_merge_all_is_one_transaction_with_a_count_per_source(other):
    counts = other.merge_all([[entry("a"), entry("b")], [entry("b"), entry("c")]])
    assert counts == [MergeCount(added=2, already=0), MergeCount(added=1, already=1)]

    def bad():
        yield entry("d")
        raise InputError("second.jsonl:2: missing reply")

    with pytest.raises(InputError):
        other.merge_all([[entry("e")], bad()])
    assert {r.key for r in other.entries()} == {"a", "b", "c"}


@pytest.mark.parametrize("name", ["cache.jsonl", "cache.jsonl.gz"])
def test_export_then_read_round_trips(cache, tmp_path, name):
    fill(cache)
    path = tmp_path / name
    assert export_entries(cache.entries(), path) == 3
    assert read(path) == list(cache.entries())
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_gz_export_is_gzip_and_a_plain_one_is_json_lines(cache, tmp_path):
    fill(cache)
    export_entries(cache.entries(), tmp_path / "c.jsonl.gz")
    export_entries(cache.entries(), tmp_path / "c.jsonl")
    plain = (tmp_path / "c.jsonl").read_text(encoding="utf-8")
    assert gzip.decompress((tmp_path / "c.jsonl.gz").read_bytes()).decode() == plain
    rows = [json.loads(line) for line in plain.splitlines()]
    assert [sorted(row) for row in rows] == [["created", "key", "model", "reply"]] * 3


def test_a_failed_export_leaves_the_old_file_whole_and_no_temporary(cache, tmp_path):
    fill(cache)
    path = tmp_path / "c.jsonl"
    path.write_text("old\n", encoding="utf-8")

    def broken():
        yield entry("a")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        export_entries(broken(), path)
    assert path.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl", "one"]


def test_an_export_into_a_missing_folder_is_an_input_error(cache, tmp_path):
    with pytest.raises(InputError, match="cannot write"):
        export_entries(cache.entries(), tmp_path / "no" / "c.jsonl")


def test_write_entries_gives_one_line_per_entry():
    out = io.StringIO()
    assert write_entries([entry("a"), entry("b")], out.write) == 2
    assert [json.loads(line)["key"] for line in out.getvalue().splitlines()] == ["a", "b"]


def lines(*rows: object) -> io.BytesIO:
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)
    return io.BytesIO(text.encode())


GOOD = {"key": "k", "model": "openai/a", "created": 1.5, "reply": reply("ok")}


def test_read_skips_blank_lines_a_bom_and_crlf():
    data = io.BytesIO(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\r\n\r\n")
    assert [r.key for r in read_entries(data, "x.jsonl")] == ["k"]


def test_read_accepts_an_integer_time_and_extra_keys():
    rows = list(read_entries(lines(GOOD | {"created": 7, "note": "later field"}), "x"))
    assert rows[0].created == 7.0


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        pytest.param("{not json", "not JSON", id="not-json"),
        pytest.param("[1, 2]", "not an object", id="array"),
        pytest.param({k: v for k, v in GOOD.items() if k != "reply"}, "missing reply", id="miss"),
        pytest.param(GOOD | {"key": 3}, "key must be a non-empty string", id="key-int"),
        pytest.param(GOOD | {"model": ""}, "model must be a non-empty string", id="model-empty"),
        pytest.param(GOOD | {"created": "now"}, "created must be a number", id="created-str"),
        pytest.param(GOOD | {"created": True}, "created must be a number", id="created-bool"),
        pytest.param('{"key":"k","model":"m","created":NaN,"reply":"{}"}', "created", id="nan"),
        pytest.param(GOOD | {"reply": "plain text"}, "stored judge reply", id="reply-text"),
        pytest.param(GOOD | {"reply": '{"score": 3}'}, "stored judge reply", id="reply-no-text"),
    ],
)
def test_a_bad_line_is_named_by_file_and_line_with_the_fix(bad, problem):
    with pytest.raises(InputError) as caught:
        list(read_entries(lines(GOOD, GOOD, bad, GOOD), "shard.jsonl"))
    assert caught.value.message.startswith("shard.jsonl:3: ")
    assert problem in caught.value.message
    assert "judge cache export" in (caught.value.hint or "")


def test_a_line_that_is_not_utf8_is_named():
    data = io.BytesIO(json.dumps(GOOD).encode() + b"\n\xff\xfe\n")
    with pytest.raises(InputError, match=r"^x\.jsonl:2: not UTF-8"):
        list(read_entries(data, "x.jsonl"))


def test_a_truncated_gz_is_an_input_error(cache, tmp_path):
    fill(cache)
    path = tmp_path / "c.jsonl.gz"
    export_entries(cache.entries(), path)
    path.write_bytes(path.read_bytes()[:-12])
    with pytest.raises(InputError, match="truncated"):
        read(path)


def test_a_gz_name_on_a_plain_file_is_an_input_error(tmp_path):
    path = tmp_path / "c.jsonl.gz"
    path.write_text(json.dumps(GOOD) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"c\.jsonl\.gz:1: cannot be read"):
        read(path)


def test_a_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read(tmp_path / "nope.jsonl")
