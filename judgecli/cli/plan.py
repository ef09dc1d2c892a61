"""`judge plan COMMAND ARGS... --effect E` (or `judge plan SPEC --effect E`): how many cases
the gate of a judging command line, or of an evaluation spec, needs (docs/plan.md, "Sizing the
run"). Calls no judge; writes nothing but --write-spec's file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli.app import app, exits_with_code
from judgecli.cli.options import path_value
from judgecli.errors import ExitCode


@app.command(
    "plan",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": True},
)
@exits_with_code
def plan_command(
    command_line: Annotated[
        list[str],
        typer.Argument(
            metavar="COMMAND ARGS... | SPEC",
            help="The judging command line to size, as you would run it without `judge` "
            "(e.g. pairwise OLD NEW --min-win-rate 0.55), or an evaluation spec file.",
            show_default=False,
        ),
    ],
    effect: Annotated[
        float,
        typer.Option(
            "--effect",
            metavar="VALUE",
            help="The true value the gate should pass (a win rate of 0.60 against a bar of 0.55).",
            show_default=False,
        ),
    ],
    power: Annotated[
        float,
        typer.Option("--power", metavar="P", help="Chance the gate passes at --effect."),
    ] = 0.8,
    alpha: Annotated[
        float | None,
        typer.Option(
            "--alpha",
            metavar="A",
            help="Error rate of the interval (its 1 − A level) or of the sequential gate "
            "(default: a SPEC's alpha, else 0.05).",
            show_default=False,
        ),
    ] = None,
    pilot: Annotated[
        Path | None,
        typer.Option(
            "--pilot",
            metavar="RUN",
            parser=path_value,
            help="A finished pilot run of the command: its ties and spread replace the "
            "worst case (needed for --min-mean).",
            show_default=False,
        ),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the plan as JSON on stdout.")
    ] = False,
    write_spec_to: Annotated[
        Path | None,
        typer.Option(
            "--write-spec",
            metavar="FILE",
            parser=path_value,
            help="Also write the evaluation spec of the planned command line to FILE "
            "(`judge run FILE` runs it).",
            show_default=False,
        ),
    ] = None,
) -> ExitCode:
    """Size the run: the cases a fixed-n gate needs on the point estimate and on its lower
    bound, and the expected and 95th-percentile cases of the --sequential gate, for the
    command's bar, the true value --effect, --alpha and --power. Calls no judge.
    """
    import json

    from judgecli.cli.app import stderr, stdout
    from judgecli.deciding.planned_gate import PLANNED_COMMANDS, planned_gate
    from judgecli.deciding.planning import make_plan, read_pilot
    from judgecli.errors import InputError
    from judgecli.inputs.spec import DEFAULT_ALPHA, StopRule

    spec_n: int | None = None
    if len(command_line) == 1 and command_line[0] not in PLANNED_COMMANDS:
        from judgecli.inputs.spec import check_files, read_spec, spec_argv
        from judgecli.settings.spec_line import check_honoured

        if write_spec_to is not None:
            raise InputError(
                "--write-spec writes the spec of a command line, and a spec was given",
                hint="copy the spec file instead",
            )
        spec = read_spec(Path(command_line[0]))
        check_honoured(spec, Path(command_line[0]))
        check_files(spec)
        command_line = [spec.command.value, *spec_argv(spec)]
        alpha = spec.alpha if alpha is None else alpha
        spec_n = spec.stopping.n if spec.stopping.rule is StopRule.FIXED else None
    alpha = DEFAULT_ALPHA if alpha is None else alpha
    pilot_run = None if pilot is None else read_pilot(pilot, planned_gate(command_line))
    plan = make_plan(command_line, effect=effect, power=power, alpha=alpha, pilot=pilot_run)
    if alpha != DEFAULT_ALPHA and not plan.gate.sequential:
        # The run reads a fixed-n gate's 95% interval whatever --alpha says (judge run and
        # --write-spec refuse such a spec): the sizing stands for a bound it cannot apply.
        stderr.print(
            f"[yellow]warning:[/] sized for a {1 - alpha:.0%} bound, but a fixed-n gate "
            f"reads its {1 - DEFAULT_ALPHA:.0%} interval; only a --sequential run applies "
            "--alpha"
        )
    if spec_n is not None and spec_n < plan.cases_needed:
        stderr.print(
            f"[yellow]warning:[/] the spec stops after {spec_n} cases, fewer than the "
            f"{plan.cases_needed} its gate needs for power {plan.power:.0%} at {effect}"
        )
    warn_of_short_data(command_line, plan.cases_needed, spec_n)
    if write_spec_to is not None:
        from judgecli.settings.spec_line import check_honoured, spec_of, with_planned_n
        from judgecli.store.spec import write_spec

        # Written only once the plan stands: a command line it cannot size writes nothing.
        written = spec_of(command_line[0], command_line[1:], alpha=alpha)
        check_honoured(written, write_spec_to)
        if written.stopping.rule is StopRule.FIXED:
            if written.stopping.n is None:  # the planned n is the spec's (issue 35)
                written = with_planned_n(written, plan.cases_needed)
            elif written.stopping.n < plan.cases_needed:
                stderr.print(
                    f"[yellow]warning:[/] --limit {written.stopping.n} is below the "
                    f"{plan.cases_needed} cases the gate needs for power "
                    f"{plan.power:.0%} at {effect}; the spec keeps --limit's n"
                )
        write_spec(written, write_spec_to)
        stderr.print(f"spec written to {write_spec_to}", markup=False)
    if json_output:
        print(json.dumps(plan.to_json(), indent=2))
        return ExitCode.OK

    gate = plan.gate
    spread = f"sd {plan.sd:.3f}" + (
        f", ties {plan.tie_share:.0%}" if gate.metric.value == "win_rate" else ""
    )
    source = f"from {plan.pilot.cases} cases of {plan.pilot.path}" if plan.pilot else "worst case"
    stdout.print(
        f"{gate.flag} {gate.floor} against a true {gate.metric.value} of {plan.effect}, "
        f"power {plan.power:.0%}, alpha {plan.alpha} ({spread}, {source})",
        markup=False,
    )
    stdout.print(f"  fixed n, on the point:        {plan.cases_point} cases", markup=False)
    stdout.print(f"  fixed n, on the lower bound:  {plan.cases_lower_bound} cases", markup=False)
    if plan.sequential_p95 is not None:
        stdout.print(
            f"  --sequential:                 {plan.sequential_expected:.0f} expected, "
            f"{plan.sequential_p95} at the 95th percentile",
            markup=False,
        )
    stdout.print(f"cases needed: {plan.cases_needed}", markup=False)
    return ExitCode.OK


def warn_of_short_data(command_line: list[str], needed: int, spec_n: int | None) -> None:
    """Warn when the data of the planned command holds fewer cases than the gate needs, or
    than a spec's n (which `judge run` refuses); a note when it cannot be counted (the
    plan itself reads no data).
    """
    from rich.markup import escape

    from judgecli.cli.app import stderr
    from judgecli.errors import JudgeError
    from judgecli.settings.spec_line import cases_in_data

    try:
        held = cases_in_data(command_line)
    except JudgeError as err:
        stderr.print(f"[dim]note: the data's cases were not counted: {escape(err.message)}[/]")
        return
    if held < needed:
        stderr.print(
            f"[yellow]warning:[/] the data holds {held} cases, fewer than the {needed} the "
            "gate needs: collect more cases, or plan for a larger --effect"
        )
    if spec_n is not None and held < spec_n:
        stderr.print(
            f"[yellow]warning:[/] the spec plans {spec_n} cases and the data holds {held}: "
            "`judge run` refuses it"
        )
