"""Re-judging a run's pinned anchor set for `judge drift RUN_A --anchor FILE`: the command line
that made RUN_A (run.json's argv), with its dataset(s) replaced by the anchor file(s) and the
judge changed by the options given, run into the drift's directory.

The stored command line is parsed by the command's own parser and written out again
(`invocation.as_args`), so a flag is replaced whatever its spelling (`-m`, `--model=M`) and
every other flag keeps the value RUN_A ran with. Set back to their defaults: where the run
goes and what it prints (drift says), which cases (the anchor set is judged whole: no
--limit, --sample or --shard), and its gates (drift's gate is --max-shift; a --sequential
run would stop early, --batch would not finish).
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from judgecli.cli.app import stderr
from judgecli.cli.options import GATE_OPTIONS
from judgecli.errors import ConfigError, ExitCode, InputError
from judgecli.settings.flag_spec import Role
from judgecli.settings.flags import flag_fields
from judgecli.settings.gate_flags import threshold_fields

if TYPE_CHECKING:
    from judgecli.commands.drift.audit import AuditedRun

REPLACEABLE = "--model, --api-base, --rubric, --temperature and --no-cache"
"""The options of the stored command line that `judge drift --anchor` replaces (--help)."""

RESET = (
    frozenset(
        declared.name
        for declared in (*flag_fields(), *threshold_fields())
        if Role.THIS_RUN in declared.flag.roles
    )
    | GATE_OPTIONS
)
"""The parameters a re-judged anchor set has at their defaults, not at RUN_A's: the flags
that belong to the run they were given for (Role.THIS_RUN: where it goes, what it prints,
which cases, --batch), and RUN_A's whole gate (each threshold, GATE_OPTIONS): drift's gate
is --max-shift, and RUN_A's left on would stop the drift on its verdict (an undecided one
exits 3, as an unfinished run does: issue 29). `labels` is also calibrate's labels file,
which the anchor replaces; RUN_A's `--require-qualified` record names RUN_A's judge, which
drift replaces (issue 34)."""
# Settings of the old judge that do not carry over to a new --model: its price, and whether
# its server took the verdict schema (decided anew for the new one).
PER_MODEL = frozenset({"price", "json_schema"})
# calibrate judges the cases of its labels file; made with these, it judged other files
# (or nothing), which one --anchor cannot replace.
CALIBRATE_OTHER_INPUTS = ("results", "cases", "old", "new")

# The options of `judge drift` that change the judge of a re-judged anchor set.
REJUDGE = "Re-judge (--anchor)"
AnchorOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--anchor",
        metavar="FILE",
        rich_help_panel=REJUDGE,
        help="Instead of RUN_B: re-judge this pinned case file (pairwise: --anchor OLD "
        "--anchor NEW) with RUN_A's command line, changed by the options below.",
        show_default=False,
    ),
]
NewModelOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        "-m",
        metavar="MODEL",
        rich_help_panel=REJUDGE,
        help="The new judge (repeat for a panel). With --anchor; replaces RUN_A's --model.",
    ),
]
NewApiBaseOpt = Annotated[
    str | None, typer.Option(metavar="URL", rich_help_panel=REJUDGE, help="The new endpoint.")
]
NewRubricOpt = Annotated[
    str | None,
    typer.Option(
        "--rubric", "-r", metavar="RUBRIC", rich_help_panel=REJUDGE, help="The new rubric."
    ),
]
NewTemperatureOpt = Annotated[
    float | None,
    typer.Option(min=0, max=2, metavar="T", rich_help_panel=REJUDGE, help="The new temperature."),
]
NoCacheOpt = Annotated[
    bool, typer.Option("--no-cache", rich_help_panel=REJUDGE, help="Ask the judge anew.")
]
HINT = (
    "give the pinned case file(s) RUN_A judged: --anchor FILE (pairwise: --anchor OLD --anchor NEW)"
)


@dataclass(frozen=True)
class JudgeChange:
    """What changes in the judge: each None (or False) keeps RUN_A's own."""

    models: list[str] | None = None
    api_base: str | None = None
    rubric: str | None = None
    temperature: float | None = None
    no_cache: bool = False

    def given(self) -> list[str]:
        """The options given, as spelled on the command line."""
        names = {
            "--model": self.models,
            "--api-base": self.api_base,
            "--rubric": self.rubric,
            "--temperature": self.temperature,
            "--no-cache": self.no_cache or None,
        }
        return [name for name, value in names.items() if value is not None]


def check_usage(run_b: Path | None, anchor: list[Path] | None, change: JudgeChange) -> None:
    """Exactly one of RUN_B and --anchor; the judge's options only with --anchor."""
    if run_b is not None and anchor:
        raise ConfigError(
            "give RUN_B or --anchor, not both", hint="--anchor makes RUN_B by re-judging"
        )
    if run_b is None and not anchor:
        raise ConfigError(
            "nothing to compare RUN_A with",
            hint="judge drift RUN_A RUN_B, or judge drift RUN_A --anchor FILE --model NEW",
        )
    if run_b is not None and change.given():
        raise ConfigError(
            f"{', '.join(change.given())} change the judge of a re-judged anchor set: "
            "they need --anchor",
            hint=f"--anchor replaces {REPLACEABLE} in RUN_A's command line",
        )


