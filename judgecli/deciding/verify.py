"""`judge verify RUN --spec SPEC`: did a finished run keep to the evaluation spec it was
planned by? Each way it did not is a `Departure`, named by the spec's key it departs from.

Pure: the spec comes in as its JSON form (`Spec.model_dump(mode="json")`, read by
inputs/spec.py), the run as what it recorded (`RunRecord`: run.json, summary.json, and the
sha256 of each file it judged, hashed by the caller). Checked, in the spec's order:

- `datasets`: every dataset the spec names was judged by the run, with the spec's sha256;
- `rubric.hash`: the rubric the run recorded is the spec's;
- `judges`: the run's judges are the spec's models, in order, and each setting the spec
  pins for a judge (one that changes verdicts: settings/flag_spec.py Role.VERDICTS) is the
  run's; a pinned setting the run does not record is `unverified`, not a departure;
- `gate`: the run gated on the spec's metric, floor and `on`;
- `stopping`: a fixed-n run judged its first n cases (--limit n); a sequential run stopped
  where its rule decided and judged no case beyond those in flight then (no look beyond);
- `spec.hash`: a run that records a spec (`judge run SPEC`) was made from this one;
- `categories.correction` and `labels`: the run corrected its categories as declared
  (Benjamini-Hochberg with --fdr, Holm without) and was given labels only if declared.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgecli.errors import InputError
from judgecli.inputs.spec import Spec, file_sha256, spec_hash
from judgecli.store import SUMMARY, read_run_info

FDR = "fdr"
HOLM = "holm"
FIXED = "fixed"
SEQUENTIAL = "sequential"
POINT = "point"
"""The spec's values (inputs/spec.py Correction and StopRule), as its JSON form spells them."""


@dataclass(frozen=True)
class Departure:
    """One way the run did not keep to its spec."""

    key: str
    """The spec's key it departs from: `rubric.hash`, `judges[0].temperature`, `stopping.n`."""
    spec: Any
    run: Any
    message: str

    def as_json(self) -> dict[str, Any]:
        """Its entry in `departures`."""
        return {"key": self.key, "spec": self.spec, "run": self.run, "message": self.message}


@dataclass(frozen=True)
class RunRecord:
    """What a finished run recorded about how it was made."""

    info: Mapping[str, Any]
    """Its run.json."""
    summary: Mapping[str, Any]
    """Its summary.json."""
    data_hashes: Mapping[Path, str] = field(default_factory=dict)
    """sha256 (hex) of each file its command line names, by resolved path."""
    cwd: Path = Path(".")
    """Where its command line ran (relative dataset paths resolve against it)."""
    hashed_now: frozenset[Path] = frozenset()
    """The data files hashed at verify time, as the run records no sha256 of them (a run
    made before run.json's `datasets`): their bytes may have changed since the run."""


@dataclass(frozen=True)
class Verification:
    """The departures of one run from one spec, and the pinned settings it could not check."""

    departures: list[Departure]
    unverified: list[str]

    @property
    def kept(self) -> bool:
        """The run kept to the spec."""
        return not self.departures

    def as_json(self) -> dict[str, Any]:
        """Its stable JSON: `departures` (a list, empty when kept), `kept`, `unverified`."""
        return {
            "kept": self.kept,
            "departures": [d.as_json() for d in self.departures],
            "unverified": self.unverified,
        }


def verify(spec: Mapping[str, Any], run: RunRecord, *, spec_dir: Path) -> Verification:
    """Every departure of `run` from `spec` (relative dataset paths of the spec resolve
    against `spec_dir`, the spec file's folder).
    """
    departures: list[Departure] = []
    unverified: list[str] = []
    departures += command_departures(spec, run)
    data, hashed_now = data_departures(spec, run, spec_dir=spec_dir)
    departures += data
    unverified += hashed_now
    departures += rubric_departures(spec, run)
    judged, unknown = judge_departures(spec, run)
    departures += judged
    unverified += unknown
    departures += gate_departures(spec, run)
    departures += stopping_departures(spec, run)
    departures += correction_departures(spec, run)
    return Verification(departures, unverified)


