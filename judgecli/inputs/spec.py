"""The evaluation spec file (`judge.yaml`): the decision a run makes, pinned before it runs —
the data (each file's sha256), the rubric (its content hash), the judges and every setting
that changes their verdicts, the gate (metric, floor, on), α, the stopping rule, the
categories' correction and the label design. Read strictly (inputs/yamlfile.py): a bad key
or value is an InputError naming file:line (exit 2). `judge run SPEC` runs `spec_argv(spec)`;
the run records `spec_hash(spec)`, which formatting and comments do not change.

The spec of a command line (`spec_of`) is settings/spec_line.py's: it reads the flag tables,
a later stage than this one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from judgecli.errors import InputError, RubricError
from judgecli.inputs.rubric_file import load_rubric
from judgecli.inputs.rubric_library import find_rubric
from judgecli.inputs.yamlfile import strict_mapping, yaml_line

SPEC_VERSION = 1
"""The spec format this judge writes and reads."""
DEFAULT_ALPHA = 0.05
"""The error rate a spec and a gate take when none is given."""
HINT = "see docs/plan.md#the-spec-file for the spec's keys (`judge plan ... --write-spec FILE`)"

Setting = StrictBool | StrictInt | StrictFloat | StrictStr | list[StrictStr]
"""A judge setting's value, as its flag takes it (a switch is true or false, a flag given
more than once the list of its values)."""


class SpecCommand(StrEnum):
    """The judging commands a spec can pin."""

    SCORE = "score"
    PAIRWISE = "pairwise"


class StopRule(StrEnum):
    """When judging stops: after a fixed number of cases, or by the sequential gate."""

    FIXED = "fixed"
    SEQUENTIAL = "sequential"


class Correction(StrEnum):
    """How the per-category tests are corrected (Holm; --fdr: Benjamini-Hochberg)."""

    HOLM = "holm"
    FDR = "fdr"


class GateOn(StrEnum):
    """What the gate compares to its floor (--on; cli/options.GateOnChoice's values)."""

    POINT = "point"
    LOWER_BOUND = "lower-bound"
    CORRECTED = "corrected"
    CORRECTED_LOWER_BOUND = "corrected-lower-bound"
    SEQUENTIAL = "sequential"


class Strict(BaseModel):
    """A spec block: unknown keys are errors, and no value is coerced from another type
    (`floor: "0.5"` is refused, not read as a number).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


class SpecDataset(Strict):
    """One data file and the sha256 of its bytes ("sha256:<hex>")."""

    path: StrictStr
    sha256: StrictStr = Field(pattern=r"^sha256:[0-9a-f]{64}$")


class SpecRubric(Strict):
    """The rubric (a file or a library name) and its content hash (rubric.content_hash)."""

    ref: StrictStr
    hash: StrictStr = Field(pattern=r"^sha256:[0-9a-f]+$")


class SpecJudge(Strict):
    """One judge model and the settings that change its verdicts (flags of Role.VERDICTS,
    by their long name without dashes: `temperature`, `api-base`, `json-schema`).
    """

    model: StrictStr
    settings: dict[str, Setting] = Field(default_factory=dict)


class SpecGate(Strict):
    """The gate: a threshold flag's name (`min-win-rate`), its floor, what it compares."""

    metric: StrictStr = Field(pattern=r"^(min|max)-[a-z0-9-]+$")
    floor: StrictFloat
    on: GateOn = GateOn.POINT


class SpecStopping(Strict):
    """Fixed n (the first n cases; all when n is absent) or the sequential gate."""

    rule: StopRule = StopRule.FIXED
    n: StrictInt | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def n_is_fixed(self) -> SpecStopping:
        """A sequential run stops by its rule, not at n."""
        if self.rule is StopRule.SEQUENTIAL and self.n is not None:
            raise ValueError("n is for rule: fixed (a sequential run stops by its own rule)")
        return self


class SpecCategories(Strict):
    """The per-category tests: the case field that names a category, their correction."""

    field: StrictStr | None = None
    correction: Correction = Correction.HOLM


class SpecLabels(Strict):
    """The human labels (`--labels`) and their sha256, and how they were drawn."""

    path: StrictStr
    sha256: StrictStr = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    design: StrictStr | None = None


class Spec(Strict):
    """An evaluation spec: everything that decides a run's verdict, and nothing else."""

    version: StrictInt = SPEC_VERSION
    command: SpecCommand
    datasets: list[SpecDataset] = Field(min_length=1)
    rubric: SpecRubric
    judges: list[SpecJudge] = Field(min_length=1)
    gate: SpecGate | None = None
    alpha: StrictFloat = Field(default=DEFAULT_ALPHA, gt=0, lt=1)
    stopping: SpecStopping = Field(default_factory=SpecStopping)
    categories: SpecCategories | None = None
    labels: SpecLabels | None = None
    _base: Path = PrivateAttr(default_factory=Path)
    """The folder relative paths are read from (the spec file's)."""

    @model_validator(mode="after")
    def fits_one_command_line(self) -> Spec:
        """The command line gives every judge the same settings, and a pairwise run two
        data files.
        """
        if self.version != SPEC_VERSION:
            raise ValueError(f"version {self.version} is not one this judge reads ({SPEC_VERSION})")
        if any(judge.settings != self.judges[0].settings for judge in self.judges):
            raise ValueError("every judge must have the same settings (one command line)")
        wanted = 2 if self.command is SpecCommand.PAIRWISE else 1
        if len(self.datasets) != wanted:
            raise ValueError(f"{self.command.value} takes {wanted} dataset(s)")
        return self

    def resolve(self, path: str) -> Path:
        """A path of the spec, as it is opened (relative to the spec file's folder)."""
        return self._base / path

    def with_base(self, base: Path) -> Spec:
        """This spec, its relative paths read from `base`."""
        self._base = base
        return self


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes, as `sha256:<hex>`."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()


def data_pins(argv: Sequence[str]) -> list[dict[str, str]]:
    """run.json's `datasets`: each data file a run's command line names (its words after
    `judge COMMAND`, up to the first flag), as given, with the sha256 of its bytes now, when
    the run starts: so `judge verify` checks the bytes the run judged, not the file as it
    is later. A word that is no file (hf://owner/name) is left out.
    """
    pins: list[dict[str, str]] = []
    for word in argv[2:]:
        if word.startswith("-"):
            break
        path = Path(word)
        with contextlib.suppress(OSError):
            if path.is_file():
                pins.append({"path": word, "sha256": file_sha256(path)})
    return pins


def rubric_hash(ref: str, *, relative_to: Path | None = None) -> str:
    """The content hash of the rubric `ref` names (a file or a library name)."""
    return load_rubric(find_rubric(ref, relative_to=relative_to)).content_hash


def spec_hash(spec: Spec) -> str:
    """The sha256 (`sha256:<hex>`) of the spec's canonical JSON: formatting, comments, key order and
    defaults written out or left implicit do not change it.
    """
    canonical = json.dumps(spec.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def spec_argv(spec: Spec) -> list[str]:
    """The arguments of the command the spec runs (after `judge COMMAND`): its data files,
    rubric, judges and their settings, gate, stopping rule, correction and labels.
    """
    argv = [str(spec.resolve(dataset.path)) for dataset in spec.datasets]
    rubric = spec.rubric.ref
    if not (spec._base / rubric).exists() or Path(rubric).is_absolute():
        argv += ["--rubric", rubric]
    else:
        argv += ["--rubric", str(spec.resolve(rubric))]
    for judge in spec.judges:
        argv += ["--model", judge.model]
    for name, value in sorted(spec.judges[0].settings.items()):
        if value is True:
            argv.append(f"--{name}")
        elif value is False:
            argv.append(f"--no-{name}")
        elif isinstance(value, list):
            argv += [part for item in value for part in (f"--{name}", item)]
        else:
            argv += [f"--{name}", str(value)]
    if spec.gate is not None:
        argv += [f"--{spec.gate.metric}", repr(spec.gate.floor), "--on", spec.gate.on.value]
    if spec.stopping.rule is StopRule.SEQUENTIAL:
        argv.append("--sequential")
        if spec.alpha != DEFAULT_ALPHA:  # the sequential gate's error rate
            argv += ["--alpha", repr(spec.alpha)]
    elif spec.stopping.n is not None:
        argv += ["--limit", str(spec.stopping.n)]
    if spec.categories is not None and spec.categories.correction is Correction.FDR:
        argv.append("--fdr")
    if spec.labels is not None:
        argv += ["--labels", str(spec.resolve(spec.labels.path))]
    return argv


def read_spec(path: Path) -> Spec:
    """The spec file at `path`, validated; InputError naming file:line and the fix."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such spec file", hint=HINT) from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"{path}: cannot read the spec ({err})", hint=HINT) from None
    data, node = parse_yaml(text, source=str(path))
    try:
        spec = Spec.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = [str(part) for part in first["loc"]]
        at = yaml_line(node, loc)
        where = f"{path}:{at}" if at else str(path)
        field = ".".join(loc) or "spec"
        message = "unknown key" if first["type"] == "extra_forbidden" else first["msg"]
        message = message.removeprefix("Value error, ")
        raise InputError(f"{where}: {field}: {message}", hint=HINT) from None
    return spec.with_base(path.parent)


def parse_yaml(text: str, *, source: str) -> tuple[dict[str, Any], yaml.Node]:
    """Spec YAML as a mapping and its node tree (for line numbers), read strictly."""
    return strict_mapping(
        text,
        source=source,
        shape="a spec must be a YAML mapping (command: ..., ...)",
        error=InputError,
        hint=lambda _problem: HINT,
    )


def check_files(spec: Spec) -> None:
    """Refuse a spec whose data, labels or rubric changed since it was written (exit 2,
    naming the file): the run would not be the one planned.
    """
    pinned = [(dataset.path, dataset.sha256) for dataset in spec.datasets]
    if spec.labels is not None:
        pinned.append((spec.labels.path, spec.labels.sha256))
    for name, expected in pinned:
        path = spec.resolve(name)
        try:
            found = file_sha256(path)
        except OSError as err:
            raise InputError(
                f"{path}: cannot read a file the spec pins ({err.strerror})",
                hint="restore the file, or write the spec again (judge plan ... --write-spec)",
            ) from None
        if found != expected:
            raise InputError(
                f"{path}: its bytes changed since the spec was written (now {found}, the "
                f"spec pins {expected})",
                hint="restore the planned data, or plan again and write a new spec "
                "(judge plan ... --write-spec)",
            )
    try:
        found = rubric_hash(spec.rubric.ref, relative_to=spec._base)
    except RubricError as err:
        raise InputError(f"rubric {spec.rubric.ref!r}: {err.message}", hint=err.hint) from None
    if found != spec.rubric.hash:
        raise InputError(
            f"rubric {spec.rubric.ref!r} changed since the spec was written (hash {found}, the "
            f"spec pins {spec.rubric.hash})",
            hint="restore the planned rubric, or plan again and write a new spec",
        )


class SpecRef(BaseModel):
    """The spec a run is (run.json's and summary.json's `spec`): its file and hash, and
    the hash of the spec the run directory held before, when a resume or --force changed it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    hash: str
    previous: str | None = None


def spec_record(path: Path, *, check: bool = True) -> SpecRef:
    """The spec at `path` read, its pinned files checked unless not `check` (exit 2 when
    one changed), and its reference for the run's records.
    """
    spec = read_spec(path)
    if check:
        check_files(spec)
    return SpecRef(path=str(path), hash=spec_hash(spec))
