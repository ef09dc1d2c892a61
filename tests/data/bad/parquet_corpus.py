"""Writes the Parquet files of the bad-input corpus (tests/integration/test_bad_input.py):
`python tests/data/bad/parquet_corpus.py` from the repository root. Binary files cannot be
written by hand as the corpus's text files are; this script says what each one holds.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
GOOD = [
    {"id": "a", "input": "What is 2+2?", "output": "4"},
    {"id": "b", "input": "Name a primary colour.", "output": "Red."},
    {"id": "c", "input": "Capital of France?", "output": "Paris."},
]
TEXT = pa.schema([("id", pa.string()), ("input", pa.string()), ("output", pa.string())])


def write(name: str, rows: list[dict], schema: pa.Schema | None = None) -> None:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), HERE / name)


def main() -> None:
    write("cases-parquet-null-output.parquet", [GOOD[0], GOOD[1] | {"output": None}, GOOD[2]])
    write(
        "cases-parquet-output-number.parquet",
        [{"id": r["id"], "input": r["input"], "output": i} for i, r in enumerate(GOOD)],
    )
    write("cases-parquet-duplicate-id.parquet", [GOOD[0], GOOD[1], GOOD[2] | {"id": "a"}])
    write("cases-parquet-no-rows.parquet", [], schema=TEXT)
    turns = [{"role": "bot", "content": "{}"}, {"role": "assistant", "content": "Hi"}]
    write(
        "cases-parquet-messages-bad-role.parquet",
        [{"id": "a", "messages": [{"role": "user", "content": "Hi"}, turns[1]]}]
        + [{"id": "b", "messages": turns}],
    )
    write(
        "new-parquet-missing-output.parquet", [{"id": r["id"], "input": r["input"]} for r in GOOD]
    )
    write(
        "labels-parquet-off-scale.parquet",
        [GOOD[0] | {"label": 3.0}, GOOD[1] | {"label": 7.0}],
    )
    (HERE / "cases-parquet-not-parquet.parquet").write_text(
        '{"id": "a", "input": "What is 2+2?", "output": "4"}\n', encoding="utf-8"
    )
    whole = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(GOOD * 50), whole)
    data = whole.getvalue().to_pybytes()
    (HERE / "cases-parquet-cut-short.parquet").write_bytes(data[: len(data) // 2])


if __name__ == "__main__":
    main()
