"""`judge cache export` / `judge cache import` through the real CLI: a cache filled by a
real run against the simulator is carried to another cache directory (as a machine running
another shard would), where the same run is then answered without a call; --model, .gz,
stdin/stdout, first writer wins, and a bad line exits 2 naming file:line with nothing
imported.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgecli.cli.main import app
from judgecli.store.cache import ReplyCache
from tests.integration.conftest import REPO, CliRun

EXAMPLE = REPO / "datasets" / "example.jsonl"


@pytest.fixture
def cache_a(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The first machine's cache (the one JUDGE_CACHE_DIR names at first)."""
    path = tmp_path / "cache-a"
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(path))
    return path


def use_cache(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """Switch this test's `judge` to another machine's cache."""
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(path))


def judge(*args: str, stdin: str | None = None) -> CliRun:
    """`judge ARGS` in-process (stdin from `stdin`)."""
    result = CliRunner().invoke(app, list(args), input=stdin, catch_exceptions=False)
    return CliRun(result.exit_code, result.stdout, result.stderr)


def score(run_cli, server, out: str, *extra: str, model: str = "openai/sim") -> CliRun:
    return run_cli(
        server,
        "score",
        str(EXAMPLE),
        "--rubric",
        "helpfulness",
        "--out",
        out,
        "--json",
        "--quiet",
        *extra,
        model=model,
    )


def cached(path: Path) -> dict[str, str]:
    """The cache at `path`, key to reply."""
    cache = ReplyCache(path)
    try:
        return {e.key: e.reply for e in cache.entries()}
    finally:
        cache.close()


def put(path: Path, key: str, model: str, text: str) -> None:
    """One entry in the cache at `path`, as a run stores it."""
    cache = ReplyCache(path)
    cache.put(key, model, json.dumps({"text": text}))
    cache.close()


def line(key: str, model: str = "openai/sim", text: str = "ok") -> dict[str, object]:
    return {"key": key, "model": model, "created": 1.0, "reply": json.dumps({"text": text})}


