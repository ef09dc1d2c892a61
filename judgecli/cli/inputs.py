"""What every judging command does with its shared flags before its own work: find and load
the rubric, turn the flags into one RunConfig, and, as the run starts, read what a resumed
run holds or clear the old run `--force` replaces.
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
    from judgecli.rubric import load_rubric

    dirs = rubric_dirs()
    path = find_named_rubric(name, dirs)
    return path, load_rubric(path, dirs=dirs)


def find_named_rubric(name: str, dirs: list[Path]) -> Path:
    """The rubric file `name` means; an unknown name gets the nearest library names as a
    hint (`--rubric helpfulnes`: did you mean 'helpfulness'?).
    """
    import difflib

    from judgecli.errors import RubricError
    from judgecli.rubric import find_rubric, library

    try:
        return find_rubric(name, dirs)
    except RubricError as err:
        names = [path.stem for path in library(dirs)]
        close = difflib.get_close_matches(name, names, n=3)
        if close:
            err.hint = (
                "did you mean "
                + " or ".join(repr(c) for c in close)
                + "? "
                + ("(`judge rubrics list` shows the library)")
            )
        raise


def judge_config(
    command: str, rubric: Rubric, flags: JudgeFlags
) -> tuple[RunConfig, dict[str, str]]:
    """The RunConfig of a command's shared flags, and its --field mapping."""
    from judgecli.config import build_run_config
    from judgecli.dataset import parse_field_map
    from judgecli.errors import ConfigError
    from judgecli.store import default_run_dir

    if flags.force and flags.resume is not None:
        raise ConfigError(
            "--force starts the run over; --resume continues it",
            hint="drop one of them",
        )
    field_map = parse_field_map(flags.field or [])
    config = build_run_config(
        command=command, rubric=rubric, default_out=default_run_dir(command, rubric.name),
        field_map=field_map, **flags.run_config_args(),
    )  # fmt: skip
    if flags.force and flags.out is not None:
        from judgecli.store import check_replaceable

        check_replaceable(flags.out)
    return config, field_map


def cases_done(run_dir: Path, *, retry_failed: bool) -> int:
    """How many cases a run being resumed already holds (those it will not judge again:
    the failed ones too, unless --retry-failed). 0 when its results cannot be read: the
    resume itself then says why.
    """
    from judgecli.errors import InputError
    from judgecli.result import CaseStatus
    from judgecli.store import RESULTS, read_results

    path = run_dir / RESULTS
    if not path.is_file():
        return 0
    try:
        return len(
            {r.id for r in read_results(path) if not retry_failed or r.status is CaseStatus.OK}
        )
    except InputError:
        return 0
