"""`python tests/bench/bench_inputs.py`: memory of reading a 200,000-row Parquet dataset
(issue 31: a dataset is streamed, never loaded whole).

It writes 200,000 cases (about 1 KB of answer each: some 200 MB of text) as a Parquet file
in one row group (as pyarrow and pandas write by default), as JSONL, and both again in
another order (a NEW for pairwise), then measures, each in a fresh process, the peak
resident memory the process reports of itself (VmHWM in /proc/self/status: Linux only):

1. the imports alone (judgecli's readers and pyarrow): the floor;
2. `judge score`'s reading: `scan_dataset` (every row checked), then `iter_cases` (every
   case streamed again), of the JSONL file and of the Parquet file;
3. `judge pairwise`'s reading: `scan_pairs`, then `iter_pairs`, of the JSONL pair and of
   the Parquet pair (whose rows are read back from the sources' temporary copies).

A reading holds the ids and positions of the cases whatever the format (the JSONL figure);
what a Parquet reading holds beyond that is the reader's own. Timings vary by machine and
only inform. The script exits 1 when a Parquet reading holds more than LIMIT_MB beyond the
JSONL reading of the same cases: a reader that loaded the file whole would hold its 200 MB
of text, and several times that as Python objects.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

ROWS = 200_000
LIMIT_MB = 100.0
WORDS = ["the", "a", "judge", "answer", "case", "model", "rubric", "score", "pass", "fail"]

READERS = """
import sys
from judgecli.inputs.dataset import iter_cases, scan_dataset
from judgecli.inputs.pairs import iter_pairs, scan_pairs
import pyarrow.parquet
"""
SCORE = """
scan = scan_dataset(sys.argv[{}], requires=["input", "output"])
n = sum(1 for _ in iter_cases(scan, requires=["input", "output"]))
assert n == scan.total == {rows}
"""
PAIRS = """
scan = scan_pairs(sys.argv[{}], sys.argv[{}], requires=["input", "output"])
n = sum(1 for _ in iter_pairs(scan, requires=["input", "output"]))
assert n == scan.total == {rows}
"""
TASKS = {
    "imports alone": "",
    "score: JSONL": SCORE.format(1, rows=ROWS),
    "score: Parquet": SCORE.format(2, rows=ROWS),
    "pairwise: JSONL, NEW shuffled": PAIRS.format(1, 3, rows=ROWS),
    "pairwise: Parquet, NEW shuffled": PAIRS.format(2, 4, rows=ROWS),
}
"""What each process does (its files: sys.argv[1:] = JSONL, Parquet, NEW JSONL, NEW
Parquet)."""


def answer(rng: random.Random, i: int) -> str:
    """About 1 KB of words, different for every case (so the file does not compress away)."""
    return f"Answer {i}: " + " ".join(rng.choice(WORDS) for _ in range(190))


def write_files(folder: Path) -> tuple[list[Path], int]:
    """The cases as JSONL and Parquet, then both in shuffled order (NEW); the text's bytes.
    The Parquet files are one row group each, as the defaults write them: the reader must
    not read a row group whole.
    """
    rng = random.Random(0)
    rows = [
        {"id": f"c{i}", "input": f"Question {i}?", "output": answer(rng, i)} for i in range(ROWS)
    ]
    shuffled = rows[:]
    random.Random(1).shuffle(shuffled)
    paths = []
    for name, ordered in (("cases", rows), ("new", shuffled)):
        jsonl, parquet = folder / f"{name}.jsonl", folder / f"{name}.parquet"
        with jsonl.open("w", encoding="utf-8") as lines:
            lines.writelines(json.dumps(r) + "\n" for r in ordered)
        pq.write_table(pa.Table.from_pylist(ordered), parquet, row_group_size=ROWS)
        assert pq.ParquetFile(parquet).metadata.num_row_groups == 1
        paths += [jsonl, parquet]
    jsonl, parquet, new_jsonl, new_parquet = paths
    return [jsonl, parquet, new_jsonl, new_parquet], sum(
        len(r["output"]) + len(r["input"]) for r in rows
    )


# VmHWM, the process's own high-water mark: ru_maxrss would carry over the peak of the
# process that started it (this one, which held every row to write the files).
PEAK = """
from pathlib import Path
status = Path("/proc/self/status").read_text().splitlines()
print(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
"""


def measure(task: str, files: list[Path]) -> tuple[float, float]:
    """(peak resident MB, seconds) of `task` in a fresh process."""
    code = READERS + TASKS[task] + PEAK
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code, *map(str, files)],
        check=True,
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    return int(done.stdout.split()[-1]) / 1024, seconds


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="judge-bench-inputs-") as tmp:
        files, text = write_files(Path(tmp))
        print(
            f"{ROWS:,} cases: {text / 1e6:.0f} MB of text; JSONL "
            f"{files[0].stat().st_size / 1e6:.0f} MB, Parquet {files[1].stat().st_size / 1e6:.0f} "
            "MB on disk (one row group)"
        )
        peaks: dict[str, float] = {}
        for task in TASKS:
            peaks[task], seconds = measure(task, files)
            above = peaks[task] - peaks["imports alone"]
            print(f"{task:<32} peak {peaks[task]:5.0f} MB (+{above:3.0f} MB) in {seconds:5.1f} s")
    failed = False
    for reading in ("score", "pairwise"):
        jsonl = next(v for k, v in peaks.items() if k.startswith(f"{reading}: JSONL"))
        parquet = next(v for k, v in peaks.items() if k.startswith(f"{reading}: Parquet"))
        ok = parquet - jsonl <= LIMIT_MB
        failed |= not ok
        verdict = "ok" if ok else "OVER the limit"
        print(f"{reading}: Parquet holds {parquet - jsonl:+.0f} MB beyond JSONL ({verdict})")
    print(f"limit: {LIMIT_MB:.0f} MB beyond the JSONL reading of the same cases")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
