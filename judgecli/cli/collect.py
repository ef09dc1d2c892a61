"""`judge collect RUN [--wait]`: finish a run submitted with --batch."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from judgecli.cli.app import app, exits_with_code, stderr
from judgecli.cli.options import JsonOpt, QuietOpt
from judgecli.errors import ExitCode


@app.command("collect")
@exits_with_code
def collect_command(
    run_dir: Annotated[Path, typer.Argument(metavar="RUN", help="A run submitted with --batch.")],
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait until every batch has ended, then finish.")
    ] = False,
    poll: Annotated[
        float,
        typer.Option(
            "--poll", metavar="SECONDS", min=0.0, help="With --wait: seconds between checks."
        ),
    ] = 30.0,
    quiet: QuietOpt = False,
    json_output: JsonOpt = False,
) -> ExitCode:
    """Download the batches of RUN that have ended and, once all have, finish the run:
    replies that do not parse are repaired and failed lines asked again as ordinary calls,
    then summary.json, the reports and the gate, as the online run would have them.
    Exit 3 while batches are still running (collect again later, or --wait).
    """
    from judgecli.cli.resume import rerun, resumed_argv
    from judgecli.running.batch_record import SubmittedBatch
    from judgecli.running.batching import collect_batches
    from judgecli.running.merge import without_flags
    from judgecli.store import read_run_info

    def show(batch: SubmittedBatch) -> None:
        if quiet:
            return
        state = f"{batch.status}, downloaded" if batch.downloaded else batch.status
        failed = f", {batch.failed} failed" if batch.failed else ""
        problem = f" ({escape(batch.error)})" if batch.error else ""
        stderr.print(
            f"  {batch.id} ({escape(batch.model)}): {state}, {batch.completed} of "
            f"{batch.requests} done{failed}{problem}"
        )

    collect_batches(run_dir, wait=wait, poll_s=poll, on_status=show)
    info = read_run_info(run_dir, hint="pass a --batch run's directory")
    argv = without_flags(list(info["argv"]), set(), {"--batch"})
    args = resumed_argv(argv, run_dir, retry_failed=False)
    args += ["--quiet"] * quiet + ["--json"] * json_output
    if not quiet:
        stderr.print(f"[dim]every batch is in; finishing {escape(str(run_dir))}[/]")
    from judgecli.cli.verify import spec_kept

    return spec_kept(run_dir.resolve(), rerun(args, Path(info.get("cwd") or ".")))
