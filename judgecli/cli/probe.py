"""`judge probe [OLD NEW]`: how often the judge's verdict moves when a pair is perturbed in
ways that should not move it (order, padding, verbosity), with intervals and a gate.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from judgecli.cli.app import app, exits_with_code, stderr
from judgecli.cli.flags import judge_flags
from judgecli.cli.options import GATE, GateOnChoice, GateOnOpt, RubricOpt
from judgecli.errors import ConfigError, ExitCode
from judgecli.settings.flags import CASCADE_FLAGS, CHECKLIST_FLAGS, SCALE_OUT_FLAGS, JudgeFlags

if TYPE_CHECKING:
    from judgecli.grading.perturb import Probe
    from judgecli.summary.probe import ProbeSummary


def ceiling(flag: str, probe: str) -> Any:
    """A --max-*-bias option: the highest flip rate `probe` may show (exit 1 above it)."""
    return typer.Option(
        flag,
        min=0.0,
        max=1.0,
        rich_help_panel=GATE,
        show_default=False,
        metavar="RATE",
        help=f"Fail (exit 1) when the {probe} probe's flip rate is above RATE (see --on).",
    )


def parse_probes(text: str) -> tuple[Probe, ...]:
    """--probes position,length: the probes, in the order given (ConfigError: unknown)."""
    from judgecli.grading.perturb import Probe

    names = [n.strip().casefold() for n in text.split(",") if n.strip()]
    known = {p.value: p for p in Probe}
    if unknown := [n for n in names if n not in known]:
        said = ", ".join(repr(n) for n in unknown)
        raise ConfigError(
            f"--probes: no probe named {said}", hint=f"choose from {', '.join(known)}"
        )
    return tuple(dict.fromkeys(known[n] for n in names))


@app.command("probe")
@exits_with_code
@judge_flags(without=CHECKLIST_FLAGS | CASCADE_FLAGS | SCALE_OUT_FLAGS)
def probe_command(
    ctx: typer.Context,
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="[OLD NEW]",
            help="The pairs' answers (OLD and NEW, joined on id; default: the bundled "
            "datasets/old.jsonl and new.jsonl).",
            show_default=False,
        ),
    ] = None,
    rubric: RubricOpt = "pairwise",
    *,
    flags: JudgeFlags,
    probes: Annotated[
        str,
        typer.Option(
            "--probes",
            metavar="P,P",
            help="Probes to run: position, length, verbosity, self (self needs a panel and "
            "data naming its generators).",
        ),
    ] = "position,length,verbosity",
    max_position_bias: Annotated[float | None, ceiling("--max-position-bias", "position")] = None,
    max_length_bias: Annotated[float | None, ceiling("--max-length-bias", "length")] = None,
    max_verbosity_bias: Annotated[
        float | None, ceiling("--max-verbosity-bias", "verbosity")
    ] = None,
    max_self_bias: Annotated[float | None, ceiling("--max-self-bias", "self")] = None,
    on: GateOnOpt = GateOnChoice.POINT,
    power: Annotated[
        float | None,
        typer.Option(
            "--power",
            help="Size the pairs for this power (with --effect): see docs/probe.md.",
            show_default=False,
        ),
    ] = None,
    effect: Annotated[
        float | None,
        typer.Option(
            "--effect",
            help="The flip rate above each probe's floor the sizing must detect.",
            show_default=False,
        ),
    ] = None,
) -> ExitCode:
    """Probe a pairwise judge for position, length and verbosity bias: judge each pair as
    given, perturb the pairs it decided, and measure how often the verdict moves.
    """
    from judgecli.cli.flags import run_with_progress
    from judgecli.commands.probe import ProbeAsked, prepare_probe
    from judgecli.commands.setup import find_rubric_of
    from judgecli.deciding.gate import GateOn
    from judgecli.grading.perturb import Probe

    given = {
        Probe.POSITION: max_position_bias,
        Probe.LENGTH: max_length_bias,
        Probe.VERBOSITY: max_verbosity_bias,
        Probe.SELF: max_self_bias,
    }
    asked = ProbeAsked(
        probes=parse_probes(probes),
        ceilings={p: c for p, c in given.items() if c is not None},
        on=GateOn(on),
        power=power,
        effect=effect,
    )
    given_files = files or []
    if len(given_files) not in (0, 2):
        raise ConfigError(
            f"judge probe takes OLD and NEW, or neither; got {len(given_files)} file(s)",
            hint="judge probe OLD.jsonl NEW.jsonl --model M, or no files for the bundled pairs",
        )
    old, new = given_files or (None, None)
    job = prepare_probe(old, new, find_rubric_of(rubric), flags, asked)
    outcome = run_with_progress(ctx, flags, job)
    return show(outcome.summary, outcome.run_dir, quiet=flags.quiet, json_output=flags.json_output)


def show(summary: ProbeSummary, run_dir: Path, *, quiet: bool, json_output: bool) -> ExitCode:
    """Print each probe's line, the gate and where the run is (with --json the summary on
    stdout, the rest on stderr), and say how to exit: 3 incomplete or undecided, 1 when the
    gate failed.
    """
    import json

    from judgecli.cli.render import print_undecided, report_console
    from judgecli.commands.outcome import exit_code
    from judgecli.report.probe import finding, gate_line, headline

    console = report_console(json_output=json_output)
    if not quiet:
        for probe in summary.probes:
            console.print(escape(headline(probe)), soft_wrap=True)
        console.print(escape(finding(summary)), soft_wrap=True)
    for warning in summary.warnings:
        stderr.print(f"[yellow]warning:[/] {escape(warning)}")
    if (line := gate_line(summary)) and not summary.incomplete:
        gate = summary.gate
        colour = "green" if gate and gate.passed else "red" if gate and gate.decided else "yellow"
        console.print(f"[bold {colour}]{escape(line)}[/]", soft_wrap=True)
    console.print(f"run directory: {escape(str(run_dir))}", soft_wrap=True)
    if json_output:
        print(json.dumps(summary.model_dump(mode="json", exclude_none=True), indent=2))
    if summary.incomplete:
        stderr.print(f"[bold red]error:[/] {escape(summary.incomplete)}")
        from judgecli.cli.retry_advice import retry_hint

        errors = [failure.error for failure in summary.failures]
        stderr.print(f"[dim]hint:[/] {escape(retry_hint(run_dir, errors))}")
    elif summary.gate is not None and not summary.gate.decided:
        print_undecided(summary.gate.undecided, summary.gate.hint)
    return exit_code(summary)
