"""What the `make bench` scripts share: the environment of a judge process, a case file,
the `judge score` command line against the simulator, and the CPU a process has used."""

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
TICKS = os.sysconf("SC_CLK_TCK")


def machine_load() -> str:
    """The cores and the load average, to print before any figure."""
    load = os.getloadavg()
    return (
        f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} "
        f"{load[2]:.2f} (1, 5, 15 min)"
    )


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a process has used; 0 once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def machine_busy() -> float:
    """Busy CPU seconds of every core since boot (all but idle and iowait)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return (sum(values) - values[3] - values[4]) / TICKS


def children_of(pid: int) -> list[int]:
    """The processes `pid` started that are still running."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
        return [int(w) for task in tasks for w in (task / "children").read_text().split()]
    except OSError:
        return []


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
