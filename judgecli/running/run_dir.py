"""The run directory: open (or reopen) a run and record how it was made (run.json: the
command line, the judges, the response formats they ended with, what their calls warned
of). `judging` grades a run's items into it; `job` puts both together into the spine every
judging command runs on, and writes its reports.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgecli import __version__
from judgecli.errors import InputError
from judgecli.inputs.spec import SpecRef, data_pins, file_sha256
from judgecli.judge.formats import FormatMode
from judgecli.rubric import Rubric
from judgecli.settings.config import RunConfig
from judgecli.store import (
    RUN_INFO,
    PreviousRun,
    RunStore,
)
from judgecli.usage import CallSpend


def package_version(name: str) -> str | None:
    """Installed version of a package, or None."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def run_info(config: RunConfig, rubric: Rubric, argv: list[str]) -> dict[str, Any]:
    """run.json: enough to reproduce the run. API keys are never part of it."""
    settings = config.model_dump(mode="json", exclude={"models", "screen", "spec"})
    return {
        "command": config.command,
        "argv": argv,
        "cwd": str(Path.cwd()),
        "started": now_iso(),
        "models": [m.model_dump(mode="json", exclude={"api_key"}) for m in config.models],
        "screen": config.screen.model_dump(mode="json", exclude={"api_key"})
        if config.screen
        else None,
        "rubric": {"name": rubric.name, "version": rubric.version, "hash": rubric.content_hash},
        "config": settings,
        "spec": config.spec.model_dump(mode="json", exclude_none=True) if config.spec else None,
        "versions": {
            "judgecli": __version__,
            "litellm": package_version("litellm"),
            "python": platform.python_version(),
        },
    }


def open_run(
    config: RunConfig, rubric: Rubric, argv: list[str]
) -> tuple[RunStore, PreviousRun, dict[str, Any]]:
    """Create the run directory and write run.json, or reopen it with --resume (after
    checking it was made with the same rubric and judges), holding its lock from then on.
    Returns the store, what the run already holds, and the run.json just written.
    """
    if not config.resume:
        earlier = recorded_spec(config.out)  # before --force deletes the old run.json
        store = RunStore.create(config.out, replace=config.force)
        info = run_info(config, rubric, argv) | {
            "datasets": data_pins(argv),  # the bytes judged, for judge verify (issue 35)
            "spec": spec_entry(config.spec, earlier),
        }
        with store.opening():  # nothing called yet: a refused write is exit 2
            store.write_json(RUN_INFO, info)
        return store, PreviousRun(info={}, done=set(), spent_usd=0.0), info
    store, previous = RunStore.reopen(config.out, retry_failed=config.retry_failed)
    with store.opening():
        made_with = judged_by(previous.info)
        this_run = judged_by(run_info(config, rubric, argv))
        if made_with != this_run:
            raise InputError(
                f"{config.out} was made with {describe_judging(made_with)}; this command has "
                f"{describe_judging(this_run)}",
                hint="resume with the same rubric and --model/--screen/--escalate flags "
                "(judge resume RUN_DIR does)",
            )
        if not config.conclude_only:  # a merge judges nothing (and checks its own data)
            check_same_data(config.out, previous.info)
        info = previous.info | {"resumed": [*previous.info.get("resumed", []), now_iso()]}
        if config.spec is not None:
            info["spec"] = spec_entry(config.spec, previous.info.get("spec"))
        store.write_json(RUN_INFO, info)
    return store, previous, info


