"""`judge merge RUN... --out DIR`: join shard runs into one run, and gate it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from judgecli.cli.app import app, exits_with_code, stderr
from judgecli.cli.options import JsonOpt, QuietOpt, path_value
from judgecli.errors import ExitCode


@app.command("merge")
@exits_with_code
def merge_command(
    runs: Annotated[
        list[Path],
        typer.Argument(metavar="RUN...", help="The run directories of every shard (--shard i/N)."),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            metavar="DIR",
            parser=path_value,
            help="The merged run's directory (new).",
        ),
    ],
    force: Annotated[
        bool, typer.Option("--force", help="Replace an earlier judge run in --out.")
    ] = False,
    quiet: QuietOpt = False,
    json_output: JsonOpt = False,
) -> ExitCode:
    """Join the runs of N shards into the run one machine would have made: its summary,
    reports and gate come from the shards' command line, without --shard, judging nothing.
    A run made from a spec (judge run SPEC) is verified against it: a departure exits 1.
    """
    from judgecli.cli.resume import rerun, resumed_argv
    from judgecli.running.merge import merge_shards
    from judgecli.store import RunStore

    created = not out.exists()
    info = merge_shards(runs, out, replace=force)
    args = resumed_argv(info["argv"], out, retry_failed=False)
    args += ["--conclude-only"] + ["--quiet"] * quiet + ["--json"] * json_output
    if not quiet:
        stderr.print(f"[dim]merged {len(info['merged'])} shards into {escape(str(out))}[/]")
    # The shards' command line must not pick up a shard from this machine's environment.
    environment = {key: os.environ.pop(key) for key in ["JUDGE_SHARD"] if key in os.environ}
    try:
        code = rerun(args, Path(info.get("cwd") or "."))
    finally:
        os.environ.update(environment)
    if code is ExitCode.BAD_INPUT:
        # Nothing half-written: a merge that cannot be concluded leaves no merged run.
        store = RunStore(out)
        store.created = created
        store.discard()
        return code
    from judgecli.cli.verify import spec_kept

    return spec_kept(out.resolve(), code)
