"""A judging command line and its evaluation spec: `spec_of` (the spec a command line pins,
for `judge plan ... --write-spec`) and `check_overrides` (`judge run SPEC` refuses a flag
that would change the spec). Which flag pins what is read off the flag tables' roles:
Role.VERDICTS flags are the judges' settings, the thresholds the gate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from judgecli.errors import InputError
from judgecli.inputs.spec import (
    Correction,
    GateOn,
    Setting,
    Spec,
    SpecCategories,
    SpecCommand,
    SpecDataset,
    SpecGate,
    SpecJudge,
    SpecLabels,
    SpecRubric,
    SpecStopping,
    StopRule,
    file_sha256,
    rubric_hash,
)
from judgecli.settings.flag_spec import FlagField, Role
from judgecli.settings.flags import flag_fields, pinned_by_spec
from judgecli.settings.gate_flags import threshold_fields

HINT = "write the command as `judge COMMAND DATA... --rubric R --model M [flags]`"

# The flags of the judging commands beside the shared tables (cli/options.py): the rubric,
# the gate's options and pairwise's order handling; what each pins in a spec.
COMMAND_VALUED = {"--rubric", "-r", "--on", "--gate-on", "--labels", "--flip-policy", "--alpha"}
COMMAND_SWITCHES = {"--sequential", "--fdr", "--flip", "--no-flip", "--allow-partial"}
NOT_IN_SPEC = {"--sample": "a spec pins the first n cases (--limit N), not a sample"}


@dataclass
class Parsed:
    """A command line split into its data files and its flags' values (each as given)."""

    positional: list[str] = field(default_factory=list)
    values: dict[str, list[str]] = field(default_factory=dict)
    switches: dict[str, bool] = field(default_factory=dict)


def long_name(row: FlagField) -> str:
    """A flag's long name without dashes: `json-schema` of --json-schema/--no-json-schema."""
    return row.flag.names[0].split("/")[0].removeprefix("--")


def switch_spellings() -> dict[str, tuple[str, bool]]:
    """Each spelling of a switch: the name it sets and to what."""
    found: dict[str, tuple[str, bool]] = {}
    for row in flag_fields():
        if row.switch:
            on, _, off = row.flag.names[0].partition("/")
            found[on] = (on, True)
            if off:
                found[off] = (on, False)
    for name in COMMAND_SWITCHES:
        found[name] = ("--flip", False) if name == "--no-flip" else (name, True)
    return found


def valued_spellings() -> dict[str, str]:
    """Each spelling of a flag that takes a value: its long name."""
    found = {
        spelt: row.flag.names[0]
        for row in flag_fields()
        if not row.switch
        for spelt in row.flag.spellings
    }
    found |= {row.spelling: row.spelling for row in threshold_fields()}
    found |= {name: name for name in COMMAND_VALUED}
    found |= {"-r": "--rubric", "--gate-on": "--on"}
    return found


def parse(argv: list[str]) -> Parsed:
    """Split a command line; InputError for a flag no judging command takes."""
    switches, valued = switch_spellings(), valued_spellings()
    parsed = Parsed()
    args = iter(argv)
    for arg in args:
        name, eq, inline = arg.partition("=")
        if not arg.startswith("-") or arg == "-":
            parsed.positional.append(arg)
        elif name in valued:
            value = inline if eq else next(args, None)
            if value is None:
                raise InputError(f"{name} needs a value", hint=HINT)
            parsed.values.setdefault(valued[name], []).append(value)
        elif arg in switches:
            long, on = switches[arg]
            parsed.switches[long] = on
        else:
            raise InputError(f"{arg}: not a flag of a judging command", hint=HINT)
    return parsed


def typed(value: str) -> Setting:
    """A setting's value as the spec keeps it: a number when it reads as one."""
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def one(parsed: Parsed, name: str) -> str | None:
    """The value of a flag given at most once (the last, as typer takes it)."""
    values = parsed.values.get(name)
    return values[-1] if values else None


