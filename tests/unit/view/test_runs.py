"""The runs list's line for a run the viewer does not browse (issue 34's align, qualify and
probe, and arena and drift): what it is and where to read it, not "cannot be read"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecli.view.runs import entry_of


@pytest.mark.parametrize("command", ["probe", "qualify", "align", "arena", "drift"])
@pytest.mark.parametrize("where", ["run.json", "summary.json"])
def test_a_run_of_a_report_only_command_says_so_and_where_to_read_it(
    tmp_path: Path, command: str, where: str
) -> None:
    # Before: "cannot be read: ... not a judge summary.json (command: 'probe' is not one of
    # score, pairwise, calibrate, refine)", as if the run were broken. Align writes no
    # run.json: its summary names the command.
    (tmp_path / "summary.json").write_text(json.dumps({"command": command}), encoding="utf-8")
    if where == "run.json":
        (tmp_path / "run.json").write_text(json.dumps({"command": command}), encoding="utf-8")
    entry = entry_of("r", tmp_path)
    assert entry.summary is None
    assert entry.problem is not None
    assert entry.problem.startswith(f"a judge {command} run: ")
    assert "report.html" in entry.problem
    assert "cannot be read" not in entry.problem


def test_a_summary_of_no_known_command_still_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({"command": "nope"}), encoding="utf-8")
    entry = entry_of("r", tmp_path)
    assert entry.problem is not None
    assert entry.problem.startswith("cannot be read: ")
