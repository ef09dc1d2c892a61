"""Shards: a case's shard is stable everywhere, and --shard auto reads the schedulers'
variables."""

from __future__ import annotations

from collections import Counter

import pytest

from judgecli.errors import ConfigError
from judgecli.inputs.shard import Shard, parse_shard, shard_of


def test_shard_of_is_pinned() -> None:
    # sha256 of the id, first 8 bytes big-endian, mod N: these values must never change,
    # or shards made by two versions of judge would not fit together.
    assert [shard_of(f"q-{i}", 3) for i in range(8)] == PINNED
    assert shard_of("日本語", 5) == shard_of("日本語", 5)


PINNED = [1, 1, 1, 0, 0, 1, 1, 0]


def test_shard_of_matches_the_documented_rule() -> None:
    import hashlib

    for case_id in ["a", "q-17", "línea-3", ""]:
        digest = hashlib.sha256(case_id.encode("utf-8")).digest()
        assert shard_of(case_id, 7) == int.from_bytes(digest[:8], "big") % 7


def test_shards_split_evenly_and_cover_every_case() -> None:
    counts = Counter(shard_of(f"case-{i}", 4) for i in range(4000))
    assert set(counts) == {0, 1, 2, 3}
    # Binomial(4000, 1/4): sd ≈ 27; 150 is more than 5 sd.
    assert all(abs(n - 1000) < 150 for n in counts.values())
    shards = [Shard(index=i, count=4) for i in range(4)]
    assert all(sum(s.holds(f"case-{i}") for s in shards) == 1 for i in range(200))


@pytest.mark.parametrize(
    ("text", "expected"), [("0/3", (0, 3)), ("2/3", (2, 3)), (" 1 / 2 ", (1, 2)), ("0/1", (0, 1))]
)
def test_parse_shard(text: str, expected: tuple[int, int]) -> None:
    shard = parse_shard(text, {})
    assert (shard.index, shard.count) == expected
    assert str(shard) == f"{expected[0]}/{expected[1]}"


@pytest.mark.parametrize("text", ["3/3", "1", "a/b", "-1/3", "1/0", "1/3/4", ""])
def test_parse_shard_refuses(text: str) -> None:
    with pytest.raises(ConfigError, match="--shard"):
        parse_shard(text, {})


def test_auto_from_slurm_array() -> None:
    env = {
        "SLURM_ARRAY_TASK_ID": "7",
        "SLURM_ARRAY_TASK_MIN": "5",
        "SLURM_ARRAY_TASK_MAX": "8",
        "SLURM_ARRAY_TASK_COUNT": "4",
    }
    assert parse_shard("auto", env) == Shard(index=2, count=4)


def test_auto_refuses_a_slurm_array_with_gaps() -> None:
    env = {
        "SLURM_ARRAY_TASK_ID": "2",
        "SLURM_ARRAY_TASK_MIN": "0",
        "SLURM_ARRAY_TASK_MAX": "4",
        "SLURM_ARRAY_TASK_COUNT": "3",  # --array=0-4:2
    }
    with pytest.raises(ConfigError, match="plain range"):
        parse_shard("auto", env)


def test_auto_from_kubernetes_indexed_job() -> None:
    env = {"JOB_COMPLETION_INDEX": "3", "JUDGE_SHARD_COUNT": "5"}
    assert parse_shard("AUTO", env) == Shard(index=3, count=5)
    with pytest.raises(ConfigError, match="JUDGE_SHARD_COUNT is not set"):
        parse_shard("auto", {"JOB_COMPLETION_INDEX": "3"})


def test_auto_from_judge_variables_wins() -> None:
    env = {"JUDGE_SHARD_INDEX": "1", "JUDGE_SHARD_COUNT": "2", "SLURM_ARRAY_TASK_ID": "0"}
    assert parse_shard("auto", env) == Shard(index=1, count=2)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "no shard index in the environment"),
        ({"JUDGE_SHARD_COUNT": "2"}, "JUDGE_SHARD_INDEX is not set"),
        ({"JUDGE_SHARD_INDEX": "x", "JUDGE_SHARD_COUNT": "2"}, "not a whole number"),
        ({"JUDGE_SHARD_INDEX": "2", "JUDGE_SHARD_COUNT": "2"}, "0 to N-1"),
    ],
)
def test_auto_refuses(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_shard("auto", env)
