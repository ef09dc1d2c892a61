"""The typer app and what every command shares: `app`, `exits_with_code`, `stdout`, `stderr`.

Command modules import these from here, and register their command on `app` when they are
imported; `app_for` imports only the module of the command a process runs (COMMANDS).

`exits_with_code` is the one place that turns outcomes into exit codes, so CliRunner tests
see exactly the codes users see: a JudgeError prints `error: ...` (and a hint) on stderr
and exits with its code; an unexpected crash prints its traceback and exits 3 — never 1,
which CI reads as "the gate failed".

What users read or pipe (reports, tables, listings) goes to stdout; progress, warnings and
errors go to stderr; with --json, stdout carries the JSON alone (see cli/render.py).
"""

from __future__ import annotations

import contextlib
import copy
import errno
import functools
import inspect
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Annotated, Any, ParamSpec

import typer
from rich.markup import escape
from typer.core import TyperGroup

from judgecli import __version__
from judgecli.cli.streams import WholeLines
from judgecli.errors import ExitCode, JudgeError, JudgeWarning

P = ParamSpec("P")

# soft_wrap: an error is one line a user can grep and copy, never wrapped at the terminal width.
# Without a terminal, neither console wraps or crops anything (cli/streams.py).
stderr = WholeLines(stderr=True, highlight=False, soft_wrap=True)
stdout = WholeLines(highlight=False)


# An option declared without a metavar shows its value as a word, as click does, rather
# than typer's Python type (`<float range>`); options.py names most values better.
TYPE_WORDS = {"path": "PATH", "int": "N", "float": "NUMBER", "str": "TEXT"}


def value_word(param: Any, ctx: Any) -> str:
    """`PATH`, `N`, `NUMBER`, `TEXT` (or a choice's `a|b`) for an option's value."""
    label = str(param.display_type(ctx)).strip("<>").removesuffix(" range")
    if label.startswith("list[") and label.endswith("]"):
        label = label[5:-1]
    return TYPE_WORDS.get(label, label)


def tidy_help(command: Any, ctx: Any) -> None:
    """Adjust typer's help for an 80-column screen, for `command` and every subcommand:
    a flag takes no value, so it shows no type (typer prints `<bool>`, even on --help); an
    option without a metavar gets a word for its value; and a docstring's paragraphs are
    joined into lines the terminal wraps (in rich markup mode typer keeps their hard line
    breaks, which wrap raggedly at any width but the one they were written for).
    """
    help_option = command.get_help_option(ctx)
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        metavar = param.metavar
        if param.param_type_name == "argument":
            # typer brackets an optional argument itself: `[RUN_B]` would show as `[[RUN_B]]`.
            if metavar and metavar.startswith("[") and metavar.endswith("]"):
                param.metavar = metavar[1:-1]
        elif metavar is None:
            param.metavar = "" if getattr(param, "is_flag", False) else value_word(param, ctx)
    if command.help:
        # click's own rule: a paragraph starting with \b keeps its line breaks.
        paragraphs = inspect.cleandoc(command.help).split("\n\n")
        command.help = "\n\n".join(
            p if p.startswith("\b") else " ".join(p.split()) for p in paragraphs
        )
    for sub in getattr(command, "commands", {}).values():
        tidy_help(sub, ctx)


