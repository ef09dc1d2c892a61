"""`judge resume RUN_DIR`: continue an interrupted run with the command line that made it.

The settings that say how calls are made, not what a verdict means (their size, patience
and pace, and the spending cap), may be changed for the session: a run whose replies were
cut off at --max-tokens continues with `--retry-failed --max-tokens 1024`. The rubric, the
judges and every setting that decides a verdict stay the run's own.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from judgecli.cli.app import app, app_for, exits_with_code, stderr
from judgecli.cli.options import ResumeRetryFailedOpt, judge_option, shared_flag
from judgecli.errors import ExitCode, InputError

# Flags of the original command line that resume replaces (each takes a value), and those
# it drops (flags without a value): --force started that run over; repeated, it would
# contradict --resume.
REPLACED = {"--out", "-o", "--resume"}
DROPPED = {"--retry-failed", "--force"}
ADJUSTABLE = ("max_tokens", "max_retries", "timeout", "concurrency", "rpm", "tpm", "max_cost")
"""The shared flags a resume may change (their declarations in judgecli/settings/flags.py): how the
calls are made, never what decides a verdict, so the cases judged before and after the
change stay comparable."""


def given_only(name: str) -> Any:
    """The typer option of a shared flag, read from the command line only: a JUDGE_*
    variable of the shell a run is resumed in must not replace what the run was made with.
    """
    shared = shared_flag(name)
    said = re.sub(r"\s*\(default: [^)]*\)", "", shared.flag.help).rstrip(".")
    flag = replace(shared.flag, env=None, help=f"{said}. Default: the run's own.")
    return judge_option(replace(shared, flag=flag))


MaxTokensOpt = Annotated[int | None, given_only("max_tokens")]
MaxRetriesOpt = Annotated[int | None, given_only("max_retries")]
TimeoutOpt = Annotated[float | None, given_only("timeout")]
ConcurrencyOpt = Annotated[int | None, given_only("concurrency")]
RpmOpt = Annotated[float | None, given_only("rpm")]
TpmOpt = Annotated[float | None, given_only("tpm")]
MaxCostOpt = Annotated[float | None, given_only("max_cost")]


def resumed_argv(
    argv: list[str],
    run_dir: Path,
    *,
    retry_failed: bool,
    changes: Mapping[str, float | int | None] | None = None,
) -> list[str]:
    """The original arguments, pointed at RUN_DIR with --resume, each adjustable setting
    given in `changes` (by field name: `{"max_tokens": 600}`) replacing the recorded one.
    """
    from judgecli.running.merge import without_flags

    spellings = {name: shared_flag(name).flag.names for name in ADJUSTABLE}
    args = without_flags(argv[1:], REPLACED | {n for s in spellings.values() for n in s}, DROPPED)
    args += ["--resume", str(run_dir.resolve())]
    if retry_failed:
        args.append("--retry-failed")
    for name, names in spellings.items():
        given = (changes or {}).get(name)
        value = str(given) if given is not None else flag_value(argv, names)
        if value is not None:
            args += [names[0], value]
    return args


def flag_value(argv: list[str], names: tuple[str, ...]) -> str | None:
    """The value a command line gives a flag (`--x V` or `--x=V`; the last one counts, as
    in click), or None.
    """
    value = None
    for i, arg in enumerate(argv):
        name, equals, given = arg.partition("=")
        if name in names:
            value = given if equals else (argv[i + 1] if i + 1 < len(argv) else None)
    return value


@app.command("resume")
@exits_with_code
def resume_command(
    run_dir: Annotated[Path, typer.Argument(metavar="RUN_DIR", help="The interrupted run.")],
    retry_failed: ResumeRetryFailedOpt = False,
    max_tokens: MaxTokensOpt = None,
    max_retries: MaxRetriesOpt = None,
    timeout: TimeoutOpt = None,
    concurrency: ConcurrencyOpt = None,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    max_cost: MaxCostOpt = None,
) -> ExitCode:
    """Continue RUN_DIR: its finished cases are kept, the rest judged (cached calls are
    free). --max-tokens, --max-retries, --timeout, --concurrency, --rpm, --tpm and
    --max-cost replace the run's own for this session.
    """
    from judgecli.store import read_run_info

    hint = "pass the run directory a judge command wrote"
    info = read_run_info(run_dir, hint=hint)
    try:
        argv, cwd = list(info["argv"]), Path(info.get("cwd") or ".")
    except (KeyError, TypeError):
        raise InputError(f"{run_dir}: not a judge run (run.json has no argv)", hint=hint) from None
    changes = {
        "max_tokens": max_tokens,
        "max_retries": max_retries,
        "timeout": timeout,
        "concurrency": concurrency,
        "rpm": rpm,
        "tpm": tpm,
        "max_cost": max_cost,
    }
    args = resumed_argv(argv, run_dir, retry_failed=retry_failed, changes=changes)
    stderr.print(f"[dim]resuming: judge {' '.join(args)}[/]")
    return rerun(args, cwd)


def rerun(args: list[str], cwd: Path) -> ExitCode:
    """Run a recorded command line (resume, merge, collect) where it first ran: relative
    paths in it are relative to that directory (the current one when it is not here).
    """
    with contextlib.chdir(cwd if cwd.is_dir() else Path.cwd()):
        code = app_for(args)(args=args, prog_name="judge", standalone_mode=False)
    return ExitCode(int(code or 0))
