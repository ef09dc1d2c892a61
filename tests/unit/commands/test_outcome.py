"""A finished run's exit code (issue 31: one function for the command line's exit and the
API's `Run.exit_code`): 3 incomplete or undecided, 1 gate failed, else 0."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from judgecli.commands.outcome import exit_code
from judgecli.errors import ExitCode


def gate(*, passed: bool, decided: bool = True) -> SimpleNamespace:
    return SimpleNamespace(passed=passed, decided=decided)


@pytest.mark.parametrize(
    ("incomplete", "gated", "expected"),
    [
        pytest.param(None, None, ExitCode.OK, id="no-gate"),
        pytest.param(None, gate(passed=True), ExitCode.OK, id="passed"),
        pytest.param(None, gate(passed=False), ExitCode.GATE_FAILED, id="failed"),
        pytest.param(None, gate(passed=False, decided=False), ExitCode.INCOMPLETE, id="undecided"),
        pytest.param("3 of 4 cases failed", None, ExitCode.INCOMPLETE, id="incomplete"),
        # An outage is never a pass, and never a regression: incomplete wins over any gate.
        pytest.param("outage", gate(passed=True), ExitCode.INCOMPLETE, id="incomplete-passed"),
        pytest.param("outage", gate(passed=False), ExitCode.INCOMPLETE, id="incomplete-failed"),
    ],
)
def test_a_finished_runs_exit_code(incomplete, gated, expected):
    assert exit_code(SimpleNamespace(incomplete=incomplete, gate=gated)) is expected
