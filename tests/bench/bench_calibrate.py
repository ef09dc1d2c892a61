"""`python tests/bench/bench_calibrate.py`: CPU cost of `judge calibrate --results`.

Not a test: numbers vary by machine, so nothing here asserts. It prints what it measured
and the target from issue 13 §6 beside it: a 1,000-label calibrate (no judge calls) in
under 3 s CPU.

For 36 labels (datasets/labels.jsonl over a 24-case score run, two raters on some cases)
and 1,000 labels (500 cases, two raters each, 1-4 scale), it prints:

1. the statistics alone: `summarize_calibration` in this process, `time.process_time()`
   around it (scipy and numpy already imported by a warm-up call);
2. the whole command: `python -m judgecli calibrate --results ... --labels ...` as a fresh
   process, its CPU from `resource.getrusage(RUSAGE_CHILDREN)` (imports, reading, every
   bootstrap interval, report.md/report.html/summary.json written).
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from judgecli.inputs.labels import Label, LabelSpace, read_labels  # noqa: E402
from judgecli.result import CaseResult, CaseStatus, Judgement  # noqa: E402
from judgecli.rubric import RubricKind  # noqa: E402
from judgecli.summary.calibrate import summarize_calibration  # noqa: E402
from judgecli.verdict import Verdict  # noqa: E402

SPACE = LabelSpace(kind=RubricKind.POINTWISE, scale=(1.0, 4.0))
TARGET_CPU_S = 3.0


def synthetic(n_cases: int, raters: int, seed: int = 0) -> tuple[list[CaseResult], list[Label]]:
    """A scored run and its human labels: each rater within a point of the judge mostly."""
    rng = random.Random(seed)
    results, labels = [], []
    for i in range(n_cases):
        truth = rng.randint(1, 4)
        judged = min(4, max(1, truth + rng.choice((-1, 0, 0, 0, 1))))
        case_id = f"c-{i:05d}"
        verdict = Verdict(reasoning="r", score=float(judged))
        results.append(
            CaseResult(
                id=case_id,
                status=CaseStatus.OK,
                score=float(judged),
                judgements=[Judgement(model="m", verdict=verdict)],
                rubric_hash="h",
            )
        )
        for r in range(raters):
            said = min(4, max(1, truth + rng.choice((-1, 0, 0, 1))))
            labels.append(Label(id=case_id, value=float(said), annotator=f"r{r}", line=i + 1))
    return results, labels


def example_run(tmp: Path) -> tuple[list[CaseResult], list[Label]]:
    """datasets/labels.jsonl (36 labels) against a simulated score run of its cases."""
    results, _ = synthetic(24, 0, seed=1)
    renamed = [r.model_copy(update={"id": f"q-{i + 1:02d}"}) for i, r in enumerate(results)]
    return renamed, read_labels(REPO / "datasets" / "labels.jsonl", SPACE)


def cpu_of_statistics(results: list[CaseResult], labels: list[Label]) -> float:
    start = time.process_time()
    summarize_calibration(results, labels, SPACE, seed=0)
    return time.process_time() - start


def cpu_of_command(tmp: Path, name: str, results: list[CaseResult], labels: list[Label]) -> float:
    results_path = tmp / f"{name}-results.jsonl"
    results_path.write_text("".join(r.model_dump_json() + "\n" for r in results))
    labels_path = tmp / f"{name}-labels.jsonl"
    labels_path.write_text(
        "".join(
            json.dumps({"id": x.id, "label": x.value, "annotator": x.annotator}) + "\n"
            for x in labels
        )
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "judgecli",
            "calibrate",
            "--results",
            str(results_path),
            "--labels",
            str(labels_path),
            "--rubric",
            "helpfulness",
            "--out",
            str(tmp / name),
            "--quiet",
        ],
        check=True,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        sizes = {"36 labels": example_run(tmp), "1,000 labels": synthetic(500, 2)}
        summarize_calibration(*sizes["36 labels"], SPACE, seed=0)  # warm-up: imports
        print("judge calibrate --results (no judge calls), CPU seconds")
        for label, (results, labels) in sizes.items():
            stats = cpu_of_statistics(results, labels)
            whole = cpu_of_command(tmp, label.split()[0].replace(",", ""), results, labels)
            print(f"  {label:>12}: statistics {stats:6.2f} s   whole command {whole:6.2f} s")
        print(f"  target: 1,000 labels under {TARGET_CPU_S:g} s CPU (whole command)")


if __name__ == "__main__":
    main()
