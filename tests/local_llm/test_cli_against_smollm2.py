"""`judge` end to end against a real LLM: SmolLM2-135M-Instruct behind llama-cpp-python's
OpenAI-compatible server (issue 13 §3), each command as a user runs it — a subprocess of
`python -m judgecli`.

A 135M model writes many invalid verdicts, and which ones changes with the machine, so
nothing here asserts what the model says. What is asserted holds whatever it says:

* the process never crashes (no traceback; the exit code is 0, 1 or 3, never 2);
* the exit code is the contract's, computed from results.jsonl: 3 when more than the
  allowed share of cases (5% by default) got no verdict, else 1 when a gate failed and 0
  when it passed (or there was none) — never 0 or 1 for a run that could not be judged;
* every failed case says so (`status: "failed"`, an `error`), and keeps the reply's raw
  text in its judgements whenever the server answered;
* every verdict lies on the rubric's scale: nothing is guessed;
* run.json records the response-format mode the run used, which cannot be `json_schema`:
  this server refuses it (HTTP 500, "Input should be 'text' or 'json_object'").
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from judgecli.inputs.rubric_file import load_rubric
from judgecli.inputs.rubric_library import find_rubric
from judgecli.rubric import Rubric
from tests.local_llm.server import MODEL_ALIAS, LlamaServer

pytestmark = pytest.mark.local_llm

REPO = Path(__file__).resolve().parents[2]
DATASETS = REPO / "datasets"
MODEL = f"openai/{MODEL_ALIAS}"
DEFAULT_ALLOWED_FAILURES = 0.05
# A call that got no reply says why: an HTTP status, a timeout or a connection problem.
NO_REPLY = re.compile(r"HTTP [45]\d\d|time[d ]?out|connect|refused", re.IGNORECASE)
# Guards a hung process, not a performance claim: SmolLM2 answers in seconds.
PROCESS_TIMEOUT_S = 1800


@dataclass
class JudgeRun:
    args: list[str]
    exit_code: int
    stdout: str
    stderr: str
    out: Path

    def results(self) -> list[dict[str, Any]]:
        path = self.out / "results.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def summary(self) -> dict[str, Any]:
        return dict(json.loads((self.out / "summary.json").read_text(encoding="utf-8")))

    def run_info(self) -> dict[str, Any]:
        return dict(json.loads((self.out / "run.json").read_text(encoding="utf-8")))

    def explain(self) -> str:
        return f"judge {' '.join(self.args)}\nexit {self.exit_code}\nstderr:\n{self.stderr[-3000:]}"


def judge(
    server: LlamaServer,
    tmp_path: Path,
    command: str,
    *args: str,
    max_tokens: int | None = 256,
    concurrency: int = 2,
) -> JudgeRun:
    """`python -m judgecli COMMAND ARGS` against the server, with a fresh run directory
    (`max_tokens=None`: the rubric's own, as a user who gives no --max-tokens gets).
    """
    out = tmp_path / f"run-{command}"
    tokens = ["--max-tokens", str(max_tokens)] if max_tokens is not None else []
    argv = [
        command,
        *args,
        "--model",
        MODEL,
        "--api-base",
        server.api_base,
        *tokens,
        "--concurrency",
        str(concurrency),
        "--timeout",
        "300",
        "--no-cache",
        "--out",
        str(out),
        "--json",
        "--quiet",
    ]
    # LiteLLM's openai/ route goes through the OpenAI client, which insists on a key.
    env = {**os.environ, "OPENAI_API_KEY": "sk-local-dummy"}
    done = subprocess.run(
        [sys.executable, "-m", "judgecli", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=PROCESS_TIMEOUT_S,
        check=False,
    )
    return JudgeRun(argv, done.returncode, done.stdout, done.stderr, out)


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def subset(source: Path, ids: Collection[str], target: Path) -> Path:
    """The lines of `source` whose id is in `ids`, written to `target`."""
    return write_jsonl(target, [row for row in read_jsonl(source) if row["id"] in ids])


def rubric(name: str) -> Rubric:
    return load_rubric(find_rubric(name))


# The contract ---------------------------------------------------------------------------


def assert_no_crash(run: JudgeRun, server: LlamaServer) -> None:
    """Neither judge nor the server crashed (llama.cpp dies on some grammars, e.g. a
    `maxLength` of 1200 on a string: SIGSEGV after "failed to parse grammar").
    """
    assert "Traceback" not in run.stderr, run.explain()
    assert run.exit_code in {0, 1, 3}, run.explain()
    assert server.alive, (
        f"the server died (exit status {server.returncode}) while judge ran:\n"
        f"{server.log_tail(12)}\n{run.explain()}"
    )


def judged_enough(run: JudgeRun, expected_cases: int, allowed: float) -> bool:
    """Whether at most `allowed` of the cases went without a verdict (a case the run
    stopped before reaching counts as one without).
    """
    ok: int = sum(r["status"] == "ok" for r in run.results())
    return expected_cases - ok <= allowed * expected_cases


def assert_exit_code(
    run: JudgeRun,
    expected_cases: int,
    *,
    gate_passed: bool | None = None,
    undecided: bool = False,
    allowed: float = DEFAULT_ALLOWED_FAILURES,
) -> None:
    """3 when too few cases were judged, whatever the gate, or when the gate is undecided
    (issue 29: a judge below the position-consistency floor); else 1 for a failed gate.
    """
    if not judged_enough(run, expected_cases, allowed) or undecided:
        expected = 3
    else:
        expected = 1 if gate_passed is False else 0
    failed = sum(r["status"] == "failed" for r in run.results())
    assert run.exit_code == expected, (
        f"{failed} failed of {len(run.results())} results ({expected_cases} cases)\n"
        + run.explain()
    )


def assert_failed_cases_explained(run: JudgeRun) -> None:
    for result in run.results():
        assert result["status"] in {"ok", "failed"}, result
        if result["status"] != "failed":
            continue
        assert result.get("error"), result
        judgements = result.get("judgements") or []
        assert judgements, f"{result['id']}: a failed case without its judge calls"
        for j in judgements:
            if j.get("verdict") is not None:
                continue
            assert j.get("error"), j
            # The server answered: its text is kept. It did not: the error says why.
            assert j.get("raw") is not None or NO_REPLY.search(j["error"]), j


def assert_on_scale(score: float, rubric: Rubric) -> None:
    assert rubric.scale is not None
    assert rubric.scale.min <= score <= rubric.scale.max, score
    if rubric.scale.integer:
        assert float(score).is_integer(), score


def assert_pointwise_verdicts_on_scale(run: JudgeRun, rubric: Rubric) -> None:
    for result in run.results():
        if result["status"] == "ok":
            assert result["score"] is not None, result
            assert_on_scale(result["score"], rubric)
        for j in result.get("judgements") or []:
            if j.get("verdict") is not None:
                assert_on_scale(j["verdict"]["score"], rubric)


def response_format_modes(info: dict[str, Any]) -> list[str]:
    """The response-format mode(s) run.json records: at its top level, or per judge."""
    found = [info["response_format_mode"]] if "response_format_mode" in info else []
    found += [
        m["response_format_mode"] for m in info.get("models", []) if "response_format_mode" in m
    ]
    return found


def assert_response_format_recorded(run: JudgeRun) -> None:
    modes = response_format_modes(run.run_info())
    assert modes, f"run.json records no response_format_mode: {sorted(run.run_info())}"
    for mode in modes:
        assert isinstance(mode, str), modes
        # This server answers json_schema with HTTP 500: the run cannot have used it.
        assert mode.replace("-", "_").lower() != "json_schema", modes


def assert_summary_counts(run: JudgeRun) -> None:
    """summary.json counts what results.jsonl holds (a finished run always has one; a run
    stopped with exit 3 may not).
    """
    if not (run.out / "summary.json").exists():
        assert run.exit_code == 3, run.explain()
        return
    summary = run.summary()
    results = run.results()
    assert summary["n_failed"] == sum(r["status"] == "failed" for r in results)
    assert summary["n_ok"] == sum(r["status"] == "ok" for r in results)
    if run.stdout.strip():  # --json: stdout is the summary and nothing else
        printed = json.loads(run.stdout)
        assert (printed["n_ok"], printed["n_failed"]) == (summary["n_ok"], summary["n_failed"])


# The commands ---------------------------------------------------------------------------


def test_score_grades_or_fails_each_case_and_exits_by_the_contract(llama_server, tmp_path):
    cases = read_jsonl(DATASETS / "example.jsonl")[:12]
    dataset = write_jsonl(tmp_path / "cases.jsonl", cases)
    run = judge(llama_server, tmp_path, "score", str(dataset), "--rubric", "helpfulness")

    assert_no_crash(run, llama_server)
    assert_exit_code(run, len(cases))
    assert {r["id"] for r in run.results()} <= {c["id"] for c in cases}
    assert_failed_cases_explained(run)
    assert_pointwise_verdicts_on_scale(run, rubric("helpfulness"))
    assert_summary_counts(run)
    assert_response_format_recorded(run)


def test_pairwise_gate_is_decided_only_on_a_judged_run(llama_server, tmp_path):
    ids = ["p-01", "p-02", "p-03", "p-05"]
    old = subset(DATASETS / "old.jsonl", ids, tmp_path / "old.jsonl")
    new = subset(DATASETS / "new.jsonl", ids, tmp_path / "new.jsonl")
    threshold = 0.5
    run = judge(
        llama_server, tmp_path, "pairwise", str(old), str(new), "--min-win-rate", str(threshold)
    )

    assert_no_crash(run, llama_server)
    results = run.results()
    decided = [r for r in results if r["status"] == "ok"]
    for result in decided:
        assert result["winner"] in {"old", "new", "tie"}, result
    for j in (j for r in results for j in r.get("judgements") or []):
        if j.get("verdict") is not None:
            assert j["verdict"]["winner"] in {"A", "B", "tie"}, j
            assert 0.0 <= j["verdict"]["confidence"] <= 1.0, j
    gate_passed = None
    undecided = False
    if decided:
        wins = sum(r["winner"] == "new" for r in decided)
        ties = sum(r["winner"] == "tie" for r in decided)
        win_rate = (wins + ties / 2) / len(decided)
        if (run.out / "summary.json").exists():
            assert run.summary()["win_rate"] == pytest.approx(win_rate)
        gate_passed = win_rate >= threshold
        # Issue 29: SmolLM2 tends to answer "A" whatever the order; below the default
        # position-consistency floor (0.5) its gate is undecided, exit 3, not 0 or 1.
        consistent = [r["consistent"] for r in decided]
        undecided = sum(consistent) / len(consistent) < 0.5
    assert_exit_code(run, len(ids), gate_passed=gate_passed, undecided=undecided)
    assert_failed_cases_explained(run)
    assert_summary_counts(run)
    assert_response_format_recorded(run)


def test_calibrate_measures_only_judged_cases(llama_server, tmp_path):
    wanted = {"q-01", "q-03", "q-05", "q-08", "q-10", "q-12"}
    labels = subset(DATASETS / "labels.jsonl", wanted, tmp_path / "labels.jsonl")
    run = judge(
        llama_server,
        tmp_path,
        "calibrate",
        str(labels),
        "--rubric",
        "helpfulness",
        "--min-accuracy",
        "0.5",
    )

    assert_no_crash(run, llama_server)
    helpfulness = rubric("helpfulness")
    assert_pointwise_verdicts_on_scale(run, helpfulness)
    for result in run.results():
        assert result["id"] in wanted
        assert result["human_labels"], result
        if result["status"] == "ok":
            assert isinstance(result["agrees"], bool), result
    summary = run.summary() if (run.out / "summary.json").exists() else {}
    gate = summary.get("gate")
    assert_exit_code(run, len(wanted), gate_passed=gate["passed"] if gate else None)
    assert_failed_cases_explained(run)
    assert_summary_counts(run)
    assert_response_format_recorded(run)


def test_refine_with_smollm2_as_generator_and_judge(llama_server, tmp_path):
    prompts = [
        {"id": "tides", "input": "What causes ocean tides?"},
        {"id": "bread", "input": "Why does bread dough rise?"},
        {"id": "sky", "input": "Why is the sky blue?"},
    ]
    dataset = write_jsonl(tmp_path / "prompts.jsonl", prompts)
    run = judge(
        llama_server,
        tmp_path,
        "refine",
        str(dataset),
        "--rubric",
        "helpfulness",
        "--generator",
        MODEL,
        "--max-attempts",
        "2",
    )

    assert_no_crash(run, llama_server)
    helpfulness = rubric("helpfulness")
    assert_pointwise_verdicts_on_scale(run, helpfulness)
    for result in run.results():
        attempts = result.get("attempts") or []
        assert 1 <= len(attempts) <= 2, result
        for attempt in attempts:
            if attempt.get("score") is not None:
                assert_on_scale(attempt["score"], helpfulness)
    assert_exit_code(run, len(prompts))
    assert_failed_cases_explained(run)
    assert_summary_counts(run)
    assert_response_format_recorded(run)