def spec_of(command: str, argv: list[str], *, alpha: float | None = None) -> Spec:
    """The spec of `judge COMMAND ARGV...`: its data files and rubric hashed now, its
    judges and their verdict settings, gate, stopping rule, correction and labels; flags
    that decide nothing about the verdict (--out, --concurrency...) are left out.
    InputError (exit 2) for a command or flag a spec cannot pin, or a file it cannot read.
    """
    try:
        kind = SpecCommand(command)
    except ValueError:
        raise InputError(
            f"a spec pins `judge score` or `judge pairwise`, not `judge {command}`", hint=HINT
        ) from None
    parsed = parse(argv)
    for name, why in NOT_IN_SPEC.items():
        if name in parsed.values:
            raise InputError(f"{name}: {why}", hint="use --limit N, or give every case")
    rubric = one(parsed, "--rubric")
    models = parsed.values.get("--model", [])
    if rubric is None or not models:
        raise InputError("a spec needs --rubric and at least one --model", hint=HINT)
    settings: dict[str, Setting] = {}
    for row in flag_fields():
        name = row.flag.names[0].split("/")[0]
        if Role.VERDICTS not in row.flag.roles or name == "--model":
            continue
        if row.switch and name in parsed.switches:
            settings[long_name(row)] = parsed.switches[name]
        elif name in parsed.values:
            given = parsed.values[name]
            repeatable = "list" in str(row.type)
            settings[long_name(row)] = list(given) if repeatable else typed(given[-1])
    if "--flip" in parsed.switches:
        settings["flip"] = parsed.switches["--flip"]
    if (policy := one(parsed, "--flip-policy")) is not None:
        settings["flip-policy"] = policy
    gates = [row.spelling for row in threshold_fields() if row.spelling in parsed.values]
    if len(gates) > 1:
        raise InputError(
            f"a spec pins one gate, not {', '.join(gates)}",
            hint="keep one --min-*/--max-* threshold",
        )
    on = GateOn(one(parsed, "--on") or GateOn.POINT.value)
    gate = (
        SpecGate(metric=gates[0].removeprefix("--"), floor=float(one(parsed, gates[0]) or 0), on=on)
        if gates
        else None
    )
    limit = one(parsed, "--limit")
    sequential = parsed.switches.get("--sequential", False)
    stopping = (
        SpecStopping(rule=StopRule.SEQUENTIAL)
        if sequential
        else SpecStopping(n=int(limit) if limit else None)
    )
    labels_path = one(parsed, "--labels")
    given_alpha = one(parsed, "--alpha")
    return Spec(
        command=kind,
        datasets=[SpecDataset(path=path, sha256=hashed(Path(path))) for path in parsed.positional],
        rubric=SpecRubric(ref=rubric, hash=rubric_hash(rubric)),
        judges=[SpecJudge(model=model, settings=settings) for model in models],
        gate=gate,
        alpha=alpha if alpha is not None else float(given_alpha) if given_alpha else 0.05,
        stopping=stopping,
        categories=SpecCategories(
            correction=Correction.FDR if parsed.switches.get("--fdr") else Correction.HOLM
        ),
        labels=SpecLabels(path=labels_path, sha256=hashed(Path(labels_path)))
        if labels_path
        else None,
    )


def hashed(path: Path) -> str:
    """A pinned file's sha256; InputError naming it when it cannot be read."""
    try:
        return file_sha256(path)
    except OSError as err:
        raise InputError(
            f"{path}: cannot read it to pin it in the spec ({err.strerror})",
            hint="pass a data file that exists",
        ) from None


def check_overrides(argv: list[str]) -> None:
    """`judge run SPEC ARGS`: refuse (exit 2) an argument that would change what the spec
    pins; only flags of where and how this machine runs (--out, --concurrency, --quiet...)
    may be added.
    """
    switches, valued = switch_spellings(), valued_spellings()
    pinned = pinned_by_spec()
    free = {
        spelt for row in flag_fields() if row.name not in pinned for spelt in row.flag.spellings
    }
    args = iter(argv)
    for arg in args:
        name, eq, _ = arg.partition("=")
        if not arg.startswith("-"):
            raise InputError(
                f"{arg}: `judge run` takes one SPEC, whose data files it pins",
                hint="name the data in the spec (a new spec, a new hash)",
            )
        if name in free:
            if name in valued and not eq:
                next(args, None)  # its value
            continue
        if name in valued or name in switches:
            raise InputError(
                f"{name}: the spec pins what this flag would change; `judge run SPEC` runs "
                "exactly the spec",
                hint="edit the spec (a new spec, a new hash), or leave the flag out",
            )
        raise InputError(f"{arg}: not a flag of a judging command", hint=HINT)


PAIRWISE_SETTINGS = frozenset({"flip", "flip-policy"})
"""pairwise's own options that change verdicts (cli/options.py), beside the shared flags."""


def check_settings(spec: Spec, where: Path) -> None:
    """Refuse (exit 2) a judge setting no flag of the spec's command takes, or one that
    does not change verdicts, naming the spec file and the key.
    """
    known = {long_name(row) for row in flag_fields() if Role.VERDICTS in row.flag.roles}
    known -= {"model"}
    if spec.command is SpecCommand.PAIRWISE:
        known |= PAIRWISE_SETTINGS
    for at, judge in enumerate(spec.judges):
        for name in judge.settings:
            if name not in known:
                raise InputError(
                    f"{where}: judges.{at}.settings.{name}: not a setting of `judge "
                    f"{spec.command.value}` that changes verdicts",
                    hint=f"the settings are: {', '.join(sorted(known))}",
                )
