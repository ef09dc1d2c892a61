"""`judge resume` rebuilds the original command line, pointed at the run it continues."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgecli.cli.resume import resumed_argv

RUN = Path("/runs/x")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        pytest.param(
            ["judge", "score", "d.jsonl", "--out", "runs/x"],
            ["score", "d.jsonl", "--resume", "/runs/x"],
            id="out-becomes-resume",
        ),
        pytest.param(
            ["judge", "score", "d.jsonl", "--out=runs/x", "--quiet"],
            ["score", "d.jsonl", "--quiet", "--resume", "/runs/x"],
            id="out-equals",
        ),
        # --force started that run over; kept, it would contradict --resume.
        pytest.param(
            ["judge", "score", "d.jsonl", "--force", "--out", "runs/x"],
            ["score", "d.jsonl", "--resume", "/runs/x"],
            id="force-is-dropped",
        ),
        pytest.param(
            ["judge", "score", "d.jsonl", "--max-cost", "1", "--sample", "10%"],
            ["score", "d.jsonl", "--sample", "10%", "--resume", "/runs/x", "--max-cost", "1"],
            id="the-cap-and-the-sample-are-kept",
        ),
    ],
)
def test_the_original_arguments_continue_the_run(argv, expected):
    assert resumed_argv(argv, RUN, retry_failed=False, max_cost=None) == expected


def test_retry_failed_and_a_new_cap_are_added():
    argv = ["judge", "pairwise", "a", "b", "--retry-failed", "--max-cost", "1"]
    assert resumed_argv(argv, RUN, retry_failed=True, max_cost=5.0) == [
        "pairwise",
        "a",
        "b",
        "--resume",
        "/runs/x",
        "--retry-failed",
        "--max-cost",
        "5.0",
    ]
