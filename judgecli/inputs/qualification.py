"""The qualification record `judge qualify` writes (`qualification.json` in its run
directory), read back for `--require-qualified RECORD` on score, pairwise and gate.

The record says which judge (its models), which rubric (name and content hash) and which
floor (`min_agreement`) were qualified, on which sets and with which numbers. A run that
requires it is refused (exit 2, before any call) when its judge or its rubric is another, or
when a set's agreement lower bound is below the record's floor (a record of a failed
qualification does not qualify). A record that cannot be read is exit 2 naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from judgecli.errors import ConfigError, InputError

RECORD_FILE = "qualification.json"
RECORD_KIND: Final = "judge-qualification"


class QualifiedSet(BaseModel):
    """One set's numbers as the record keeps them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    n: int
    agreement: float | None
    agreement_ci: tuple[float, float] | tuple[None, None] | None
    kappa: float | None
    position_consistency: float | None
    sha256: str


class QualificationRecord(BaseModel):
    """qualification.json: what was qualified and how well it agreed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["judge-qualification"] = RECORD_KIND
    version: Literal[1] = 1
    judge_version: str
    models: list[str]
    """The judge: every model of its panel, sorted."""
    rubric: str
    rubric_version: int | str
    rubric_hash: str
    min_agreement: float | None
    """The floor the agreement's lower bound was held to (None: none was asked)."""
    passed: bool | None
    """Whether every set's lower bound reached the floor (None without a floor)."""
    sets: list[QualifiedSet]
    created: str
    run: str
    """The qualify run's directory, as it was given."""

    def below_floor(self) -> list[str]:
        """Sets whose agreement's lower bound is below the floor, or has none."""
        if self.min_agreement is None:
            return []
        floor = self.min_agreement
        return [
            s.name
            for s in self.sets
            if s.agreement_ci is None or s.agreement_ci[0] is None or s.agreement_ci[0] < floor
        ]


def read_record(path: Path) -> QualificationRecord:
    """The record at `path` (a qualification.json, or the qualify run directory holding
    one); InputError naming the file when it is missing or malformed.
    """
    file = path / RECORD_FILE if path.is_dir() else path
    hint = f"give the {RECORD_FILE} a finished `judge qualify` run wrote (docs/qualify.md)"
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as err:
        raise InputError(
            f"{file}: cannot read the qualification record ({err})", hint=hint
        ) from None
    try:
        return QualificationRecord.model_validate(json.loads(text))
    except json.JSONDecodeError as err:
        raise InputError(f"{file}: not JSON ({err.msg} at line {err.lineno})", hint=hint) from None
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise InputError(
            f"{file}: not a qualification record: {where}: {first['msg']}", hint=hint
        ) from None


def check_qualified(
    record: QualificationRecord,
    source: Path,
    *,
    models: list[str],
    rubric_name: str,
    rubric_hash: str,
) -> None:
    """Refuse (ConfigError, exit 2) a judge or rubric other than the record's, or a record
    whose agreement's lower bound is below its floor.
    """
    qualify = (
        f"qualify this judge first: judge qualify --rubric {rubric_name} "
        + " ".join(f"--model {m}" for m in models)
        + " --set NAME|FILE --min-agreement A --out DIR"
    )
    if sorted(models) != sorted(record.models):
        raise ConfigError(
            f"--require-qualified {source}: the judge {', '.join(sorted(models))} is not the "
            f"one qualified ({', '.join(record.models)})",
            hint=qualify,
        )
    if rubric_hash != record.rubric_hash:
        raise ConfigError(
            f"--require-qualified {source}: rubric {rubric_name!r} ({rubric_hash}) is "
            f"not the one qualified ({record.rubric!r}, {record.rubric_hash})",
            hint=f"use the qualified rubric unchanged, or {qualify}",
        )
    if below := record.below_floor():
        raise ConfigError(
            f"--require-qualified {source}: the judge's agreement is below the record's floor "
            f"{record.min_agreement:g} (lower bound) on {', '.join(below)}",
            hint="this judge did not qualify: choose another judge or rubric and qualify it",
        )
