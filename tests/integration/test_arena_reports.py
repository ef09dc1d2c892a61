"""An arena run directory has what results.md promises of every run: a JUnit file and a
searchable table of every comparison in report.html.

Issue 29 (review 2026-11-27, finding 19): an arena run had only report.html, report.md,
results.jsonl, run.json and summary.json, and its page had no cases section.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from tests.integration.test_arena_cli import CASES, arena, results, write_systems


def junit_cases(path: Path) -> dict[str, list[ET.Element]]:
    """The JUnit file's testcases by suite name."""
    root = ET.parse(path).getroot()
    return {suite.get("name", ""): list(suite.iter("testcase")) for suite in root}


def outcome(case: ET.Element) -> str:
    """passed, failure, error or skipped."""
    found = [c.tag for c in case if c.tag in {"failure", "error", "skipped"}]
    return found[0] if found else "passed"


def test_an_arena_run_writes_a_junit_file_that_fails_the_comparisons_the_gated_system_lost(
    run_cli, judge_server
):
    files = write_systems(("evasive", "fair", "thorough"))
    run = arena(run_cli, judge_server, files, "--for", "fair", "--beats", "thorough")
    assert run.exit_code == 1, run.stderr
    suites = junit_cases(Path("run/results.junit.xml"))
    assert set(suites) == {"judge.arena.pairwise", "judge.arena.pairwise.gate"}

    (gate,) = suites["judge.arena.pairwise.gate"]
    assert (gate.get("name"), outcome(gate)) == ("gate", "failure")
    assert "gate failed: fair beats thorough" in gate.find("failure").get("message")

    cases = {c.get("name"): c for c in suites["judge.arena.pairwise"]}
    lines = {line["id"]: line for line in results()}
    assert set(cases) == set(lines)
    assert len(cases) == 3 * CASES
    for key, line in lines.items():
        case = cases[key]
        old, new = line["systems"]["old"], line["systems"]["new"]
        assert case.get("classname") == f"judge.arena.pairwise.{old}-vs-{new}"
        if "fair" not in (old, new):
            # Two systems not under test: information, not a test.
            assert outcome(case) == "passed"
            assert case.find("system-out").text.startswith(f"{old} vs {new}: ")
        elif line.get("winner_system") not in (None, "fair") and line["winner"] != "tie":
            assert outcome(case) == "failure"
            assert case.find("failure").get("message") == (
                f"fair loses to {line['winner_system']} on this case"
            )
        else:
            assert outcome(case) == "passed"
    lost = [c for c in cases.values() if outcome(c) == "failure"]
    assert lost  # the simulator prefers the thorough answers
    assert len(lost) == sum(
        "fair" in x["systems"].values() and x.get("winner_system") not in (None, "fair")
        for x in lines.values()
    )
    assert int(ET.parse("run/results.junit.xml").getroot().get("failures")) == len(lost) + 1


def test_an_arena_without_a_gate_has_no_gate_testcase_and_fails_no_comparison(
    run_cli, judge_server
):
    run = arena(run_cli, judge_server, write_systems(("evasive", "thorough")))
    assert run.exit_code == 0, run.stderr
    suites = junit_cases(Path("run/results.junit.xml"))
    assert list(suites) == ["judge.arena.pairwise"]
    assert {outcome(c) for c in suites["judge.arena.pairwise"]} == {"passed"}


def test_an_arena_page_lists_every_comparison_with_its_systems_and_a_winner_filter(
    run_cli, judge_server
):
    files = write_systems(("evasive", "fair", "thorough"))
    run = arena(run_cli, judge_server, files)
    assert run.exit_code == 0, run.stderr
    page = Path("run/report.html").read_text()
    assert f"<h2>Cases ({3 * CASES})</h2>" in page
    assert page.count("<tbody data-status=") == 3 * CASES
    assert "<th>systems</th>" in page
    assert "<td>evasive vs thorough</td>" in page
    # The winner is named by system, and the filter offers each system.
    assert 'data-winner="thorough"' in page
    for name in ("evasive", "fair", "thorough"):
        assert f'<option value="{name}">{name} won</option>' in page
    assert 'id="case-search"' in page
    assert "<h5>thorough&#x27;s output</h5>" in page
