"""An evaluation spec written as YAML (`judge plan ... --write-spec FILE`), atomically."""

from __future__ import annotations

from pathlib import Path

import yaml

from judgecli.inputs.spec import Spec, spec_hash
from judgecli.store import write_atomic
from judgecli.store.disk import storage_error


def write_spec(spec: Spec, path: Path) -> Path:
    """Write `spec` to `path` as YAML (the keys in the model's order, defaults included),
    headed by its hash as a comment; RunStorageError naming the file when it cannot be.
    """
    body = yaml.safe_dump(spec.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
    text = f"# judge evaluation spec ({spec_hash(spec)}); `judge run {path.name}` runs it\n{body}"
    try:
        write_atomic(path, text)
    except OSError as err:
        raise storage_error(path, err, then="write the spec to a folder you can write to") from None
    return path
