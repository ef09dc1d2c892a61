"""`judge score --shard auto` as a real Slurm job array, joined by `judge merge`, gives the
summary one machine gives. Needs a Slurm cluster with an idle node: `make slurm`
(tests/slurm/cluster.sh) sets up a single-node one on this machine, as root with apt-get;
anywhere else the tests skip, saying why.

The judge is the simulator on 127.0.0.1 in this process; the array's tasks are processes
slurmd starts on this same machine, with this test's environment (`--export=ALL`), each
with a reply cache of its own (as on separate machines). Everything a task reads or writes
is under the test's own tmp_path, and its job name is unique, so a test run never meets
another's files or jobs; each `sbatch --wait` takes some seconds (Slurm polls).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.conftest import write_numbered_cases

JUDGE = Path(sys.executable).absolute().with_name("judge")
TASKS = 3
CASES = 30
JOB_TIMEOUT_S = 600
# Keys whose values depend on when or how fast a run went, not on what it judged.
TIME_KEY = re.compile(r"latency|elapsed|duration|started|finished|timestamp|_at$|^time$")


def slurm_unavailable() -> str | None:
    """Why no Slurm job can run here, or None when sinfo shows an idle node."""
    if shutil.which("sbatch") is None or shutil.which("sinfo") is None:
        return "sbatch/sinfo not found: no Slurm here (`make slurm` sets up a single-node cluster)"
    try:
        shown = subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%N %t"],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        return "sinfo did not answer within 60 s (is slurmctld running? `make slurm`)"
    states = shown.stdout.split()[1::2]
    if "idle" not in states:
        said = (shown.stdout + shown.stderr).strip() or "no nodes"
        return f"sinfo shows no idle Slurm node ({said}); `make slurm` starts one"
    return None


@pytest.fixture(scope="module")
def slurm() -> None:
    """Skip the module's tests, with the reason, when there is no usable cluster."""
    reason = slurm_unavailable()
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture(scope="module")
def simulator() -> Any:
    """A simulator of this module's own: the tasks' requests never mix with other tests'."""
    with SimulatorServer(SimulatorConfig()) as server:
        yield server