def command_departures(spec: Mapping[str, Any], run: RunRecord) -> list[Departure]:
    """The run was made by the spec's command."""
    planned, made = spec.get("command"), run.info.get("command")
    if planned is None or planned == made:
        return []
    return [Departure("command", planned, made, f"the spec runs `{planned}`, the run `{made}`")]


def data_departures(
    spec: Mapping[str, Any], run: RunRecord, *, spec_dir: Path
) -> tuple[list[Departure], list[str]]:
    """Each dataset of the spec was judged, and the bytes the run judged (run.json's
    `datasets`) are the spec's; and the datasets hashed now, the run recording no sha256
    of them (unverified: their bytes when the run judged them are not known).
    """
    found: list[Departure] = []
    unknown: list[str] = []
    for index, dataset in enumerate(spec.get("datasets") or []):
        path = Path(str(dataset["path"]))
        wanted = (path if path.is_absolute() else spec_dir / path).resolve()
        digest = run.data_hashes.get(wanted)
        key = f"datasets[{index}]"
        now = wanted in run.hashed_now
        if now:
            unknown.append(f"{key}.sha256")
        if digest is None:
            found.append(Departure(f"{key}.path", str(path), None, f"the run did not judge {path}"))
        elif bare(digest) != bare(str(dataset["sha256"])):
            said = (
                f"{path} (hashed now: the run records no sha256) is not the data the spec pinned"
                if now
                else f"the run judged other bytes of {path} than the spec pinned"
            )
            found.append(Departure(f"{key}.sha256", dataset["sha256"], digest, said))
    return found, unknown


def bare(digest: str) -> str:
    """A sha256 without its `sha256:` prefix, lowercased."""
    return digest.removeprefix("sha256:").lower()


def rubric_departures(spec: Mapping[str, Any], run: RunRecord) -> list[Departure]:
    """The run's rubric hash is the spec's."""
    planned = (spec.get("rubric") or {}).get("hash")
    made = (run.info.get("rubric") or {}).get("hash") or run.summary.get("rubric_hash")
    if planned is None or planned == made:
        return []
    return [Departure("rubric.hash", planned, made, "the rubric is not the spec's")]


def judge_departures(spec: Mapping[str, Any], run: RunRecord) -> tuple[list[Departure], list[str]]:
    """The run's judges are the spec's, each with the settings the spec pins (by their flag's
    long name: `max-tokens`, recorded as the run's `max_tokens`); and the pinned settings the
    run does not record (unverified).
    """
    judges: Sequence[Mapping[str, Any]] = spec.get("judges") or []
    if not judges:
        return [], []
    models: list[Mapping[str, Any]] = list(run.info.get("models") or [])
    planned = [str(judge.get("model")) for judge in judges]
    made = [str(m.get("name")) for m in models]
    if planned != made:
        return [Departure("judges", planned, made, "the judges are not the spec's")], []
    config: Mapping[str, Any] = run.info.get("config") or {}
    found: list[Departure] = []
    unknown: list[str] = []
    for index, (judge, model) in enumerate(zip(judges, models, strict=True)):
        for name, value in (judge.get("settings") or {}).items():
            field_name = name.replace("-", "_")
            key = f"judges[{index}].settings.{name}"
            recorded = model.get(field_name, config.get(field_name))
            if not checkable(value, recorded, known=field_name in model or field_name in config):
                unknown.append(key)
                continue
            if not same(value, recorded):
                found.append(
                    Departure(key, value, recorded, f"{planned[index]}: {name} is not the spec's")
                )
    return found, unknown