class OneLineErrors(TyperGroup):
    """Usage errors (unknown flag, a value out of range, a missing argument) as one
    `error:` line plus a hint, exit 2 — instead of click's multi-line box — so CI logs and
    wrappers see the same shape for every kind of bad input.
    """

    tidied = False

    def get_params(self, ctx: Any) -> list[Any]:  # noqa: D102
        # The root's parameters are read before any help is printed: tidy the whole tree once.
        if not self.tidied:
            self.tidied = True
            tidy_help(self, ctx)
        return super().get_params(ctx)

    def main(  # noqa: D102
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        from judgecli.cli.streams import pipe_safe

        sys.stdout = pipe_safe(sys.stdout)  # a reader that leaves early changes no exit code
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except Exception as err:
            # typer vendors click (its exception classes are private): recognise a usage
            # error by its interface.
            if not (hasattr(err, "format_message") and hasattr(err, "exit_code")):
                raise
            if type(err).__name__ == "NoArgsIsHelpError":
                err.show()  # type: ignore[attr-defined]  # prints the help
            else:
                command = getattr(getattr(err, "ctx", None), "command_path", "judge")
                stderr.print(f"[bold red]error:[/] {escape(err.format_message())}")
                stderr.print(f"[dim]hint:[/] see `{escape(command)} --help`")
            code = err.exit_code
        if not standalone_mode:
            return code
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=OneLineErrors,
    name="judge",
    help="Grade LLM outputs with LLM judges: debiased verdicts, honest statistics, a CI gate.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_show_locals=False,  # locals may hold API keys
)


COMMANDS = (
    "align",
    "arena",
    "calibrate",
    "collect",
    "demo",
    "drift",
    "gate",
    "merge",
    "pairwise",
    "probe",
    "qualify",
    "refine",
    "plan",
    "report",
    "resume",
    "run",
    "score",
    "simulate",
    "verify",
    "view",
    "cache",
    "review",
    "rubrics",
)
"""Every command (or group of them), in the order `judge --help` lists them. Each is
registered on `app` by the module of its name in this package, when that module is imported:
a new command's module is named here, or no process imports it.
"""


MODULE_OF = {"run": "run_spec"}
"""The module of a command not named as it (`judge run SPEC` is run_spec's: `run` alone
would read as the spine's, running/)."""


def app_for(args: Sequence[str]) -> typer.Typer:
    """The app that runs the command line `args`: with the command it names alone (`judge
    score ...`: score), or with every command for anything else (no command, `--help`,
    `--version`, a misspelt name), which lists them and suggests one.

    Only the named command's module is imported: the others' imports (their options, and
    the core modules some import at the top) are start-up time a process does not need.
    """
    name = args[0] if args else None
    if name not in COMMANDS:
        return whole_app()
    import_command(name)
    return invoked_only(app, args)


def whole_app() -> typer.Typer:
    """The app with every command registered, in the order of COMMANDS."""
    for name in COMMANDS:
        import_command(name)
    # A process that imported one command's module before the rest (a test does) registered
    # that command first: `--help` lists them in the order of COMMANDS all the same.
    app.registered_commands.sort(key=lambda c: COMMANDS.index(registered_name(c)))
    app.registered_groups.sort(key=lambda g: COMMANDS.index(registered_name(g)))
    return app


def import_command(name: str) -> None:
    """Import the module that registers the command `name` (one of COMMANDS)."""
    # __import__ rather than importlib.import_module: `python -X importtime`, which start-up
    # is measured with, does not list a module importlib imports.
    __import__(f"judgecli.cli.{MODULE_OF.get(name, name)}")


def registered_name(registered: Any) -> str:
    """The name a registered command (typer's CommandInfo) or group (TyperInfo) is run by."""
    from typer.main import get_command_name

    callback = getattr(registered, "callback", None)
    return str(registered.name or get_command_name(getattr(callback, "__name__", "")))


def invoked_only(whole: typer.Typer, args: Sequence[str]) -> typer.Typer:
    """The app with only the command `args` name (`judge score ...`: score alone).

    Typer turns every command's signature into click options before it runs any (~35 ms
    for judge's 16 commands); one command needs its own only. Anything else (no command,
    `--help`, `--version`, a misspelt name) gets the whole app, which lists and suggests.
    """
    name = args[0] if args else None
    commands = [c for c in whole.registered_commands if registered_name(c) == name]
    groups = [g for g in whole.registered_groups if registered_name(g) == name]
    if not commands and not groups:
        return whole
    lean = copy.copy(whole)
    lean.registered_commands = commands
    lean.registered_groups = groups
    return lean


