"""`judge view [RUN_OR_FOLDER...]`: a local web app to browse, compare and label runs
(docs/view.md). Its first line of output is the address it serves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli.app import app, exits_with_code, stderr
from judgecli.errors import ConfigError, ExitCode, InputError
from judgecli.gc_pause import resume_gc

MAX_PORT = 65535
DEFAULT_PORT = 8650


@app.command("view")
@exits_with_code
def view_command(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="RUN_OR_FOLDER...",
            help="Run directories, or folders of them (scanned anew on each page). Default: runs",
            show_default=False,
        ),
    ] = None,
    port: Annotated[
        int, typer.Option(metavar="N", help="Port to listen on (0 picks a free one).")
    ] = DEFAULT_PORT,
    host: Annotated[
        str,
        typer.Option(
            metavar="ADDRESS",
            help="Address to listen on. Any but loopback needs the access token printed at start.",
        ),
    ] = "127.0.0.1",
    seed: Annotated[
        int, typer.Option(metavar="N", help="Seed of the blind A/B order and of the label plan.")
    ] = 0,
) -> ExitCode:
    """Serve a local web app over runs: browse their cases with filters and search, compare
    two runs, and label cases (blind, with keyboard shortcuts); labels go to
    RUN/labels/<rater>.jsonl at once. Ctrl-C stops it.
    """
    import asyncio
    import sys

    from judgecli.view.server import new_state, serve_forever

    roots = paths or [Path("runs")]
    missing = [p for p in roots if not p.is_dir()]
    if missing:
        raise InputError(
            f"{missing[0]}: no such directory",
            hint="pass run directories or folders of runs, e.g. judge view runs",
        )
    if not 0 <= port <= MAX_PORT:
        raise ConfigError(
            f"--port {port} is not a TCP port (0 to {MAX_PORT})", hint="e.g. --port 8650"
        )
    state = new_state(roots, host, seed)

    def ready(bound: int) -> None:
        shown = f"[{host}]" if ":" in host else host
        print(f"http://{shown}:{bound}/", flush=True)
        if state.tokens.access is not None:
            print(f"http://{shown}:{bound}/?token={state.tokens.access}", flush=True)
            stderr.print(
                f"listening on {host}, not loopback: every visitor needs the access token "
                "(open the second address once; it sets a cookie)"
            )
        where = ", ".join(str(p) for p in roots)
        stderr.print(f"serving the runs in {where}; labels go to RUN/labels/ — Ctrl-C stops")
        sys.stderr.flush()

    resume_gc()  # a server runs for hours: it collects its garbage (gc_pause.py)
    try:
        asyncio.run(serve_forever(state, host, port, on_ready=ready))
    except KeyboardInterrupt:
        stderr.print("judge view stopped")
    return ExitCode.OK
