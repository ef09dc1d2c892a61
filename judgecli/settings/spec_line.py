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
    DEFAULT_ALPHA,
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
COMMAND_VALUED |= {"--require-qualified"}  # who may judge, not what: no key of a spec
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
    rubric = one(parsed, "--rubric") or ("pairwise" if kind is SpecCommand.PAIRWISE else None)
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
    sequential = parsed.switches.get("--sequential", False) or on is GateOn.SEQUENTIAL
    if sequential and limit is not None:
        raise InputError(
            "--limit with --sequential: a spec's sequential rule runs over all the data, and "
            "cannot pin a cap on it",
            hint="leave --limit out (the sequence stops once it decides), or gate a fixed n",
        )
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
            field=mapped_category(settings),
            correction=Correction.FDR if parsed.switches.get("--fdr") else Correction.HOLM,
        ),
        labels=SpecLabels(
            path=labels_path,
            sha256=hashed(Path(labels_path)),
            design=labels_design(Path(labels_path)),
        )
        if labels_path
        else None,
    )


def mapped_category(settings: dict[str, Setting]) -> str | None:
    """The column --field category=COLUMN maps a case's category to, if it does."""
    column = category_column(settings)
    return None if column == "category" else column


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


def cases_in_data(command_line: list[str]) -> int:
    """The cases the data of `COMMAND ARGV...` holds (score: its valid cases; pairwise: its
    pairs joined on id), before --limit; a JudgeError (exit 2) when the data or the rubric
    cannot be read.
    """
    from judgecli.inputs.dataset import parse_field_map, scan_dataset
    from judgecli.inputs.pairs import scan_pairs
    from judgecli.inputs.rubric_file import load_rubric
    from judgecli.inputs.rubric_library import find_rubric

    command, parsed = command_line[0], parse(command_line[1:])
    ref = one(parsed, "--rubric") or ("pairwise" if command == SpecCommand.PAIRWISE else None)
    if ref is None:
        raise InputError("a spec needs --rubric and at least one --model", hint=HINT)
    requires = load_rubric(find_rubric(ref)).requires
    fields = parse_field_map(parsed.values.get("--field", []))
    data = parsed.positional
    if command == SpecCommand.PAIRWISE and len(data) == 2:
        partial = parsed.switches.get("--allow-partial", False)
        pairs = scan_pairs(
            data[0], data[1], requires=requires, field_map=fields, allow_partial=partial
        )
        return pairs.total
    if command == SpecCommand.SCORE and len(data) == 1:
        return scan_dataset(data[0], requires=requires, field_map=fields).total
    raise InputError(f"`judge {command}` takes {'OLD NEW' if command == 'pairwise' else 'DATA'}")


def with_planned_n(spec: Spec, n: int) -> Spec:
    """`spec` stopping after the first `n` cases (--write-spec pins a fixed gate's n to
    the cases it needs, issue 35).
    """
    return spec.model_copy(update={"stopping": SpecStopping(n=n)})


RANDOM_DESIGN = "random"
"""The label design of labels no plan drew: PPI++ reads them as a uniform random subset."""


def category_column(settings: dict[str, Setting]) -> str:
    """The column a run of these judge settings reads a case's category from: `category`,
    or the one their `field` setting maps it to (--field category=COLUMN).
    """
    mapped = settings.get("field")
    pairs = mapped if isinstance(mapped, list) else [mapped] if isinstance(mapped, str) else []
    for pair in pairs:
        ours, _, theirs = pair.partition("=")
        if ours == "category" and theirs:
            return theirs
    return "category"


def labels_design(path: Path) -> str:
    """How the run reads the labels at `path` to have been drawn: the strategy of the label
    plan (`judge review plan`) its label files name, else `random` (PPI++ takes labels no
    plan drew for a uniform random subset).
    """
    from judgecli.inputs.label_files import label_files, read_label_files

    files = label_files(path) if path.exists() else None
    if files is None:
        return RANDOM_DESIGN
    planned = {
        raw.strategy
        for raw in read_label_files(files)
        if raw.inclusion_probability is not None and raw.strategy
    }
    return ", ".join(sorted(planned)) or RANDOM_DESIGN


def check_honoured(spec: Spec, where: Path) -> None:
    """Refuse (exit 2, naming the key and the fix) a value the spec records that its run
    cannot apply (issue 35): an `alpha` other than 0.05 for a fixed-n gate (its intervals
    are 95%; the --sequential gate takes any alpha), a `categories.field` other than the
    column the run reads categories from, a `labels.design` other than the one the labels
    file records.
    """
    if spec.stopping.rule is StopRule.FIXED and spec.alpha != DEFAULT_ALPHA:
        raise InputError(
            f"{where}: alpha: {spec.alpha:g} cannot be applied: a fixed-n gate reads 95% "
            "intervals (alpha 0.05); only the sequential gate takes another alpha",
            hint="set alpha: 0.05, or stopping: {rule: sequential}",
        )
    field = spec.categories.field if spec.categories is not None else None
    if field is not None and field != (column := category_column(spec.judges[0].settings)):
        raise InputError(
            f"{where}: categories.field: the run reads categories from the column "
            f"{column!r}, not {field!r}",
            hint=f"set categories.field: {column}, or map it with the judges' setting "
            f"field: [category={field}] (--field category={field})",
        )
    if spec.labels is not None and spec.labels.design is not None:
        drawn = labels_design(spec.resolve(spec.labels.path))
        if spec.labels.design != drawn:
            raise InputError(
                f"{where}: labels.design: the run weighs these labels as drawn by "
                f"{drawn!r} (what the labels file records), not {spec.labels.design!r}",
                hint=f"set labels.design: {drawn}, or label a `judge review plan` of that design",
            )
