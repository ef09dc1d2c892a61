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
    assert resumed_argv(argv, RUN, retry_failed=False) == expected


def test_retry_failed_and_a_new_cap_are_added():
    argv = ["judge", "pairwise", "a", "b", "--retry-failed", "--max-cost", "1"]
    assert resumed_argv(argv, RUN, retry_failed=True, changes={"max_cost": 5.0}) == [
        "pairwise",
        "a",
        "b",
        "--resume",
        "/runs/x",
        "--retry-failed",
        "--max-cost",
        "5.0",
    ]


# Issue 29 (review 2026-11-27, finding 22): `judge resume --retry-failed` could not change
# --max-tokens or --max-retries, so a run they made fail failed the same way again.
@pytest.mark.parametrize(
    ("argv", "changes", "tail"),
    [
        pytest.param(
            ["judge", "score", "d.jsonl", "--max-tokens", "8", "--out", "runs/x"],
            {"max_tokens": 600},
            ["--max-tokens", "600"],
            id="a-new-token-limit-replaces-the-recorded-one",
        ),
        pytest.param(
            ["judge", "score", "d.jsonl", "--max-tokens=8", "--concurrency", "4"],
            {"max_retries": 8},
            ["--max-tokens", "8", "--max-retries", "8", "--concurrency", "4"],
            id="the-recorded-settings-are-kept-beside-a-new-one",
        ),
        pytest.param(
            ["judge", "score", "d.jsonl", "-c", "4", "--timeout", "30"],
            {"timeout": 90.0, "concurrency": 2, "rpm": 60.0, "tpm": None},
            ["--timeout", "90.0", "--concurrency", "2", "--rpm", "60.0"],
            id="every-spelling-is-replaced",
        ),
    ],
)
def test_settings_of_how_calls_are_made_can_change_on_resume(argv, changes, tail):
    args = resumed_argv(argv, RUN, retry_failed=True, changes=changes)
    assert args == ["score", "d.jsonl", "--resume", "/runs/x", "--retry-failed", *tail]


@pytest.mark.parametrize(
    ("errors", "advice"),
    [
        pytest.param(
            [
                "invalid verdict: the reply was cut off at --max-tokens 8 (finish_reason: "
                "length); be brief, or raise --max-tokens (after 5 replies)"
            ],
            ("replies were cut off at --max-tokens 8; ", " --max-tokens 1024"),
            id="cut-off-replies-raise-the-token-limit",
        ),
        pytest.param(
            ["the reply was cut off at --max-tokens 2048 (finish_reason: length)"],
            ("replies were cut off at --max-tokens 2048; ", " --max-tokens 4096"),
            id="a-large-limit-is-doubled",
        ),
        pytest.param(
            ["Timeout: Request timed out. (gave up after 5 attempts)"],
            ("calls timed out after 120 s; ", " --timeout 240"),
            id="timeouts-raise-the-timeout",
        ),
        pytest.param(
            ["HTTP 500 InternalServerError: boom (gave up after 5 attempts)"],
            ("cases failed after 5 tries; ", " --max-retries 8"),
            id="retries-used-up-raise-the-retries",
        ),
        pytest.param(["HTTP 400 BadRequestError: no"], ("", ""), id="no-setting-to-raise"),
    ],
)
def test_the_retry_hint_raises_the_setting_the_failures_point_at(tmp_path, errors, advice):
    from judgecli.cli.retry_advice import retry_hint

    run = tmp_path / "run"
    why, flag = advice
    assert retry_hint(run, errors) == f"{why}continue with: judge resume {run} --retry-failed{flag}"
