"""The label plans of `judge review plan`, written: one JSON object per planned case, the
file written whole (a temporary sibling renamed) and never over an existing one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judgecli.errors import InputError
from judgecli.store import write_atomic


def plan_text(lines: Sequence[dict[str, Any]]) -> str:
    """The plan as JSON Lines."""
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def write_plan(path: Path, lines: Sequence[dict[str, Any]]) -> Path:
    """Write a new plan file; an existing file is never replaced (it may be another plan
    that raters are working through).
    """
    if path.exists():
        raise InputError(
            f"{path} already exists (it may be a plan in use)",
            hint="choose another --out, or delete the old plan",
        )
    if not path.parent.exists():
        raise InputError(f"{path.parent}: no such directory", hint="create it, or change --out")
    write_atomic(path, plan_text(lines))
    return path
