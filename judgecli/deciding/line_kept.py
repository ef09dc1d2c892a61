"""A command line against the evaluation spec it names (`judge score ... --spec SPEC`): the
spec of the line (settings/spec_line.spec_of) and the spec given, compared key by key
before anything is called (issue 35). A hand-written `--spec` records a hash the run must
live up to: a line that departs from its spec is refused (exit 2), not recorded as the
spec's run for `judge verify` to find later.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgecli.deciding.verify import Departure, same
from judgecli.errors import InputError
from judgecli.inputs.spec import Spec, SpecCategories, SpecCommand, read_spec
from judgecli.settings.config import RunConfig
from judgecli.settings.spec_line import check_honoured, check_settings, spec_of

OPTION_DEFAULTS: dict[str, Any] = {"flip": True, "flip-policy": "tie"}
"""pairwise's own settings (settings/spec_line.PAIRWISE_SETTINGS) at their defaults, which
a recorded command line does not write out (cli/invocation.py)."""


def comparable(spec: Spec, base: Path) -> dict[str, Any]:
    """The spec's JSON with each file path resolved against `base` (the spec file's folder,
    or the folder the command line runs in) and the rubric by its hash alone (a library
    name and the path of the same file are one rubric).
    """
    data = spec.model_dump(mode="json")
    for dataset in data["datasets"]:
        dataset["path"] = str((base / dataset["path"]).resolve())
    if data.get("labels"):
        data["labels"]["path"] = str((base / data["labels"]["path"]).resolve())
    data["rubric"].pop("ref")
    if spec.command is SpecCommand.PAIRWISE:
        for judge in data["judges"]:
            # pairwise's own options at their defaults: a command line leaves them out.
            judge["settings"] = OPTION_DEFAULTS | judge["settings"]
    # No categories block is the default one: Holm, the `category` field.
    data["categories"] = data.get("categories") or SpecCategories().model_dump(mode="json")
    return data


def differences(planned: Any, given: Any, key: str) -> list[Departure]:
    """Each key where `given` (the command line's) is not `planned` (the spec's)."""
    if isinstance(planned, dict) and isinstance(given, dict):
        names = [*planned, *(name for name in given if name not in planned)]
        return [
            found
            for name in names
            for found in differences(planned.get(name), given.get(name), f"{key}.{name}")
        ]
    if isinstance(planned, list) and isinstance(given, list) and len(planned) == len(given):
        return [
            found
            for index, (one, other) in enumerate(zip(planned, given, strict=True))
            for found in differences(one, other, f"{key}[{index}]")
        ]
    if same(planned, given):
        return []
    return [Departure(key.lstrip("."), planned, given, "the command line departs from the spec")]


def line_departures(spec: Spec, command: str, argv: list[str]) -> list[Departure]:
    """Each way `judge COMMAND ARGV...` (run from the current folder) departs from `spec`."""
    line = spec_of(command, argv)
    return differences(comparable(spec, spec.resolve(".")), comparable(line, Path(".")), "")


def check_line(spec_path: Path, command: str, argv: list[str]) -> None:
    """Refuse (exit 2, naming each departure) a command line that is not the one the spec
    at `spec_path` pins, or a spec whose values the run cannot honour.
    """
    spec = read_spec(spec_path)
    check_settings(spec, spec_path)
    check_honoured(spec, spec_path)
    found = line_departures(spec, command, argv)
    if found:
        named = "; ".join(
            f"{d.key} (spec {shown(d.spec)}, command line {shown(d.run)})" for d in found
        )
        raise InputError(
            f"the command line departs from its --spec {spec_path}: {named}",
            hint=f"run the spec as it is (judge run {spec_path}), or write the spec of this "
            "command line (judge plan ... --write-spec)",
        )


def check_spec_line(config: RunConfig, argv: list[str]) -> None:
    """Before a run starts (the command line and the Python API alike): a run given a spec
    (--spec) whose command line `judge COMMAND ARGV...` is not the spec's is refused. A
    resume or a merge continues a run checked when it started (`judge merge` and `judge
    collect` verify the finished run).
    """
    if config.spec is None or config.resume or config.conclude_only:
        return
    check_line(Path(config.spec.path), argv[1], argv[2:])


def shown(value: Any) -> str:
    """A spec value as the error names it."""
    return "none" if value is None else str(value)