def stored_command(info: dict[str, Any], run: Path) -> tuple[Any, dict[str, Any]]:
    """The click command that made the run and its parameters as parsed from run.json."""
    from judgecli.cli.app import app_for

    argv = info.get("argv")
    if not isinstance(argv, list) or len(argv) < 2:
        raise InputError(f"{run}: run.json has no command line to re-run", hint=HINT)
    name = str(argv[1])
    if name not in ("score", "pairwise", "calibrate"):
        raise InputError(
            f"{run} is a {name} run: --anchor re-judges score, pairwise and calibrate runs",
            hint="compare two finished runs instead: judge drift RUN_A RUN_B",
        )
    command = typer.main.get_command(app_for([name])).commands[name]  # type: ignore[attr-defined]
    ctx = command.make_context(name, [str(a) for a in argv[2:]], resilient_parsing=True)
    return command, dict(ctx.params)


def rejudged_argv(
    info: dict[str, Any],
    run: Path,
    anchors: list[Path],
    change: JudgeChange,
    out: Path,
    *,
    force: bool,
    quiet: bool,
) -> list[str]:
    """RUN_A's command line with the anchors for its dataset(s), the judge changed, into
    `out`. Paths given here are made absolute: the command runs where RUN_A ran.
    """
    from judgecli.cli.invocation import as_args

    command, params = stored_command(info, run)
    if command.name == "calibrate" and any(params.get(n) for n in CALIBRATE_OTHER_INPUTS):
        raise InputError(
            f"{run} judged the cases of --cases/--old/--new or --results, which --anchor "
            "cannot replace",
            hint="re-judge a calibrate run made from one labels file with its case fields",
        )
    positional = [
        p for p in command.params if p.param_type_name == "argument" and params.get(p.name)
    ]
    if len(anchors) != len(positional):
        names = " ".join(str(p.metavar or p.name).upper() for p in positional)
        raise InputError(
            f"{run} was made from {len(positional)} case file(s) ({names}); "
            f"{len(anchors)} --anchor given",
            hint=HINT,
        )
    from judgecli.inputs.rows import resolved

    replaced: dict[str, Any] = {
        p.name: resolved(a) for p, a in zip(positional, anchors, strict=True)
    }
    if change.models:
        replaced |= {"model": change.models} | dict.fromkeys(PER_MODEL)
    if change.api_base is not None:
        replaced["api_base"] = change.api_base
    if change.rubric is not None:
        replaced["rubric"] = change.rubric
    if change.temperature is not None:
        replaced["temperature"] = change.temperature
    replaced |= {"out": out.resolve(), "force": force, "quiet": quiet}
    if change.no_cache:
        replaced["no_cache"] = True
    args = [command.name]
    for param in command.params:
        value = param.default if param.name in RESET else params.get(param.name)
        args += as_args(param, replaced.get(param.name, value))
    return args


def anchor_ids(anchors: list[Path], field_map: dict[str, str]) -> set[str]:
    """The case ids of the anchor file(s) (pairwise: those in both); DatasetError naming
    file:line for a line that is not a case.
    """
    from judgecli.inputs.labels import dataset_ids

    found: set[str] | None = None
    for path in anchors:
        ids = set(dataset_ids(path, field_map))
        found = ids if found is None else found & ids
    return found or set()


def check_anchors(run: AuditedRun, anchors: list[Path]) -> None:
    """InputError when no anchor case is a case RUN_A judged (nothing would be compared)."""
    field_map = (run.info.get("config") or {}).get("field_map") or {}
    ids = anchor_ids(anchors, field_map)
    if not ids & {r.id for r in run.results}:
        files = ", ".join(str(a) for a in anchors)
        raise InputError(
            f"none of the {len(ids)} cases of {files} is a case {run.path} judged (no id matches)",
            hint="--anchor must be the pinned case set RUN_A was made from",
        )


def checked_rubric(run: AuditedRun, name: str) -> str:
    """The --rubric given, as an absolute path, checked to grade RUN_A's kind of verdict."""
    from judgecli.commands.drift.audit import verdict_kind
    from judgecli.commands.setup import named_rubric

    path, rubric = named_rubric(name)
    kind = verdict_kind(run)
    if rubric.kind is not kind:
        raise InputError(
            f"--rubric {name} is a {rubric.kind} rubric and {run.path} has {kind} verdicts: "
            "a flip between them means nothing",
            hint=f"give a {kind} rubric",
        )
    return str(path.resolve())


def rejudge(
    run: AuditedRun,
    anchors: list[Path],
    change: JudgeChange,
    out: Path,
    *,
    force: bool,
    quiet: bool,
) -> ExitCode:
    """Re-judge the anchor set into `out` with RUN_A's command line and the judge changed;
    its exit code (the re-judged run's report goes to stderr: stdout is the drift's).
    """
    from judgecli.cli.resume import rerun
    from judgecli.commands.drift.files import remove_if_empty

    check_anchors(run, anchors)
    if change.rubric is not None:
        change = JudgeChange(
            change.models,
            change.api_base,
            checked_rubric(run, change.rubric),
            change.temperature,
            change.no_cache,
        )
    args = rejudged_argv(run.info, run.path, anchors, change, out, force=force, quiet=quiet)
    stderr.print(f"[dim]re-judging the anchor set: judge {escape(' '.join(args))}[/]")
    made = [d for d in (out.parent, out) if not d.exists()]
    # RUN_A's command line must not pick up a shard from this machine's environment.
    environment = {key: os.environ.pop(key) for key in ["JUDGE_SHARD"] if key in os.environ}
    try:
        with contextlib.redirect_stdout(sys.stderr):
            code = rerun(args, Path(run.info.get("cwd") or "."))
    finally:
        os.environ.update(environment)
    if code is ExitCode.BAD_INPUT:
        for directory in reversed(made):
            remove_if_empty(directory)
    elif code is ExitCode.INCOMPLETE:
        stderr.print(
            f"[dim]hint:[/] finish it with: judge resume {escape(str(out))}, then compare: "
            f"judge drift {escape(str(run.path))} {escape(str(out))}"
        )
    return code
