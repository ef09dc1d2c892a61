"""Shards: which cases one machine of many judges (`--shard i/N`, `--shard auto`).

A case belongs to shard `sha256(id) mod N`: the same on every machine, operating system and
Python version (unlike `hash()`, which is salted per process), and independent of the
dataset's line order, so N machines reading one dataset judge every case exactly once.
`--shard auto` takes the index and the count from the environment a scheduler gives each
task of an array (Slurm job arrays, Kubernetes Indexed Jobs), or from JUDGE_SHARD_INDEX and
JUDGE_SHARD_COUNT (set from a GitHub Actions matrix's `strategy.job-index` and
`strategy.job-total`, see docs/scale.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, model_validator

from judgecli.errors import ConfigError

INDEX_ENV = "JUDGE_SHARD_INDEX"
COUNT_ENV = "JUDGE_SHARD_COUNT"
AUTO_HINT = (
    f"set {INDEX_ENV} and {COUNT_ENV}, run as a Slurm array task (sbatch --array=0-N), or "
    f"as a Kubernetes Indexed Job with {COUNT_ENV} set to its completions; see docs/scale.md"
)


class Shard(BaseModel):
    """Shard `index` of `count` (0-based)."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=0)
    count: int = Field(ge=1)

    @model_validator(mode="after")
    def _index_below_count(self) -> Shard:
        if self.index >= self.count:
            raise ValueError(f"shard index {self.index} is not below the count {self.count}")
        return self

    def holds(self, case_id: str) -> bool:
        """Whether the case with this id is judged by this shard."""
        return shard_of(case_id, self.count) == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def shard_of(case_id: str, count: int) -> int:
    """The shard (of `count`) a case id belongs to."""
    digest = hashlib.sha256(case_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


def parse_shard(text: str, env: Mapping[str, str]) -> Shard:
    """`--shard i/N` (0-based) or `--shard auto` (from the scheduler's environment)."""
    value = text.strip()
    if value.lower() == "auto":
        return shard_from_env(env)
    index, sep, count = value.partition("/")
    if not sep or not index.strip().isdigit() or not count.strip().isdigit():
        raise ConfigError(
            f"--shard {text!r} is not i/N or auto",
            hint="e.g. --shard 0/4 judges the first of four shards (indices 0 to 3)",
        )
    return checked_shard(int(index), int(count), f"--shard {text}")


def checked_shard(index: int, count: int, given: str) -> Shard:
    """Shard(index, count), or a ConfigError naming what gave the numbers."""
    if count < 1 or not 0 <= index < count:
        raise ConfigError(
            f"{given}: the index must be 0 to N-1 and N at least 1 (got {index} of {count})",
            hint="shard indices count from 0: --shard 0/3, 1/3 and 2/3 make three shards",
        )
    return Shard(index=index, count=count)


def shard_from_env(env: Mapping[str, str]) -> Shard:
    """--shard auto: JUDGE_SHARD_INDEX/COUNT, else a Slurm array task, else a Kubernetes
    Indexed Job (whose count only the manifest knows: JUDGE_SHARD_COUNT).
    """
    if INDEX_ENV in env:
        return checked_shard(
            env_int(env, INDEX_ENV), env_int(env, COUNT_ENV), f"--shard auto ({INDEX_ENV})"
        )
    if "SLURM_ARRAY_TASK_ID" in env:
        return slurm_shard(env)
    if "JOB_COMPLETION_INDEX" in env:
        return checked_shard(
            env_int(env, "JOB_COMPLETION_INDEX"),
            env_int(env, COUNT_ENV),
            "--shard auto (Kubernetes JOB_COMPLETION_INDEX)",
        )
    if COUNT_ENV in env:
        env_int(env, INDEX_ENV)  # raises: the count alone does not say which shard
    raise ConfigError("--shard auto: no shard index in the environment", hint=AUTO_HINT)


def slurm_shard(env: Mapping[str, str]) -> Shard:
    """The shard of a Slurm array task: its place among the array's task ids, which must be
    a plain range (`--array=0-7` or `--array=1-8`; a step or a list would leave gaps that
    no task judges).
    """
    task = env_int(env, "SLURM_ARRAY_TASK_ID")
    first = env_int(env, "SLURM_ARRAY_TASK_MIN")
    last = env_int(env, "SLURM_ARRAY_TASK_MAX")
    count = env_int(env, "SLURM_ARRAY_TASK_COUNT")
    if last - first + 1 != count:
        raise ConfigError(
            f"--shard auto: the Slurm array {first}-{last} has {count} tasks, not a plain range",
            hint="submit the shards as one range, e.g. sbatch --array=0-7 (no step, no list)",
        )
    return checked_shard(task - first, count, "--shard auto (Slurm array)")


def env_int(env: Mapping[str, str], name: str) -> int:
    """An environment variable that must hold a whole number."""
    text = env.get(name)
    if text is None:
        raise ConfigError(f"--shard auto: {name} is not set", hint=AUTO_HINT)
    try:
        return int(text.strip())
    except ValueError:
        raise ConfigError(f"--shard auto: {name}={text!r} is not a whole number") from None
