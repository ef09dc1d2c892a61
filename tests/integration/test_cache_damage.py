"""A damaged reply cache (issue 29 §5, review 2026-11-27 finding 13), in subprocesses as a
user meets it: garbage, a text file or a truncated copy where replies.sqlite should be.
Every command that opens it exits 2 naming the file, with a hint that says how to get past
it; `judge cache clear` removes it, says so, and starts an empty cache in its place; and
damage found only while a run reads the file stops the run (exit 3) with its fix, resumable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from judgecli.store.cache import CACHE_FILE, ReplyCache
from tests.integration.conftest import DATA

JUDGE = [sys.executable, "-m", "judgecli"]
CASES = DATA / "bad" / "good-old.jsonl"
TIMEOUT_S = 120
PAGE = 4096


def judge(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`judge ARGS` in a subprocess whose reply cache is in `cache`."""
    return subprocess.run(
        [*JUDGE, *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        env=os.environ | {"OPENAI_API_KEY": "sk-test-dummy", "JUDGE_CACHE_DIR": str(cache)},
    )


def score(server, cache: Path, out: str, *extra: str) -> subprocess.CompletedProcess[str]:
    args = ["score", str(CASES), "--rubric", "helpfulness", "--out", out, *extra]
    return judge(cache, *args, "--model", "openai/sim", "--api-base", f"{server.url}/v1")


def filled_cache(folder: Path, entries: int = 2000) -> Path:
    """A real cache file with `entries` replies (several pages of them)."""
    cache = ReplyCache(folder)
    for i in range(entries):
        cache.put(f"key-{i}", "openai/sim", json.dumps({"text": f"reply {i} " * 20}))
    cache.close()
    return folder / CACHE_FILE


def garbage(folder: Path) -> None:
    folder.mkdir()
    (folder / CACHE_FILE).write_bytes(bytes(range(256)) * 40)


def text_file(folder: Path) -> None:
    folder.mkdir()
    (folder / CACHE_FILE).write_text("not a database\n", encoding="utf-8")


def truncated(folder: Path) -> None:
    path = filled_cache(folder)
    with path.open("r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


def damaged(tmp: Path, damage: Callable[[Path], None]) -> tuple[Path, Path]:
    """A cache folder with `damage` done to its file: the folder and the file."""
    cache = tmp / "damaged"
    damage(cache)
    return cache, cache / CACHE_FILE


DAMAGE = [
    pytest.param(garbage, "file is not a database", id="garbage"),
    pytest.param(text_file, "file is not a database", id="a-text-file"),
    pytest.param(truncated, "database disk image is malformed", id="a-truncated-copy"),
]


@pytest.mark.parametrize(("damage", "said"), DAMAGE)
def test_every_command_names_the_damaged_file_and_the_fix(
    judge_server, tmp_path, damage: Callable[[Path], None], said
):
    cache, path = damaged(tmp_path, damage)
    hint = f"hint: delete {path} or run judge cache clear; or set JUDGE_CACHE_DIR / pass --no-cache"
    for run in (score(judge_server, cache, "run"), judge(cache, "cache", "stats")):
        assert run.returncode == 2, run.stderr
        assert run.stderr.splitlines() == [
            f"error: cannot open the reply cache {path}: {said}",
            hint,
        ]
    assert not Path("run").exists()
    assert judge_server.requests == []


# Issue 29 (review 2026-11-27, finding 13): `cache clear` failed on the file it should clear.
@pytest.mark.parametrize(("damage", "said"), DAMAGE)
def test_cache_clear_removes_a_damaged_file_and_starts_an_empty_cache(
    judge_server, tmp_path, damage: Callable[[Path], None], said
):
    cache, path = damaged(tmp_path, damage)
    size = path.stat().st_size

    cleared = judge(cache, "cache", "clear")
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout.strip() == (
        f"removed the damaged reply cache {path} ({said}; {size:,} bytes, its replies "
        "unreadable) and started an empty one"
    )
    stats = judge(cache, "cache", "stats")
    assert stats.returncode == 0, stats.stderr
    assert stats.stdout.startswith(f"{path}: 0 replies")
    run = score(judge_server, cache, "run")
    assert run.returncode == 0, run.stderr
    filled = judge(cache, "cache", "stats")
    assert filled.stdout.startswith(f"{path}: 3 replies")  # the new cache keeps replies


def test_cache_clear_of_a_sound_cache_counts_the_replies(tmp_path):
    filled_cache(tmp_path / "sound", entries=5)
    cleared = judge(tmp_path / "sound", "cache", "clear")
    assert cleared.returncode == 0, cleared.stderr
    assert (
        cleared.stdout.strip() == f"removed 5 cached replies from {tmp_path / 'sound' / CACHE_FILE}"
    )


def test_damage_found_while_a_run_reads_the_cache_stops_it_resumably(judge_server, tmp_path):
    # The header and the table's root page are whole, so the file opens; every page of
    # replies after them is overwritten, so the first look-up meets the damage.
    cache = tmp_path / "damaged"
    path = filled_cache(cache)
    data = bytearray(path.read_bytes())
    for start in range(2 * PAGE, len(data), PAGE):
        data[start : start + PAGE] = b"\xff" * PAGE
    path.write_bytes(bytes(data))

    stopped = score(judge_server, cache, "run")
    assert stopped.returncode == 3, stopped.stderr
    assert stopped.stderr.splitlines()[-2:] == [
        f"error: the reply cache {path} is damaged (database disk image is malformed): "
        "delete it or run judge cache clear (or pass --no-cache)",
        "hint: continue with: judge resume run",
    ]
    assert "Traceback" not in stopped.stderr
    assert judge(cache, "cache", "clear").returncode == 0
    resumed = judge(cache, "resume", "run")
    assert resumed.returncode == 0, resumed.stderr
    rows = Path("run/results.jsonl").read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(row)["id"] for row in rows) == ["a", "b", "c"]