def exits_with_code(command: Callable[P, ExitCode | None]) -> Callable[P, None]:
    """Run a command body and exit with the code its outcome means."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
        from judgecli.settings.config import debug_enabled  # lazy: keeps `judge --help` fast

        try:
            with warnings_shown(), run_dirs_released():
                code = command(*args, **kwargs)
        except JudgeError as err:
            if debug_enabled():
                raise
            print_error(err)
            raise typer.Exit(int(err.exit_code)) from None
        except (typer.Exit, typer.BadParameter):
            raise
        except KeyboardInterrupt:
            stderr.print("[bold red]error:[/] interrupted")
            raise typer.Exit(int(ExitCode.INCOMPLETE)) from None
        except Exception as err:
            if debug_enabled():
                raise
            # A net, not the fix: a full disk or a folder without permission is the world's
            # failure, best said where it happens; one that still gets here is no bug.
            said = world_failure(err) if isinstance(err, OSError) else None
            if said is not None:
                print_error(said)
            else:
                stderr.print_exception(show_locals=False)
                stderr.print(
                    "[bold red]error:[/] unexpected crash (a bug in judge; please report it)"
                )
            raise typer.Exit(int(ExitCode.INCOMPLETE)) from None
        sys.stdout.flush()  # here, where a closed pipe is harmless (streams.PipeSafe)
        raise typer.Exit(int(code if code is not None else ExitCode.OK))

    return wrapper


@contextlib.contextmanager
def warnings_shown() -> Iterator[None]:
    """Show each JudgeWarning issued in the block as a `warning:` line on stderr, every time
    (other warnings keep Python's own filters and display).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("always", JudgeWarning)
        python_shows = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], *args: Any, **kw: Any) -> None:
            if issubclass(category, JudgeWarning):
                stderr.print(f"[yellow]warning:[/] {escape(str(message))}")
            else:
                python_shows(message, category, *args, **kw)

        warnings.showwarning = show
        yield


class Nesting:
    """How many commands this process is inside: resume, merge and collect run another."""

    depth = 0


@contextlib.contextmanager
def run_dirs_released() -> Iterator[None]:
    """Within: a command runs. When the outermost one ends, the run directories it locked
    are released (store/lock.py): an inner command's run is its caller's to finish.
    """
    Nesting.depth += 1
    try:
        yield
    finally:
        Nesting.depth -= 1
        # Only a command that wrote a run imported the lock module; importing it here would
        # slow the start of every other.
        lock = sys.modules.get("judgecli.store.lock")
        if Nesting.depth == 0 and lock is not None:
            lock.release_run_dirs()


def print_error(err: JudgeError) -> None:
    """`error: <message>` and, when it has one, `hint: <fix>` on stderr."""
    stderr.print(f"[bold red]error:[/] {escape(err.message)}")
    if err.hint:
        stderr.print(f"[dim]hint:[/] {escape(err.hint)}")


def world_failure(err: OSError) -> JudgeError | None:
    """An OSError the machine caused (no space, no permission, a read-only file system, too
    many open files) as an error naming the path and the fix; None for any other OSError,
    which stays a crash with its traceback.
    """
    from judgecli.store.disk import machine_fix

    fix = machine_fix(err)
    if fix is None:
        return None
    paths = [str(p) for p in (err.filename, err.filename2) if p is not None]
    where = f"{' -> '.join(paths)}: " if paths else ""
    return JudgeError(
        f"{where}{os_error_text(err)}",
        hint=f"{fix}; then run the command again (a stopped run continues with judge resume "
        "RUN_DIR)",
    )


def os_error_text(err: OSError) -> str:
    """`No space left on device (ENOSPC)`: the OS's words and the errno's name."""
    name = errno.errorcode.get(err.errno or 0)
    text = err.strerror or str(err)
    return f"{text} ({name})" if name else text


def show_version(value: bool) -> None:
    """--version: print and stop."""
    if value:
        print(f"judge {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=show_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Grade LLM outputs with LLM judges."""
