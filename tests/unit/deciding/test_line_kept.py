"""A command line given --spec against that spec: each departure named, a line that is the
spec's kept (issue 35)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgecli.deciding.line_kept import check_line, line_departures
from judgecli.errors import InputError
from judgecli.inputs.spec import read_spec, spec_argv
from judgecli.settings.spec_line import spec_of
from judgecli.store.spec import write_spec

LINE = ["data.jsonl", "--rubric", "helpfulness", "--model", "openai/sim", "--temperature", "0"]
LINE += ["--min-mean", "3", "--limit", "5"]


@pytest.fixture
def spec_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    Path("data.jsonl").write_text('{"id": "a", "input": "q", "output": "a"}\n', encoding="utf-8")
    Path("plans").mkdir()
    return write_spec(spec_of("score", LINE), Path("plans/judge.yaml"))


def test_the_line_a_spec_was_written_from_keeps_to_it(spec_file: Path) -> None:
    spec = read_spec(spec_file)
    assert line_departures(spec, "score", LINE) == []
    # The spec's own command line too (its data path from the spec file's folder).
    assert line_departures(spec, "score", spec_argv(spec)) == []
    # A library name and the rubric's file are one rubric; 0 and 0.0 one temperature.
    assert line_departures(spec, "score", [*LINE, "--temperature", "0.0"]) == []


def test_each_departure_of_a_line_is_named(spec_file: Path) -> None:
    moved = [*LINE, "--temperature", "0.7", "--min-mean", "2.5", "--fdr"]
    moved = [word for word in moved if word not in ("--limit", "5")]
    found = line_departures(read_spec(spec_file), "score", moved)
    assert [d.key for d in found] == [
        "judges[0].settings.temperature",
        "gate.floor",
        "stopping.n",
        "categories.correction",
    ]
    with pytest.raises(InputError) as raised:
        check_line(spec_file, "score", moved)
    assert "gate.floor (spec 3.0, command line 2.5)" in raised.value.message
    assert "stopping.n (spec 5, command line none)" in raised.value.message


def test_pairwise_options_at_their_defaults_need_not_be_written_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A recorded command line leaves --flip and --flip-policy tie out (their defaults).
    monkeypatch.chdir(tmp_path)
    for name in ("old.jsonl", "new.jsonl"):
        Path(name).write_text('{"id": "a", "input": "q", "output": "a"}\n', encoding="utf-8")
    line = ["old.jsonl", "new.jsonl", "--model", "openai/sim", "--min-win-rate", "0.5"]
    spec = spec_of("pairwise", [*line, "--flip", "--flip-policy", "tie"])
    assert spec.judges[0].settings == {"flip": True, "flip-policy": "tie"}
    assert line_departures(spec, "pairwise", line) == []
    [moved] = line_departures(spec, "pairwise", [*line, "--flip-policy", "drop"])
    assert (moved.key, moved.spec, moved.run) == ("judges[0].settings.flip-policy", "tie", "drop")
