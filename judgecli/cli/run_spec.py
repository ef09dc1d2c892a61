"""`judge run SPEC`: run exactly the command an evaluation spec pins (issue 35).

The spec's command line (inputs/spec.spec_argv) is run in this process by the command's own
code, as `judge resume` runs a recorded one, with `--spec SPEC`: the command checks the
spec's files again and records its hash in run.json and summary.json, and `judge resume`
of the run does both again. Only the shared flags a spec does not pin may be added (where
and how this machine runs: --out, --force, --concurrency, --shard, --quiet...); one that
would change what the spec pins is refused (exit 2) before anything is read.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli.app import app, app_for, exits_with_code, stderr
from judgecli.cli.flags import judge_flags
from judgecli.errors import ExitCode
from judgecli.settings.flags import JudgeFlags, flag_fields, pinned_by_spec


@app.command(
    "run",
    # A pinned flag is not one of this command's: it arrives in ctx.args, to be refused
    # with the reason (the spec pins it), not as click's "no such option".
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
@exits_with_code
@judge_flags(without=pinned_by_spec())
def run_command(
    ctx: typer.Context,
    spec: Annotated[
        Path,
        typer.Argument(
            metavar="SPEC",
            help="The evaluation spec (judge.yaml; `judge plan ... --write-spec` writes one).",
            show_default=False,
        ),
    ],
    *,
    flags: JudgeFlags,
) -> ExitCode:
    """Run exactly what SPEC pins: its data (refused if their bytes changed), rubric,
    judges and their settings, gate, stopping rule and correction. The flags below say
    where and how this machine runs it; a flag that would change the spec is refused.
    """
    from judgecli.cli.invocation import invocation
    from judgecli.inputs.spec import check_files, read_spec, spec_argv
    from judgecli.settings.spec_line import check_honoured, check_overrides, check_settings

    check_overrides(list(ctx.args))
    pinned = read_spec(spec)
    check_settings(pinned, spec)
    check_honoured(pinned, spec)
    check_files(pinned)
    # The flags given, as words (invocation: `judge run SPEC --out X ...`).
    given = invocation(ctx)[3:]
    args = [pinned.command.value, *spec_argv(pinned), "--spec", str(spec), *given]
    stderr.print(f"[dim]running: judge {' '.join(args)}[/]")
    with pinned_environment_ignored():
        code = app_for(args)(args=args, prog_name="judge", standalone_mode=False)
    return ExitCode(int(code or 0))


@contextlib.contextmanager
def pinned_environment_ignored() -> Iterator[None]:
    """Within: the JUDGE_* variables of the flags the spec pins are unset (and said so), so
    a setting the spec leaves at its default (JUDGE_REPEATS, JUDGE_SCREEN) is not taken
    from the shell instead: the run is the spec's alone.
    """
    names = [
        shared.flag.env
        for shared in flag_fields()
        if shared.name in pinned_by_spec() and shared.flag.env and shared.flag.env in os.environ
    ]
    kept = {name: os.environ.pop(name) for name in names if name is not None}
    for name in kept:
        stderr.print(f"[yellow]warning:[/] {name} is ignored: the spec pins what it would set")
    try:
        yield
    finally:
        os.environ.update(kept)
