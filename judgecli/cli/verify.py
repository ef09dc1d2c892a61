"""`judge verify RUN --spec SPEC`: did a finished run keep to its evaluation spec? Exit 0
when it did, 1 naming each departure, 2 for a run or spec that cannot be read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from judgecli.cli.app import app, exits_with_code, stderr
from judgecli.cli.options import JsonOpt, QuietOpt, path_value
from judgecli.errors import ExitCode

if TYPE_CHECKING:
    from judgecli.deciding.verify import Departure, Verification


@app.command("verify")
@exits_with_code
def verify_command(
    run: Annotated[
        Path,
        typer.Argument(metavar="RUN", help="A finished run's directory.", parser=path_value),
    ],
    spec: Annotated[
        Path,
        typer.Option(
            "--spec",
            metavar="SPEC",
            parser=path_value,
            help="The evaluation spec the run was planned by (judge.yaml).",
        ),
    ],
    quiet: QuietOpt = False,
    json_output: JsonOpt = False,
) -> ExitCode:
    """Check that a finished run kept to its spec: the data's sha256, the rubric's hash, the
    judges and every setting that changes verdicts, the gate, the planned n or the
    sequential rule's stop, the categories' correction and the labels.
    """
    from judgecli.deciding.verify import read_record, verify_spec
    from judgecli.inputs.spec import read_spec

    planned = read_spec(spec)
    checked = verify_spec(planned, read_record(run))
    show(checked, run, spec, quiet=quiet, json_output=json_output)
    return ExitCode.OK if checked.kept else ExitCode.GATE_FAILED


def show(checked: Verification, run: Path, spec: Path, *, quiet: bool, json_output: bool) -> None:
    """Each departure on stderr (not when quiet) and the verdict; with --json the result
    (`departures`, `unverified`, `kept`) on stdout.
    """
    if not quiet:
        for key in checked.unverified:
            stderr.print(f"[dim]note:[/] {escape(key)}: {escape(unverified_why(key))}")
    for departure in checked.departures:
        stderr.print(f"[red]departure:[/] {escape(departure_line(departure))}")
    if checked.kept:
        line = f"[bold green]kept:[/] {escape(str(run))} kept to {escape(str(spec))}"
    else:
        n = len(checked.departures)
        line = f"[bold red]departed:[/] {escape(str(run))} departs from {escape(str(spec))} ({n})"
    if not quiet or not checked.kept:
        stderr.print(line, soft_wrap=True)
    if json_output:
        print(json.dumps(checked.as_json(), indent=2))


def unverified_why(key: str) -> str:
    """Why a pinned value is listed as unverified."""
    if key.startswith("datasets["):
        return (
            "hashed now: the run records no sha256 of the data it judged (a run made before "
            "run.json's `datasets`); bytes edited since the run would show as a departure"
        )
    return "the run records no value to check"


def departure_line(departure: Departure) -> str:
    """`key: message (spec X, run Y)`."""
    return (
        f"{departure.key}: {departure.message} "
        f"(spec {json.dumps(departure.spec)}, run {json.dumps(departure.run)})"
    )


def spec_kept(run_dir: Path, code: ExitCode) -> ExitCode:
    """`judge merge` and `judge collect`: when the finished run records the spec it was made
    from (`spec` in run.json, `judge run SPEC`), the run's departures from that spec, each
    named on stderr, turn a passed run into exit 1: a CI merge step must not pass a run that
    is not the one planned. A spec that can no longer be read is a warning (the run is
    already written: exit 2 would say nothing was).
    """
    from judgecli.deciding.verify import read_record, verify_spec
    from judgecli.errors import InputError
    from judgecli.inputs.spec import read_spec

    if code not in (ExitCode.OK, ExitCode.GATE_FAILED):
        return code
    try:
        record = read_record(run_dir)
    except InputError:
        return code
    recorded = record.info.get("spec")
    if not isinstance(recorded, dict) or not recorded.get("path"):
        return code
    path = record.cwd / str(recorded["path"])
    try:
        checked = verify_spec(read_spec(path), record)
    except InputError as err:
        stderr.print(
            f"[yellow]warning:[/] cannot verify {escape(str(run_dir))}: {escape(err.message)}"
        )
        return code
    for departure in checked.departures:
        stderr.print(f"[red]departure:[/] {escape(departure_line(departure))}")
    if checked.kept:
        return code
    stderr.print(
        f"[bold red]departed:[/] {escape(str(run_dir))} departs from its spec {escape(str(path))}"
    )
    return ExitCode.GATE_FAILED
