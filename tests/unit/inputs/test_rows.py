"""Row sources: a dataset's reader picked by its name, the optional extras a reader needs,
and the copy that finds a Parquet or hub row again (issue 31)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from judgecli.errors import ConfigError
from judgecli.inputs.copies import RowCopy
from judgecli.inputs.rows import Format, JsonlSource, format_of, require
from judgecli.inputs.sources import open_rows
from judgecli.inputs.tables import CsvSource, ParquetSource


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        pytest.param("cases.jsonl", Format.JSONL, id="jsonl"),
        pytest.param("cases.json", Format.JSONL, id="json-read-as-jsonl"),
        pytest.param("cases", Format.JSONL, id="no-suffix"),
        pytest.param("cases.CSV", Format.CSV, id="csv-any-case"),
        pytest.param("cases.tsv", Format.TSV, id="tsv"),
        pytest.param("cases.parquet", Format.PARQUET, id="parquet"),
        pytest.param("cases.pq", Format.PARQUET, id="pq"),
        pytest.param("hf://acme/evals:test", Format.HUB, id="hub"),
        pytest.param(Path("hf://acme/evals"), Format.HUB, id="hub-as-typer-s-path"),
    ],
)
def test_the_format_is_told_by_the_name(name, kind):
    assert format_of(name) is kind


def test_the_reader_is_picked_by_the_name(tmp_path):
    assert isinstance(open_rows(tmp_path / "a.jsonl"), JsonlSource)
    assert isinstance(open_rows(tmp_path / "a.csv"), CsvSource)
    assert open_rows(tmp_path / "a.tsv").delimiter == "\t"  # type: ignore[attr-defined]
    assert isinstance(open_rows(tmp_path / "a.parquet"), ParquetSource)
    source = open_rows(tmp_path / "a.csv")
    assert open_rows(source) is source


def test_a_missing_extra_is_an_input_error_naming_what_to_install(monkeypatch):
    # Issue 31: pyarrow missing (a None in sys.modules makes its import fail).
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ConfigError) as caught:
        open_rows("data.parquet")
    assert caught.value.message == "reading data.parquet needs pyarrow"
    assert caught.value.hint == "pip install 'judgecli[parquet]'"


def test_a_folder_named_like_the_extra_is_no_extra(tmp_path, monkeypatch):
    # A project's own datasets/ folder imports as an empty namespace package.
    (tmp_path / "judge_no_such_extra").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match="needs the thing") as caught:
        require("judge_no_such_extra", package="the thing", extra="hf", reading="hf://a/b")
    assert caught.value.hint == "pip install 'judgecli[hf]'"


def test_a_jsonl_line_is_read_back_at_its_offset(write):
    source = open_rows(write("d.jsonl", '{"id": "a"}\n\n{"id": "b", "x": [1]}\n'))
    rows = list(source.rows())
    assert [(r.number, r.fields) for r in rows] == [(1, {"id": "a"}), (3, {"id": "b", "x": [1]})]
    assert source.row_at(rows[1].number, rows[1].at) == {"id": "b", "x": [1]}


def test_a_copy_gives_back_every_row_by_offset_and_in_order():
    copy = RowCopy("d.parquet")
    rows = [(i + 1, {"id": f"c{i}", "text": "é" * i, "n": None}) for i in range(50)]
    offsets = [copy.add(number, fields) for number, fields in rows]
    copy.finish()
    assert [copy.read(at) for at in reversed(offsets)] == list(reversed(rows))
    assert [(n, at, f) for n, at, f in copy.rows()] == [
        (n, at, f) for (n, f), at in zip(rows, offsets, strict=True)
    ]
    copy.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="a --workers run forks")
def test_a_copy_is_read_by_forked_workers_without_moving_each_other(tmp_path):
    # --workers forks after the scan: the processes share the copy's file, and pread moves
    # no shared offset, so each reads its own rows whatever the others do.
    copy = RowCopy("d.parquet")
    offsets = [copy.add(i, {"id": f"c{i}", "pad": "x" * 5000}) for i in range(200)]
    copy.finish()
    children = []
    for worker in range(3):
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child's exit code says how it went)
            ok = all(copy.read(offsets[i])[0] == i for i in range(worker, 200, 3) for _ in range(5))
            os._exit(0 if ok else 1)
        children.append(pid)
    assert all(copy.read(at)[0] == i for i, at in enumerate(offsets))
    assert [os.waitpid(pid, 0)[1] for pid in children] == [0, 0, 0]
