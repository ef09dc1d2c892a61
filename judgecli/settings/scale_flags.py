"""The scale-out flags checked before a run is configured: --workers parsed, and --batch
refused where it cannot work (--shard is `shard.parse_shard`'s). See docs/scale.md.
"""

from __future__ import annotations

import os

from judgecli.errors import ConfigError
from judgecli.settings.flags import JudgeFlags


def usable_cores() -> int:
    """The cores this process may run on (its affinity: taskset and cgroup cpusets count)."""
    return (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    )


def parse_workers(text: str) -> int:
    """`--workers 4`, or `--workers auto` (one per core this process may use)."""
    value = text.strip().lower()
    if value == "auto":
        return usable_cores()
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(
            f"--workers {text!r} is not a number of processes or auto", hint="e.g. --workers 2"
        )
    return int(value)


def check_scale_out(flags: JudgeFlags) -> None:
    """Refuse the scale-out flags where they cannot work."""
    if flags.batch and flags.screen is not None:
        raise ConfigError(
            "--batch cannot run a cascade (--screen): which cases escalate is known only "
            "once the screen's batch is back",
            hint="drop --screen, or judge the cascade online without --batch",
        )
    if flags.batch and flags.resume is not None:
        raise ConfigError(
            "--batch and --resume: a submitted batch run is finished with judge collect RUN",
            hint="judge collect RUN [--wait]",
        )
    if flags.batch and flags.workers not in (None, "1"):
        raise ConfigError(
            "--batch with --workers: a batch run sends no calls of its own to share out",
            hint="drop --workers",
        )