def check_same_data(run_dir: Path, info: dict[str, Any]) -> None:
    """A resume judges the bytes its run started on: InputError (exit 2, nothing called)
    naming a data file whose sha256 is no longer the one run.json's `datasets` recorded, or
    the results would mix two versions of the cases (issue 35). A file that is gone, or a
    run made before the hashes were recorded, is not checked here (the reader says what is
    missing; `judge verify` says what it could not check).
    """
    started_in = Path(info.get("cwd") or ".")
    for pin in info.get("datasets") or []:
        path = started_in / str(pin["path"])
        with contextlib.suppress(OSError):
            if path.is_file() and file_sha256(path) != pin["sha256"]:
                raise InputError(
                    f"{pin['path']} changed since {run_dir} started (its sha256 is not the "
                    "one run.json records): the resumed cases would be judged on other data",
                    hint="resume with the data the run started on, or start a new run "
                    "(--out NEW_DIR, or --force to replace this one)",
                )


def recorded_spec(run_dir: Path) -> Any:
    """The `spec` the run.json in `run_dir` records (None when there is none to read)."""
    try:
        return json.loads((run_dir / RUN_INFO).read_text(encoding="utf-8")).get("spec")
    except (OSError, ValueError, AttributeError):
        return None


def spec_entry(spec: SpecRef | None, earlier: Any) -> dict[str, Any] | None:
    """run.json's `spec`: this run's spec, and the hash of the one the run directory held
    before when it differs (a spec is versioned: the report names the previous one).
    """
    if spec is None:
        return None
    before = earlier if isinstance(earlier, dict) else {}
    old = before.get("hash")
    previous = before.get("previous") if old == spec.hash else old
    versioned = spec.model_copy(update={"previous": previous})
    return versioned.model_dump(mode="json", exclude_none=True)


def judged_by(info: dict[str, Any]) -> dict[str, Any]:
    """What decides a run's verdicts, from its run.json: the rubric, the judges and the
    cascade. A resumed run must keep all of them, or its cases would not be comparable.
    """
    return {
        "rubric": info.get("rubric", {}).get("hash"),
        "judges": [m.get("name") for m in info.get("models", [])],
        "screen": (info.get("screen") or {}).get("name"),
        "escalate": info.get("config", {}).get("escalate"),
    }


def describe_judging(judging: dict[str, Any]) -> str:
    """`rubric H and judges [...]`, plus the cascade when there is one."""
    text = f"rubric {judging['rubric']} and judges {judging['judges']}"
    if judging["screen"]:
        text += f", screen {judging['screen']} escalating on {judging['escalate']!r}"
    return text


def now_iso() -> str:
    """The current UTC time, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


FORMAT_KEY = "response_format_mode"
"""run.json, per model: the response format its server accepted (formats.FormatMode)."""


WARNINGS_KEY = "judging_warnings"
"""run.json: what the calls warned of so far (format steps, unpriced models)."""

UNFINISHED_KEY = "unfinished"
"""run.json: the calls of cases that did not finish in the session that sent them (a
`usage.CallSpend`, summed over the run's sessions): summary.json's `usage.unfinished`."""


def recorded_unfinished(info: dict[str, Any]) -> CallSpend:
    """The calls of unfinished cases a run's run.json records (none in a run made before
    they were counted).
    """
    return CallSpend.model_validate(info.get(UNFINISHED_KEY) or {})


def recorded_formats(info: dict[str, Any]) -> dict[str, FormatMode]:
    """The response formats a run's judges ended with, from its run.json (a resume starts
    there instead of asking each server again).
    """
    modes = {}
    for model in info.get("models", []) + ([info["screen"]] if info.get("screen") else []):
        mode = model.get(FORMAT_KEY)
        if mode in {m.value for m in FormatMode}:
            modes[model["name"]] = FormatMode(mode)
    return modes


def record_formats(info: dict[str, Any], modes: dict[str, str]) -> dict[str, Any]:
    """run.json with each judge's response format noted."""

    def noted(model: dict[str, Any]) -> dict[str, Any]:
        mode = modes.get(model.get("name", ""))
        return model | {FORMAT_KEY: mode} if mode else model

    screen = info.get("screen")
    return info | {
        "models": [noted(m) for m in info.get("models", [])],
        "screen": noted(screen) if screen else screen,
    }
