"""An evaluation spec written as YAML (`judge plan ... --write-spec FILE`), atomically."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from judgecli.inputs.spec import Spec, spec_hash
from judgecli.store import write_atomic
from judgecli.store.disk import storage_error


def rebased(spec: Spec, folder: Path) -> Spec:
    """`spec` with its relative file paths (data, labels, a rubric file) made relative to
    `folder`, where the spec file goes: a spec reads them from its own folder (issue 35).
    Absolute paths and library rubric names are kept.
    """

    def moved(name: str) -> str:
        if Path(name).is_absolute():
            return name
        return os.path.relpath((spec.resolve(name)).resolve(), folder.resolve())

    data = spec.model_dump(mode="json")
    for dataset in data["datasets"]:
        dataset["path"] = moved(dataset["path"])
    if data.get("labels"):
        data["labels"]["path"] = moved(data["labels"]["path"])
    if spec.resolve(spec.rubric.ref).is_file():
        data["rubric"]["ref"] = moved(spec.rubric.ref)
    return Spec.model_validate(data).with_base(folder)


def write_spec(spec: Spec, path: Path) -> Path:
    """Write `spec` to `path` as YAML (the keys in the model's order, defaults included; its
    relative paths from the spec file's folder), headed by its hash as a comment;
    RunStorageError naming the file when it cannot be.
    """
    spec = rebased(spec, path.parent)
    body = yaml.safe_dump(spec.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
    text = f"# judge evaluation spec ({spec_hash(spec)}); `judge run {path.name}` runs it\n{body}"
    try:
        write_atomic(path, text)
    except OSError as err:
        raise storage_error(path, err, then="write the spec to a folder you can write to") from None
    return path