def checkable(value: Any, recorded: Any, *, known: bool) -> bool:
    """Whether a pinned setting can be checked against what the run recorded: not when
    the run records no such field, nor when it records a switch as something else
    (--json-schema keeps the schema, not the switch) or a value as a structure
    (--field NAME=COLUMN as the whole field map).
    """
    if not known:
        return False
    if isinstance(value, bool) and not isinstance(recorded, bool):
        return False
    return recorded is None or isinstance(recorded, bool | int | float | str)


def same(planned: Any, recorded: Any) -> bool:
    """A pinned value and the run's are the same setting (1 and 1.0 are)."""
    numbers = (int, float)
    if isinstance(planned, numbers) and isinstance(recorded, numbers):
        return float(planned) == float(recorded)
    return bool(planned == recorded)


def flag_given(argv: Sequence[str], name: str) -> str | bool | None:
    """What a command line gives `name`: True for a bare switch, its value (`--x V`,
    `--x=V`; the last counts), None when not given.
    """
    given: str | bool | None = None
    for index, arg in enumerate(argv):
        if arg == name:
            following = argv[index + 1] if index + 1 < len(argv) else None
            given = following if following and not following.startswith("-") else True
        elif arg.startswith(f"{name}="):
            given = arg.split("=", 1)[1]
    return given


def gate_departures(spec: Mapping[str, Any], run: RunRecord) -> list[Departure]:
    """The run gated on the spec's threshold flag, at its floor, on what the spec says."""
    gate: Mapping[str, Any] | None = spec.get("gate")
    if gate is None:
        return []
    argv = list(run.info.get("argv") or [])
    metric = str(gate["metric"])
    given = flag_given(argv, f"--{metric}")
    floor: float | None = None
    with contextlib.suppress(ValueError):
        floor = float(given) if isinstance(given, str) else None
    found: list[Departure] = []
    if floor is None or floor != float(gate["floor"]):
        found.append(
            Departure(
                "gate.floor",
                gate["floor"],
                given if isinstance(given, str) else None,
                f"the run did not gate on --{metric} {gate['floor']}",
            )
        )
    on = flag_given(argv, "--on")
    made_on = on if isinstance(on, str) else POINT
    if str(gate.get("on") or POINT) != made_on:
        found.append(
            Departure("gate.on", gate.get("on"), made_on, "the gate compares another number")
        )
    return found


def stopping_departures(spec: Mapping[str, Any], run: RunRecord) -> list[Departure]:
    """A fixed-n spec: the run judged its first n cases (--limit n; all when n is absent) and
    did not stop early. A sequential spec: the run followed the sequence and judged no case
    beyond its stop but those in flight then.
    """
    stopping: Mapping[str, Any] = spec.get("stopping") or {}
    rule = stopping.get("rule") or FIXED
    config: Mapping[str, Any] = run.info.get("config") or {}
    argv = list(run.info.get("argv") or [])
    sequence: Mapping[str, Any] | None = run.summary.get("sequential")
    ran = SEQUENTIAL if sequence is not None or flag_given(argv, "--sequential") else FIXED
    if rule != ran:
        return [Departure("stopping.rule", rule, ran, f"the spec stops by the {rule} rule")]
    if rule == FIXED:
        n, limit = stopping.get("n"), config.get("limit")
        if n != limit:
            return [
                Departure(
                    "stopping.n",
                    n,
                    limit,
                    f"the spec plans {'all' if n is None else n} cases, the run judged "
                    f"{'all' if limit is None else f'the first {limit}'}",
                )
            ]
        return []
    if sequence is None:
        return []
    alpha = spec.get("alpha", 0.05)
    if not same(alpha, sequence.get("alpha", 0.05)):
        said = "the sequential gate ran at another error rate (--alpha)"
        return [Departure("alpha", alpha, sequence.get("alpha"), said)]
    decided_after = sequence.get("decided_after")
    judged = int(sequence.get("judged") or 0)
    # Cases in flight at the decision finish and are kept (deciding/sequential.py): a run
    # that judged more than one concurrency window beyond its stop looked beyond it.
    window = int(config.get("concurrency") or 1)
    if decided_after is not None and judged > int(decided_after) + window:
        return [
            Departure(
                "stopping.rule",
                f"stop after {decided_after} cases",
                f"judged {judged}",
                "the run judged cases beyond the sequential rule's stop",
            )
        ]
    return []


