"""What every judging command does with its shared flags before its own work: find and load
the rubric, and turn the flags into one RunConfig.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from judgecli.cli.flags import JudgeFlags
    from judgecli.config import RunConfig
    from judgecli.rubric import Rubric


def named_rubric(name: str) -> tuple[Path, Rubric]:
    """`--rubric` (a path or a library name) as its file and the loaded rubric."""
    from judgecli.config import rubric_dirs
    from judgecli.rubric import find_rubric, load_rubric

    dirs = rubric_dirs()
    path = find_rubric(name, dirs)
    return path, load_rubric(path, dirs=dirs)


def judge_config(
    command: str, rubric: Rubric, flags: JudgeFlags
) -> tuple[RunConfig, dict[str, str]]:
    """The RunConfig of a command's shared flags, and its --field mapping."""
    from judgecli.config import build_run_config
    from judgecli.dataset import parse_field_map
    from judgecli.store import default_run_dir

    field_map = parse_field_map(flags.field or [])
    config = build_run_config(
        command=command, rubric=rubric, default_out=default_run_dir(command, rubric.name),
        field_map=field_map, **flags.run_config_args(),
    )  # fmt: skip
    return config, field_map