def run_array(tmp: Path, body: str, name: str) -> None:
    """Run `body` (bash) as a TASKS-task Slurm array with `sbatch --wait`, from `tmp`, with
    this process's environment; fail with the tasks' output when one of them fails.
    """
    script = tmp / f"{name}.sh"
    script.write_text(f"#!/bin/bash\nset -eu\n{body}\n", encoding="utf-8")
    script.chmod(0o755)
    logs = tmp / "slurm-logs"
    logs.mkdir(exist_ok=True)
    argv = [
        "sbatch",
        f"--array=0-{TASKS - 1}",
        "--wait",
        "--export=ALL",
        f"--chdir={tmp}",
        f"--job-name={name}-{os.getpid()}-{tmp.name}",
        f"--output={logs}/{name}-%A_%a.out",
        "--ntasks=1",
        "--cpus-per-task=1",
        "--time=10",
        str(script),
    ]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = process.communicate(timeout=JOB_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        cancel(out)
        pytest.fail(f"the Slurm array did not finish in {JOB_TIMEOUT_S} s: {out} {err}")
    if process.returncode != 0:
        task_logs = "\n".join(
            f"--- {log.name}\n{log.read_text(errors='replace')}" for log in sorted(logs.iterdir())
        )
        pytest.fail(f"sbatch exited {process.returncode}: {out}{err}\n{task_logs}")


def cancel(sbatch_stdout: str) -> None:
    """scancel the job `sbatch` said it submitted (one this test started)."""
    match = re.search(r"Submitted batch job (\d+)", sbatch_stdout)
    if match:
        subprocess.run(["scancel", match.group(1)], check=False, timeout=60)


def judge(*args: str | Path, cache: Path, cwd: Path) -> None:
    """The installed `judge` in a process of its own; fail with its stderr unless it exits 0."""
    done = subprocess.run(
        [str(JUDGE), *map(str, args)],
        cwd=cwd,
        env=os.environ | {"JUDGE_CACHE_DIR": str(cache), "OPENAI_API_KEY": "dummy"},
        capture_output=True,
        text=True,
        check=False,
        timeout=JOB_TIMEOUT_S,
    )
    assert done.returncode == 0, f"judge {' '.join(map(str, args))}: {done.stderr}"


def comparable(value: Any, *places: Path) -> Any:
    """A summary without what differs between two runs of the same cases only because they
    ran at other times or in other directories: keys naming times and durations are dropped
    and every `places` path (a run or temporary directory) in a string becomes `<DIR>`.
    """
    if isinstance(value, dict):
        return {k: comparable(v, *places) for k, v in value.items() if not TIME_KEY.search(k)}
    if isinstance(value, list):
        return [comparable(v, *places) for v in value]
    if isinstance(value, str):
        for place in sorted(map(str, places), key=len, reverse=True):
            value = value.replace(place, "<DIR>")
    return value


def test_comparable_drops_times_and_paths_only(tmp_path):
    summary = {
        "n_cases": 3,
        "usage": {"calls": 3, "latency_p50_s": 0.2, "latency_p95_s": 0.3},
        "started": "2026-01-01T00:00:00+00:00",
        "warnings": [f"{tmp_path}/shard-1: a note"],
    }
    assert comparable(summary, tmp_path) == {
        "n_cases": 3,
        "usage": {"calls": 3},
        "warnings": ["<DIR>/shard-1: a note"],
    }


def test_an_array_task_sees_its_place_in_the_array(slurm, tmp_path):
    # The plumbing alone: a task runs the installed judge, and gets the variables
    # `--shard auto` reads.
    run_array(
        tmp_path,
        f"{shlex.quote(str(JUDGE))} --version > version-$SLURM_ARRAY_TASK_ID\n"
        "echo $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_MAX "
        "$SLURM_ARRAY_TASK_COUNT > env-$SLURM_ARRAY_TASK_ID",
        "judge-plumbing",
    )
    for task in range(TASKS):
        assert (tmp_path / f"version-{task}").read_text().startswith("judge ")
        assert (tmp_path / f"env-{task}").read_text().split() == [
            str(task),
            "0",
            str(TASKS - 1),
            str(TASKS),
        ]


def test_a_slurm_array_of_shards_merges_into_the_single_machine_summary(slurm, simulator, tmp_path):
    data = tmp_path / "data.jsonl"
    ids = write_numbered_cases(
        data,
        CASES,
        lambda i: {
            "id": f"case-{i:02d}",
            "input": f"What is {i} plus {i}?",
            "output": f"{i} plus {i} is {2 * i}." if i % 3 else "I am not sure.",
            "category": "doubt" if i % 3 == 0 else "arithmetic",
        },
    )
    judging = [
        "--rubric",
        "helpfulness",
        "--model",
        "openai/sim",
        "--api-base",
        f"{simulator.url}/v1",
        "--quiet",
    ]
    words = shlex.join([str(JUDGE), "score", str(data), *judging, "--shard", "auto", "--out"])
    run_array(
        tmp_path,
        f'export JUDGE_CACHE_DIR={shlex.quote(str(tmp_path))}/cache-"$SLURM_ARRAY_TASK_ID"\n'
        f"export OPENAI_API_KEY=dummy\n"
        f'{words} {shlex.quote(str(tmp_path))}/shard-"$SLURM_ARRAY_TASK_ID"',
        "judge-shards",
    )
    shards = [tmp_path / f"shard-{task}" for task in range(TASKS)]
    judged = [
        [json.loads(line)["id"] for line in (shard / "results.jsonl").read_text().splitlines()]
        for shard in shards
    ]
    # Every case judged once, by exactly one task.
    assert sorted(i for shard in judged for i in shard) == sorted(ids)

    judge(
        "merge",
        *shards,
        "--out",
        tmp_path / "merged",
        "--quiet",
        cache=tmp_path / "c-merge",
        cwd=tmp_path,
    )
    judge(
        "score",
        data,
        *judging,
        "--out",
        tmp_path / "single",
        cache=tmp_path / "cache-single",
        cwd=tmp_path,
    )
    merged = json.loads((tmp_path / "merged" / "summary.json").read_text())
    single = json.loads((tmp_path / "single" / "summary.json").read_text())
    assert merged["n_cases"] == CASES
    assert comparable(merged, tmp_path) == comparable(single, tmp_path)
