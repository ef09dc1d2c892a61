"""`judge simulate`: its flags for styles, formats and the rate limit, its help at 80
columns, and the startup banner (which says its latency: review finding 21)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from judgecli.cli.main import app
from judgecli.simulator.server import SimulatorConfig

NEW_FLAGS = (
    "--style",
    "--formats",
    "--rate-limit-window",
    "--rate-limit-prefill",
    "--no-rate-limit-headers",
    "--rate-limit-retry-after",
    "--rate-limit-rate",
    "--jitter",
)


def test_help_at_80_columns_shows_every_flag_name_whole():
    run = CliRunner().invoke(app, ["simulate", "--help"], env={"COLUMNS": "80"})

    assert run.exit_code == 0
    # Regression: "--rate-limit-retry-af…" was cut by the options table.
    assert "…" not in run.stdout
    names = set(re.findall(r"--[a-z][a-z-]*[a-z]", run.stdout))
    assert set(NEW_FLAGS) <= names
    assert max(len(line) for line in run.stdout.splitlines()) <= 80


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--style", "xml"], "--style: style needs one of json, think", id="style"),
        pytest.param(["--formats", "xml"], "--formats: unknown response format 'xml'", id="fmt"),
        pytest.param(["--rate-limit-prefill"], "--rate-limit-prefill needs --rpm N", id="prefill"),
        pytest.param(
            ["--rpm", "30", "--rate-limit-window", "0"],
            "--rate-limit-window must be more than 0",
            id="window",
        ),
        pytest.param(
            ["--profile", "r1:style=xml"], "--profile 'r1:style=xml': style needs", id="profile"
        ),
    ],
)
def test_bad_simulator_settings_are_one_error_line_with_exit_2(args, message):
    run = CliRunner().invoke(app, ["simulate", *args], catch_exceptions=False)

    assert run.exit_code == 2, run.stderr
    assert f"error: {message}" in run.stderr
    assert "hint:" in run.stderr
    assert "Traceback" not in run.stderr


def test_the_description_says_latency_limit_faults_style_and_formats():
    config = SimulatorConfig(
        latency_ms=25,
        latency_jitter_ms=5,
        rpm=30,
        rate_limit_window_s=6,
        rate_limit_prefill=True,
        rate_limit_headers=False,
        error_rate=0.05,
        style="think",
        formats="llama-cpp",
        profiles={"r1": {"style": "reasoning-content", "noise": 0.1}},
    )

    assert config.describe() == [
        "latency 25 ms ± 5 ms; rate limit 30 requests per 6 s (window full at start), "
        "x-ratelimit-* headers off; faults: error 0.05",
        "verdicts worded as think; response_format accepted: llama-cpp",
        "requests for model 'r1' get noise 0.1, style reasoning-content",
    ]
    assert SimulatorConfig().describe()[0] == "latency 0 ms; no rate limit; no faults"


def test_the_startup_banner_says_the_latency():
    # The command serves until stopped, so it runs in a subprocess we stop once it is ready.
    argv = [
        sys.executable,
        "-m",
        "judgecli",
        "simulate",
        "--port",
        "0",
        "--latency-ms",
        "25",
        "--rpm",
        "30",
        "--rate-limit-window",
        "6",
        "--profile",
        "r1:style=think",
    ]
    env = {**os.environ, "COLUMNS": "200"}
    with subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env) as process:
        try:
            banner = []
            assert process.stderr is not None
            for line in process.stderr:
                banner.append(line)
                if line.startswith("try:"):
                    break
        finally:
            process.terminate()
            process.wait(timeout=30)

    text = "".join(banner)
    assert "judge simulator (fake verdicts, not a model) on http://127.0.0.1:" in text
    assert "latency 25 ms; rate limit 30 requests per 6 s" in text
    assert "requests for model 'r1' get style think" in text
