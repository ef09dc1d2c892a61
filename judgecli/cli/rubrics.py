"""`judge rubrics list | show NAME | validate FILE...`: the rubric library."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from judgecli.cli.app import app, exits_with_code, print_error, stderr, stdout
from judgecli.errors import ExitCode

rubrics_app = typer.Typer(help="List, show and validate rubrics.", no_args_is_help=True)
app.add_typer(rubrics_app, name="rubrics")


@rubrics_app.command("list")
@exits_with_code
def list_command() -> ExitCode:
    """List the library: bundled rubrics and those in $JUDGE_RUBRICS_PATH folders."""
    from judgecli.inputs.rubric_file import load_rubric
    from judgecli.inputs.rubric_library import library
    from judgecli.settings.config import rubric_dirs

    table = Table(title="rubric library")
    for name in ("name", "kind", "scale"):
        table.add_column(name, no_wrap=True)
    # On a narrow terminal the fixed columns would take every character the description has.
    table.add_column("requires")
    table.add_column("description", ratio=1, min_width=24)
    dirs = rubric_dirs()
    for path in library(dirs):
        r = load_rubric(path, dirs=dirs)
        if r.scale:
            scale = f"{r.scale.min:g}-{r.scale.max:g}" + (
                f", {len(r.criteria)} criteria" if r.criteria else ""
            )
        else:
            scale = "/".join(r.choices or []) or "A/B/tie"
        table.add_row(path.stem, r.kind.value, scale, ", ".join(r.requires), r.description)
    stdout.print(table)
    return ExitCode.OK


@rubrics_app.command("show")
@exits_with_code
def show_command(
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="Library rubric name or a YAML file.")
    ],
) -> ExitCode:
    """Print a rubric's YAML on stdout (to start your own from it) and, on stderr, the
    messages the judge would get for a sample case.
    """
    from judgecli.commands.setup import named_rubric
    from judgecli.grading.prompt import preview_messages

    path, rubric = named_rubric(name)
    print(path.read_text(encoding="utf-8"), end="")
    if not rubric.asks_judge:
        stderr.print("(no judge is asked: this rubric only checks tool calls, docs/tool-calls.md)")
        return ExitCode.OK
    for message in preview_messages(rubric, sample_case_file(path.stem)):
        stderr.rule(f"{message['role']} message (sample case)")
        stderr.print(escape(message["content"]), soft_wrap=True)
    return ExitCode.OK


def sample_case_file(name: str) -> Path | None:
    """datasets/<name>.jsonl beside the bundled library, when it exists."""
    from judgecli.inputs.rubric_library import LIBRARY_DIR

    candidate = LIBRARY_DIR.parent / "datasets" / f"{name}.jsonl"
    return candidate if candidate.exists() else None


@rubrics_app.command("validate")
@exits_with_code
def validate_command(
    files: Annotated[list[Path], typer.Argument(metavar="FILE...", help="Rubric YAML files.")],
) -> ExitCode:
    """Check every rubric file: `FILE: ok (...)` on stdout, or its error (file:line and the
    fix) on stderr; exit 2 when any is invalid.
    """
    from judgecli.errors import RubricError
    from judgecli.inputs.rubric_file import load_rubric
    from judgecli.settings.config import rubric_dirs

    invalid = 0
    for path in files:
        try:
            r = load_rubric(path, dirs=rubric_dirs())
        except RubricError as err:
            invalid += 1
            print_error(err)
            continue
        stdout.print(
            f"{escape(str(path))}: ok ({r.name} v{r.version}, {r.kind.value}, {r.content_hash})",
            soft_wrap=True,
        )
    return ExitCode.BAD_INPUT if invalid else ExitCode.OK


@rubrics_app.command("schema")
@exits_with_code
def schema_command() -> ExitCode:
    """Print the JSON Schema of the rubric format (rubrics/schema.json is this output)."""
    import json

    from judgecli.rubric import rubric_json_schema

    print(json.dumps(rubric_json_schema(), indent=2))
    return ExitCode.OK
