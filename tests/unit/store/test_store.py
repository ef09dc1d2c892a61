from __future__ import annotations

import json

import pytest

from judgecli.errors import InputError
from judgecli.result import CaseResult, CaseStatus, Judgement
from judgecli.store import RESULTS, RunStore, default_run_dir, read_results


def result(i: str) -> CaseResult:
    return CaseResult(id=i, status=CaseStatus.OK, score=3.0, rubric_hash="h")


def test_results_are_appended_and_readable_line_by_line(tmp_path):
    store = RunStore.create(tmp_path / "run")
    store.append_result(result("a"))
    # Flushed per line: readable before close, as after a crash.
    assert json.loads((tmp_path / "run" / RESULTS).read_text())["id"] == "a"
    store.append_result(result("b"))
    store.close()
    assert [r.id for r in read_results(tmp_path / "run" / RESULTS)] == ["a", "b"]


def test_a_torn_last_line_is_skipped(tmp_path):
    path = tmp_path / RESULTS
    path.write_text(result("a").model_dump_json() + "\n" + '{"id": "b", "sta')
    assert [r.id for r in read_results(path)] == ["a"]


def test_a_corrupt_middle_line_is_an_error(tmp_path):
    path = tmp_path / RESULTS
    path.write_text('{"id": "b", "sta\n' + result("a").model_dump_json() + "\n")
    with pytest.raises(InputError, match="not a judge results line"):
        list(read_results(path))


def test_a_run_directory_with_results_is_never_overwritten(tmp_path):
    store = RunStore.create(tmp_path / "run")
    store.append_result(result("a"))
    store.close()
    with pytest.raises(InputError, match="already holds a run"):
        RunStore.create(tmp_path / "run")


def test_json_files_are_written_whole(tmp_path):
    store = RunStore.create(tmp_path / "run")
    store.write_json("summary.json", {"n": 1})
    assert json.loads((tmp_path / "run" / "summary.json").read_text()) == {"n": 1}
    assert not list((tmp_path / "run").glob(".*.tmp"))


def test_default_run_dir_is_sortable_utc_command_rubric():
    from datetime import UTC, datetime

    path = default_run_dir("score", "helpfulness", now=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert str(path) == "runs/20260102T030405Z-score-helpfulness"


def test_a_second_run_in_the_same_second_gets_a_directory_of_its_own(tmp_path, monkeypatch):
    # `judge score a.jsonl; judge score b.jsonl` in one second: the second exited 2, "already
    # holds a run", because both defaulted to one name.
    from datetime import UTC, datetime

    monkeypatch.chdir(tmp_path)
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    first = default_run_dir("score", "helpfulness", now=now)
    first.mkdir(parents=True)
    second = default_run_dir("score", "helpfulness", now=now)
    assert str(second) == "runs/20260102T030405Z-score-helpfulness-2"
    second.mkdir()
    assert str(default_run_dir("score", "helpfulness", now=now)).endswith("-helpfulness-3")


def judged(i: str, *, cached: bool) -> CaseResult:
    call = Judgement(model="m", order=None, attempts=0 if cached else 1, cached=cached)
    return result(i).model_copy(update={"judgements": [call]})


def test_a_paid_case_is_flushed_at_once_and_replayed_ones_with_it(tmp_path):
    store = RunStore.create(tmp_path / "run")
    path = tmp_path / "run" / RESULTS
    store.append_result(judged("replayed", cached=True))
    # Nothing was paid for it: it may wait in the buffer (a crash costs nothing).
    assert path.read_text() == ""
    store.append_result(judged("paid", cached=False))
    assert [r.id for r in read_results(path)] == ["replayed", "paid"]
    store.append_result(judged("again", cached=True))
    store.close()
    assert [r.id for r in read_results(path)] == ["replayed", "paid", "again"]
