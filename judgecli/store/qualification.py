"""The qualification record of a `judge qualify` run written into its run directory
(`inputs.qualification` reads it back for --require-qualified).
"""

from __future__ import annotations

from pathlib import Path

from judgecli.inputs.qualification import RECORD_FILE, QualificationRecord
from judgecli.store import RunStore


def write_record(run_dir: Path, record: QualificationRecord) -> Path:
    """Write qualification.json (whole, through a temporary file) and return its path."""
    return RunStore(run_dir).write_json(RECORD_FILE, record.model_dump(mode="json"))
