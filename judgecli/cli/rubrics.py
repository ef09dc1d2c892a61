"""`judge rubrics list | show NAME | validate FILE`: the rubric library."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from judgecli.cli import app, exits_with_code, stderr
from judgecli.errors import ExitCode

rubrics_app = typer.Typer(help="List, show and validate rubrics.", no_args_is_help=True)
app.add_typer(rubrics_app, name="rubrics")


@rubrics_app.command("list")
@exits_with_code
def list_command() -> ExitCode:
    """List the bundled rubrics."""
    from judgecli.rubric import library, load_rubric

    table = Table(title="bundled rubrics")
    for name in ("name", "kind", "scale", "requires", "description"):
        table.add_column(name)
    for path in library():
        r = load_rubric(path)
        scale = (
            f"{r.scale.min:g}-{r.scale.max:g}" if r.scale else "/".join(r.choices or []) or "A/B"
        )
        table.add_row(path.stem, r.kind.value, scale, ", ".join(r.requires), r.description)
    stderr.print(table)
    return ExitCode.OK


@rubrics_app.command("show")
@exits_with_code
def show_command(
    name: Annotated[str, typer.Argument(help="Bundled rubric name or a YAML file.")],
) -> ExitCode:
    """Print a rubric's YAML (stdout), e.g. to start your own from it."""
    from judgecli.rubric import find_rubric, load_rubric

    path = find_rubric(name)
    load_rubric(path)
    print(path.read_text(encoding="utf-8"), end="")
    return ExitCode.OK


@rubrics_app.command("validate")
@exits_with_code
def validate_command(
    files: Annotated[list[Path], typer.Argument(help="Rubric YAML files.")],
) -> ExitCode:
    """Check rubric files; exit 2 with file:line and the fix on the first problem."""
    from judgecli.rubric import load_rubric

    for path in files:
        r = load_rubric(path)
        stderr.print(f"{escape(str(path))}: ok ({r.name} v{r.version}, {r.kind.value}, "
                     f"{r.content_hash})")  # fmt: skip
    return ExitCode.OK
