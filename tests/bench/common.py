"""What the `make bench` scripts share: the environment of a judge process, a case file,
and the `judge score` command line against the simulator."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # benches import litellm too
os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # users' runs read compiled bytecode

JUDGE = [sys.executable, "-m", "judgecli"]
ENV = {**os.environ, "OPENAI_API_KEY": "sk-bench", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def write_cases(path: Path, n: int) -> None:
    """`n` small cases, ids c0, c1, ..."""
    with path.open("w") as f:
        for i in range(n):
            case = {
                "id": f"c{i}",
                "input": f"Question {i}: how do I sort a list?",
                "output": f"Answer {i}: use sorted(xs) or xs.sort().",
            }
            f.write(json.dumps(case) + "\n")


def score_command(cases: Path, api: str, out: Path, *extra: str) -> list[str]:
    """`judge score` of `cases` with the helpfulness rubric against the simulator at `api`."""
    return [
        *JUDGE,
        "score",
        str(cases),
        "--rubric",
        "helpfulness",
        "--model",
        "openai/sim",
        "--api-base",
        api,
        "--quiet",
        "--out",
        str(out),
        *extra,
    ]