def jsonl(*rows: dict[str, object]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


@pytest.mark.parametrize("name", ["replies.jsonl", "replies.jsonl.gz"])
def test_a_run_on_another_machine_is_answered_from_the_imported_cache(
    run_cli, judge_server, cache_a, tmp_path, monkeypatch, name
):
    first = score(run_cli, judge_server, "a")
    assert first.exit_code == 0, first.stderr
    sent = len(judge_server.requests)
    assert sent == first.summary["n_cases"] > 0

    exported = judge("cache", "export", name)
    assert exported.exit_code == 0, exported.stderr
    assert exported.stdout.strip() == f"exported {sent} replies to {name}"
    raw = Path(name).read_bytes()
    text = gzip.decompress(raw).decode() if name.endswith(".gz") else raw.decode()
    assert len(text.splitlines()) == sent
    assert [f for f in os.listdir() if f.endswith(".tmp")] == []

    use_cache(monkeypatch, tmp_path / "cache-b")
    imported = judge("cache", "import", name)
    assert imported.exit_code == 0, imported.stderr
    assert imported.stdout.strip() == f"imported {sent} new replies (0 already cached) from {name}"
    assert cached(tmp_path / "cache-b") == cached(cache_a)

    again = score(run_cli, judge_server, "b")
    assert again.exit_code == 0, again.stderr
    assert len(judge_server.requests) == sent  # nothing new was sent
    assert again.summary["usage"]["cached"] == sent
    assert again.summary["mean"] == first.summary["mean"]


def test_model_filter_exports_only_those_models(run_cli, judge_server, cache_a):
    score(run_cli, judge_server, "a", "--limit", "3", model="openai/sim")
    score(run_cli, judge_server, "b", "--limit", "2", model="openai/other")
    both = judge(
        "cache", "export", "both.jsonl", "--model", "openai/sim", "--model", "openai/other"
    )
    assert both.stdout.strip() == "exported 5 replies to both.jsonl"
    one = judge("cache", "export", "one.jsonl", "--model", "openai/other")
    assert one.exit_code == 0, one.stderr
    assert one.stdout.strip() == "exported 2 replies to one.jsonl"
    rows = [json.loads(x) for x in Path("one.jsonl").read_text().splitlines()]
    assert {r["model"] for r in rows} == {"openai/other"}
    assert judge("cache", "export", "none.jsonl", "--model", "openai/nobody").exit_code == 0
    assert Path("none.jsonl").read_text() == ""


def test_stdout_export_piped_into_stdin_import(cache_a, tmp_path):
    for i in range(3):
        put(cache_a, f"k{i}", "openai/sim", f"reply {i}")
    env = os.environ | {"JUDGE_CACHE_DIR": str(cache_a)}
    export = subprocess.run(
        [sys.executable, "-m", "judgecli", "cache", "export", "-"],
        env=env,
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert export.returncode == 0, export.stderr
    assert [json.loads(x)["key"] for x in export.stdout.decode().splitlines()] == [
        "k0",
        "k1",
        "k2",
    ]  # stdout holds the JSON lines alone
    assert "exported 3 replies to stdout" in export.stderr.decode()

    target = tmp_path / "cache-b"
    imported = subprocess.run(
        [sys.executable, "-m", "judgecli", "cache", "import", "-"],
        env=env | {"JUDGE_CACHE_DIR": str(target)},
        input=export.stdout,
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert imported.returncode == 0, imported.stderr
    assert (
        imported.stdout.decode().strip() == "imported 3 new replies (0 already cached) from stdin"
    )
    assert cached(target) == cached(cache_a)


def test_an_entry_already_cached_is_never_overwritten(cache_a, tmp_path):
    put(cache_a, "same", "openai/sim", "mine")
    Path("theirs.jsonl").write_text(
        jsonl(line("same", text="theirs"), line("new", text="new")), encoding="utf-8"
    )
    run = judge("cache", "import", "theirs.jsonl")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.strip() == "imported 1 new replies (1 already cached) from theirs.jsonl"
    assert json.loads(cached(cache_a)["same"])["text"] == "mine"
    # Importing the same file again adds nothing.
    again = judge("cache", "import", "theirs.jsonl")
    assert again.stdout.strip() == "imported 0 new replies (2 already cached) from theirs.jsonl"


def test_several_files_report_one_line_each(cache_a):
    Path("one.jsonl").write_text(jsonl(line("a"), line("b")), encoding="utf-8")
    with gzip.open("two.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write(jsonl(line("b"), line("c")))
    run = judge("cache", "import", "one.jsonl", "two.jsonl.gz")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.splitlines() == [
        "imported 2 new replies (0 already cached) from one.jsonl",
        "imported 1 new replies (1 already cached) from two.jsonl.gz",
    ]


@pytest.mark.parametrize(
    ("bad_line", "problem"),
    [
        pytest.param("{oops", "not JSON", id="not-json"),
        pytest.param(
            json.dumps({"key": "k", "model": "m", "created": 1}), "missing reply", id="missing"
        ),
        pytest.param(
            json.dumps(line("k") | {"created": "yesterday"}), "created must be a number", id="type"
        ),
    ],
)
def test_a_bad_line_exits_2_naming_file_and_line_and_imports_nothing(cache_a, bad_line, problem):
    put(cache_a, "held", "openai/sim", "held")
    good = jsonl(line("a"), line("b"))
    Path("good.jsonl").write_text(good, encoding="utf-8")
    Path("bad.jsonl").write_text(good + bad_line + "\n" + jsonl(line("c")), encoding="utf-8")
    run = judge("cache", "import", "good.jsonl", "bad.jsonl")
    assert run.exit_code == 2
    error, hint = run.stderr.splitlines()
    assert error.startswith("error: bad.jsonl:3: ")
    assert problem in error
    assert hint.startswith("hint: ")
    assert "judge cache export" in hint
    assert run.stdout == ""
    assert set(cached(cache_a)) == {"held"}  # not even good.jsonl's replies


def test_a_bad_line_on_stdin_is_named_stdin(cache_a):
    run = judge("cache", "import", "-", stdin=jsonl(line("a")) + "[]\n")
    assert run.exit_code == 2
    assert run.stderr.startswith("error: stdin:2: ")
    assert cached(cache_a) == {}


def test_a_missing_file_exits_2_with_one_clear_line(cache_a):
    Path("good.jsonl").write_text(jsonl(line("a")), encoding="utf-8")
    run = judge("cache", "import", "good.jsonl", "missing.jsonl.gz")
    assert run.exit_code == 2
    assert run.stderr.splitlines()[0] == "error: missing.jsonl.gz: no such file"
    assert cached(cache_a) == {}


def test_an_export_that_cannot_be_written_exits_2(cache_a):
    put(cache_a, "k", "openai/sim", "x")
    run = judge("cache", "export", "no/such/dir/out.jsonl")
    assert run.exit_code == 2
    assert run.stderr.startswith("error: cannot write no/such/dir/out.jsonl")
    assert not Path("no").exists()
