"""The judge servers users run (issue 13 §3), played by the simulator through real LiteLLM:
a server that refuses a response_format (llama.cpp's 500 on json_schema, a 400 on any),
and the replies real judges write (<think> blocks, reasoning_content, fenced JSON after
prose, prose, replies cut off at max_tokens). The format is stepped down once per run, and
a verdict is never guessed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecli.simulator.config import JudgeProfile
from judgecli.simulator.formats import PRESETS
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from judgecli.simulator.styles import ReplyStyle
from tests.integration.conftest import REPO

EXAMPLE = REPO / "datasets" / "example.jsonl"


def score(run_cli, server, *extra, model="openai/sim", out="run"):
    return run_cli(
        server,
        "score",
        str(EXAMPLE),
        "--rubric",
        "helpfulness",
        "--out",
        out,
        "--json",
        "--quiet",
        *extra,
        model=model,
    )


def formats_sent(server) -> list[str | None]:
    return [r.response_format for r in server.requests]


def run_info(run_dir="run") -> dict:
    return json.loads(Path(run_dir, "run.json").read_text())


def test_llama_cpps_500_on_json_schema_steps_down_once_per_run(run_cli):
    # Issue 13: llama.cpp answers json_schema with HTTP 500 (a request-validation error);
    # judge retried it five times per case, cut the message to "1 validation error:",
    # graded 0 of 24 and exited 0.
    with SimulatorServer(SimulatorConfig(formats=PRESETS["llama-cpp"])) as server:
        run = score(run_cli, server, "--limit", "8", "--concurrency", "4")
        sent = formats_sent(server)
        bodies = [r.body for r in server.requests]
    assert run.exit_code == 0, run.stderr
    assert run.summary["n_ok"] == 8
    assert sent.count("json_schema") == 1  # the probe alone; then every call steps down
    assert sent[1:] == ["json_object"] * 8
    assert all(b["response_format"].get("schema") for b in bodies[1:])  # with the schema
    assert run_info()["models"][0]["response_format_mode"] == "json_object+schema"
    [warning] = [w for w in run.summary["warnings"] if "response_format" in w]
    assert "refused response_format json_schema" in warning
    assert "Input should be 'text' or 'json_object'" in warning  # the server's words, whole
    assert "using json_object+schema from now on" in warning


def test_a_server_refusing_every_response_format_ends_at_prompt_only(run_cli):
    with SimulatorServer(SimulatorConfig(formats=PRESETS["none"])) as server:
        run = score(run_cli, server, "--limit", "5", "--concurrency", "1")
        sent = formats_sent(server)
    assert run.exit_code == 0, run.stderr
    assert sent[:4] == ["json_schema", "json_object", "json_object", None]
    assert sent[4:] == [None] * 4
    assert run_info()["models"][0]["response_format_mode"] == "prompt"
    assert sum("refused response_format" in w for w in run.summary["warnings"]) == 3


def test_a_resumed_run_starts_at_the_recorded_format(run_cli):
    with SimulatorServer(SimulatorConfig(formats=PRESETS["llama-cpp"])) as server:
        first = score(run_cli, server, "--limit", "6", "--concurrency", "1", "--no-cache")
        assert first.exit_code == 0, first.stderr
        lines = Path("run/results.jsonl").read_text().splitlines()
        Path("run/results.jsonl").write_text("\n".join(lines[:3]) + "\n")
        server.reset()
        resumed = run_cli(None, "resume", "run")
        sent = formats_sent(server)
    assert resumed.exit_code == 0, resumed.stderr
    assert sent == ["json_object"] * 3  # no second refusal: the mode came from run.json


STYLED = {style: JudgeProfile(style=style) for style in ReplyStyle}
PROFILES = SimulatorConfig(profiles={f"sim-{s.value}": p for s, p in STYLED.items()})


@pytest.fixture(scope="module")
def styled_server():
    with SimulatorServer(PROFILES) as server:
        yield server


def scores_in(run_dir: str) -> dict[str, float]:
    rows = [json.loads(x) for x in Path(run_dir, "results.jsonl").read_text().splitlines()]
    return {r["id"]: r["score"] for r in rows}


@pytest.mark.parametrize("style", ["think", "think-unopened", "reasoning-content", "fenced"])
def test_what_real_judges_write_around_the_json_gives_the_same_verdicts(run_cli, style):
    # The simulator's <think> block holds a draft verdict that disagrees with the real one:
    # a client that took the first JSON object would get other scores. Two servers that
    # differ only in how the verdict is worded must give the same scores.
    runs = {}
    for name, server_style in (("plain", ReplyStyle.JSON), ("styled", ReplyStyle(style))):
        with SimulatorServer(SimulatorConfig(style=server_style)) as server:
            runs[name] = score(run_cli, server, "--limit", "8", "--no-json-schema", out=name)
        assert runs[name].exit_code == 0, runs[name].stderr
    assert len(scores_in("plain")) == 8
    assert scores_in("styled") == scores_in("plain")
    if style == "reasoning-content":
        rows = Path("styled/results.jsonl").read_text().splitlines()
        assert len(rows) == 8
        assert all(json.loads(x)["judgements"][0]["reasoning"] for x in rows)


def test_prose_is_never_read_as_a_verdict(run_cli, styled_server):
    styled_server.reset()
    run = score(
        run_cli,
        styled_server,
        "--limit",
        "4",
        "--no-json-schema",
        "--max-retries",
        "1",
        model="openai/sim-prose",
    )
    assert run.exit_code == 3  # the judge could not grade: never 0, never a guessed score
    rows = [json.loads(x) for x in Path("run/results.jsonl").read_text().splitlines()]
    assert rows
    assert all(r["status"] == "failed" and "score" not in r for r in rows)
    assert all("no JSON object" in r["error"] for r in rows)
    assert all(r["judgements"][0]["raw"] for r in rows)  # the raw reply is kept


def test_a_reply_cut_off_at_max_tokens_is_re_asked_then_failed(run_cli, styled_server):
    styled_server.reset()
    run = score(
        run_cli,
        styled_server,
        "--limit",
        "3",
        "--max-retries",
        "1",
        "--max-failures",
        "100%",
        model="openai/sim-truncated",
    )
    assert run.exit_code == 0, run.stderr
    rows = [json.loads(x) for x in Path("run/results.jsonl").read_text().splitlines()]
    assert [r["status"] for r in rows] == ["failed"] * 3, rows
    assert all("cut off at --max-tokens 600 (finish_reason: length)" in r["error"] for r in rows)
    assert len(styled_server.requests) == 6  # each asked twice (one re-ask), never parsed


def test_no_json_schema_is_recorded_as_prompt_only(run_cli, judge_server):
    run = score(run_cli, judge_server, "--limit", "2", "--no-json-schema")
    assert run.exit_code == 0, run.stderr
    assert run_info()["models"][0]["response_format_mode"] == "prompt"
    assert formats_sent(judge_server) == [None, None]
