"""`judge resume RUN_DIR`: continue an interrupted run with the command line that made it."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli.app import app, app_for, exits_with_code, stderr
from judgecli.cli.options import MaxCostOpt, ResumeRetryFailedOpt
from judgecli.errors import ExitCode, InputError

# Flags of the original command line that resume replaces (each takes a value), and those
# it drops (flags without a value): --force started that run over; repeated, it would
# contradict --resume.
REPLACED = {"--out", "-o", "--resume", "--max-cost"}
DROPPED = {"--retry-failed", "--force"}


def resumed_argv(
    argv: list[str], run_dir: Path, *, retry_failed: bool, max_cost: float | None
) -> list[str]:
    """The original arguments, pointed at RUN_DIR with --resume (and a new cap, if given)."""
    from judgecli.merge import without_flags

    args = without_flags(argv[1:], REPLACED, DROPPED)
    args += ["--resume", str(run_dir.resolve())]
    if retry_failed:
        args.append("--retry-failed")
    if max_cost is not None:
        args += ["--max-cost", str(max_cost)]
    elif "--max-cost" in argv:
        args += ["--max-cost", argv[argv.index("--max-cost") + 1]]
    return args


@app.command("resume")
@exits_with_code
def resume_command(
    run_dir: Annotated[Path, typer.Argument(metavar="RUN_DIR", help="The interrupted run.")],
    retry_failed: ResumeRetryFailedOpt = False,
    max_cost: MaxCostOpt = None,
) -> ExitCode:
    """Continue RUN_DIR: its finished cases are kept, the rest judged (cached calls are free)."""
    from judgecli.store import read_run_info

    hint = "pass the run directory a judge command wrote"
    info = read_run_info(run_dir, hint=hint)
    try:
        argv, cwd = list(info["argv"]), Path(info.get("cwd") or ".")
    except (KeyError, TypeError):
        raise InputError(f"{run_dir}: not a judge run (run.json has no argv)", hint=hint) from None
    args = resumed_argv(argv, run_dir, retry_failed=retry_failed, max_cost=max_cost)
    stderr.print(f"[dim]resuming: judge {' '.join(args)}[/]")
    return rerun(args, cwd)


def rerun(args: list[str], cwd: Path) -> ExitCode:
    """Run a recorded command line (resume, merge, collect) where it first ran: relative
    paths in it are relative to that directory (the current one when it is not here).
    """
    with contextlib.chdir(cwd if cwd.is_dir() else Path.cwd()):
        code = app_for(args)(args=args, prog_name="judge", standalone_mode=False)
    return ExitCode(int(code or 0))