def correction_departures(spec: Mapping[str, Any], run: RunRecord) -> list[Departure]:
    """The categories were corrected as declared (Holm; Benjamini-Hochberg with --fdr), and
    the declared labels, with their sha256, were given (and none undeclared).
    """
    argv = list(run.info.get("argv") or [])
    found: list[Departure] = []
    correction = (spec.get("categories") or {}).get("correction") or HOLM
    made = FDR if flag_given(argv, "--fdr") is True else HOLM
    if correction != made:
        found.append(
            Departure(
                "categories.correction",
                correction,
                made,
                "the categories were not corrected as declared",
            )
        )
    labels: Mapping[str, Any] | None = spec.get("labels")
    given = flag_given(argv, "--labels")
    if labels is None and isinstance(given, str):
        found.append(Departure("labels", None, given, "labels were given though none declared"))
    elif labels is not None and not isinstance(given, str):
        found.append(
            Departure("labels", labels["path"], None, "the declared labels were not given")
        )
    elif labels is not None and isinstance(given, str):
        digest = run.data_hashes.get((run.cwd / given).resolve())
        if digest is None or bare(digest) != bare(str(labels["sha256"])):
            found.append(
                Departure(
                    "labels.sha256",
                    labels["sha256"],
                    digest,
                    f"{given} is not the labels file the spec pinned",
                )
            )
    return found


def verify_spec(spec: Spec, run: RunRecord) -> Verification:
    """Every departure of `run` from `spec`; a run that records a spec of another hash
    (`spec.hash` in its run.json) departs from this one by that too.
    """
    checked = verify(spec.model_dump(mode="json"), run, spec_dir=spec.resolve("."))
    recorded = (run.info.get("spec") or {}).get("hash")
    planned = spec_hash(spec)
    if recorded is None or recorded == planned:
        return checked
    moved = Departure("spec.hash", planned, recorded, "the run was made from another spec")
    return Verification([moved, *checked.departures], checked.unverified)


def read_record(run_dir: Path) -> RunRecord:
    """What the finished run in `run_dir` recorded, and the sha256 of every file its command
    line names (its data and labels); InputError (exit 2) for a directory that holds no
    finished run.
    """
    info = read_run_info(run_dir, hint="pass the --out directory of a finished judge run")
    path = run_dir / SUMMARY
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise InputError(
            f"{path}: cannot read the run's summary ({err.__class__.__name__})",
            hint="verify a finished run (judge resume RUN_DIR finishes an interrupted one)",
        ) from None
    if not isinstance(summary, dict):
        raise InputError(f"{path}: not a judge summary", hint="pass a judge run directory")
    cwd = Path(str(info.get("cwd") or "."))
    recorded = info.get("datasets")
    # The bytes the run judged, as run.json pinned them when it started (issue 35).
    judged = {
        (cwd / str(pin["path"])).resolve(): str(pin["sha256"])
        for pin in (recorded if isinstance(recorded, list) else [])
        if isinstance(pin, dict) and "path" in pin and "sha256" in pin
    }
    hashes: dict[Path, str] = {}
    for arg in list(info.get("argv") or [])[2:]:
        candidate = (cwd / str(arg).split("=", 1)[-1]).resolve()
        with contextlib.suppress(OSError):
            if candidate not in judged and candidate.is_file():
                hashes[candidate] = file_sha256(candidate)
    if not isinstance(recorded, list):  # a run made before run.json recorded its data
        return RunRecord(info, summary, hashes, cwd, hashed_now=frozenset(hashes))
    return RunRecord(info=info, summary=summary, data_hashes=hashes | judged, cwd=cwd)
