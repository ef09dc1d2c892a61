"""Issue 31: the Python API against the simulator, through real LiteLLM over HTTP.

The API is the engine the command line runs: the same job gives the same summary.json
either way; `Judge.grade` works in a script, inside a running event loop and from many
threads; what the judge could not grade, and an outage, raise; the reply cache makes a
second grade free; a run's exit code is the command line's.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from judgecli import (
    Judge,
    Winner,
    calibrate_judge,
    compare_datasets,
    load_rubric,
    refine_dataset,
    run_arena,
    score_dataset,
)
from judgecli.errors import ExitCode, GradeError, InputError, JudgeUnavailableError
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.conftest import REPO, write_jsonl

EXAMPLE = REPO / "datasets" / "example.jsonl"
ROWS = [{"id": f"q{i}", "input": f"What is {i} + {i}?", "output": f"{2 * i}"} for i in range(6)]
TIMINGS = {"latency_p50_s", "latency_p95_s"}


@pytest.fixture
def sim(judge_server, monkeypatch) -> dict[str, str]:
    """The simulated judge, as keyword arguments."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    return {"model": "openai/sim", "api_base": f"{judge_server.url}/v1"}


@pytest.fixture
def judge(sim) -> Iterator[Judge]:
    with Judge(rubric="helpfulness", **sim) as made:
        yield made


def without_timings(value):
    """A summary.json with the wall-clock numbers left out (they differ run to run)."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def run_python(code: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """`python -c CODE` in `folder`, as a user's script runs: a clean environment (no key:
    the simulator is a keyless local server), its own reply cache.
    """
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=folder,
        env={"PATH": "/usr/bin:/bin", "JUDGE_CACHE_DIR": str(folder / "c"), "HOME": str(folder)},
    )


def summary_file(run_dir: Path) -> dict:
    return without_timings(json.loads((run_dir / "summary.json").read_text(encoding="utf-8")))


# --- one code path: the API and the CLI make the same run -----------------------------------


@pytest.mark.parametrize(
    ("command", "call", "flags"),
    [
        pytest.param(
            ["score", str(EXAMPLE), "--rubric", "helpfulness"],
            lambda sim, out: score_dataset(
                EXAMPLE,
                rubric="helpfulness",
                out=out,
                min_pass_rate=0.6,
                repeats=2,
                temperature=0.5,
                cache=False,
                **sim,
            ),
            ["--min-pass-rate", "0.6", "--repeats", "2", "--temperature", "0.5", "--no-cache"],
            id="score",
        ),
        pytest.param(
            ["pairwise", str(REPO / "datasets/old.jsonl"), str(REPO / "datasets/new.jsonl")],
            lambda sim, out: compare_datasets(
                REPO / "datasets/old.jsonl",
                REPO / "datasets/new.jsonl",
                out=out,
                min_win_rate=0.5,
                on="lower-bound",
                limit=12,
                cache=False,
                **sim,
            ),
            ["--min-win-rate", "0.5", "--on", "lower-bound", "--limit", "12", "--no-cache"],
            id="pairwise",
        ),
    ],
)
def test_the_api_and_the_cli_write_the_same_summary(
    run_cli, judge_server, sim, command, call, flags
):
    cli = run_cli(judge_server, *command, *flags, "--out", "cli", "--quiet")
    assert cli.exit_code in (0, 1), cli.stderr
    run = call(sim, "api")
    assert summary_file(Path("api")) == summary_file(Path("cli"))
    assert int(run.exit_code) == cli.exit_code
    assert (
        run.summary.model_dump(mode="json", exclude_none=True)["n_cases"]
        == json.loads(Path("cli/summary.json").read_text())["n_cases"]
    )


def test_the_run_records_a_command_line_judge_resume_continues(run_cli, sim):
    run = score_dataset(ROWS, rubric="helpfulness", **sim)
    argv = json.loads((run.run_dir / "run.json").read_text())["argv"]
    kept = run.run_dir / "inputs" / "dataset.jsonl"
    assert argv[:3] == ["judge", "score", str(kept)]
    assert [json.loads(line) for line in kept.read_text().splitlines()] == ROWS
    before = summary_file(run.run_dir)
    again = run_cli(None, "resume", str(run.run_dir))
    assert again.exit_code == 0, again.stderr
    assert summary_file(run.run_dir) == before


# --- Judge: one case at a time ---------------------------------------------------------------


def test_grade_returns_the_verdict_a_score_run_gives_the_case(run_cli, judge_server, judge):
    write_jsonl(Path("one.jsonl"), [ROWS[1]])
    cli = run_cli(judge_server, "score", "one.jsonl", "--rubric", "helpfulness", "--out", "one")
    assert cli.exit_code == 0, cli.stderr
    verdict = judge.grade(ROWS[1])
    result = json.loads(Path("one/results.jsonl").read_text())
    assert (verdict.score, verdict.passed) == (result["score"], result["passed"])
    assert verdict.reason == result["judgements"][0]["verdict"]["reasoning"]


def test_grade_works_in_a_plain_script(judge_server, tmp_path):
    script = (
        "from judgecli import Judge\n"
        f"judge = Judge('openai/sim', rubric='helpfulness', api_base='{judge_server.url}/v1')\n"
        "verdict = judge.grade({'input': 'What is 2+2?', 'output': '4'})\n"
        "print(verdict.score, verdict.usage.calls)\n"
    )
    result = run_python(script, tmp_path)
    assert result.returncode == 0, result.stderr
    score, calls = result.stdout.split()
    assert float(score) in range(1, 6)
    assert calls == "1"
    assert result.stderr == ""  # no warning, no unclosed client at exit


def test_grade_works_inside_a_running_event_loop(judge):
    # A notebook's cell runs in the kernel's event loop: a plain call must still work.
    async def cell():
        return judge.grade(ROWS[2])

    assert asyncio.run(cell()).score is not None


def test_agrade_runs_many_cases_at_once_from_the_callers_loop(judge, judge_server):
    async def main():
        return await asyncio.gather(*(judge.agrade(row) for row in ROWS))

    verdicts = asyncio.run(main())
    assert [v.id for v in verdicts] == [row["id"] for row in ROWS]
    assert len(judge_server.requests) == len(ROWS)


def test_grade_from_eight_threads_at_once(judge, judge_server):
    cases = [{"input": f"Name the number {i}.", "output": str(i)} for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        verdicts = list(pool.map(judge.grade, cases))
    assert all(v.score is not None for v in verdicts)
    assert len(judge_server.requests) == 8


CONCURRENT = """
from concurrent.futures import ThreadPoolExecutor
from judgecli import Judge, score_dataset
sim = {{"model": "openai/sim", "api_base": "{url}/v1"}}
rows = [{{"id": f"q{{i}}", "input": f"{{i}} + {{i}}?", "output": str(2 * i)}} for i in range(20)]
judge = Judge(rubric="helpfulness", cache=False, **sim)
def job(_):
    return score_dataset(rows, rubric="helpfulness", cache=False, **sim).summary.n_ok
def grades(k):
    return [judge.grade({{"input": f"q{{k}}-{{i}}", "output": "a"}}).score for i in range(10)]
with ThreadPoolExecutor(6) as pool:
    jobs = [pool.submit(job, k) for k in range(3)]
    graded = [pool.submit(grades, k) for k in range(3)]
    print([j.result() for j in jobs], all(None not in g.result() for g in graded))
"""


def test_jobs_and_a_judge_at_once_in_threads_do_not_break_each_other(judge_server, tmp_path):
    # Issue 31: each on an event loop of its own, they broke each other's calls: LiteLLM
    # binds its logging worker to one loop ("Queue is bound to a different event loop",
    # "Task was destroyed but it is pending!") and closed every loop's HTTP clients at a
    # run's end ("Connection error" verdicts).
    result = run_python(CONCURRENT.format(url=judge_server.url), tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[0] == "[20, 20, 20] True"
    assert result.stderr == ""


def test_a_job_runs_from_inside_a_running_event_loop(sim):
    async def cell():
        return score_dataset(ROWS, rubric="helpfulness", **sim)

    assert asyncio.run(cell()).summary.n_ok == len(ROWS)


def test_an_unknown_setting_is_a_type_error_naming_the_nearest(sim):
    with pytest.raises(TypeError, match="did you mean max_tokens"):
        Judge(rubric="helpfulness", max_token=100, **sim)


def test_the_cache_makes_a_second_grade_of_the_same_case_cost_nothing(judge, judge_server):
    first = judge.grade(ROWS[3])
    second = judge.grade(ROWS[3])
    assert (first.usage.calls, first.usage.cached) == (1, 0)
    assert (second.usage.calls, second.usage.cached, second.usage.prompt_tokens) == (0, 1, 0)
    assert second.score == first.score
    assert len(judge_server.requests) == 1


def test_a_verdict_that_cannot_be_parsed_raises_with_the_raw_text(sim, judge_server):
    for _ in range(2):
        judge_server.enqueue("The answer is fine, I'd say 3.")
    with (
        Judge(rubric="helpfulness", max_retries=1, **sim) as judge,
        pytest.raises(GradeError) as raised,
    ):
        judge.grade(ROWS[0])
    assert raised.value.raw == ("The answer is fine, I'd say 3.",)
    assert "invalid verdict" in raised.value.message
    assert len(judge_server.requests) == 2  # the re-ask, then no guess


def test_an_outage_raises_and_the_next_call_tries_again(sim, judge_server):
    judge_server.fail_next(401, body='{"error": {"message": "bad key", "type": "auth"}}')
    with Judge(rubric="helpfulness", **sim) as judge:
        with pytest.raises(JudgeUnavailableError, match="bad key"):
            judge.grade(ROWS[0])
        assert judge.grade(ROWS[0]).score is not None  # the key works again


def test_compare_judges_both_orders_and_reconciles_them(sim, judge_server):
    old = {"id": "p", "input": "What is the capital of France?", "output": "Paris."}
    new = old | {"output": "The capital of France is Paris, on the Seine."}
    with Judge(rubric="pairwise", **sim) as judge:
        comparison = judge.compare(old, new)
        with pytest.raises(InputError, match="compares two answers"):
            judge.grade(old)
    assert comparison.winner in set(Winner)
    assert [j.order for j in comparison.judgements] == ["old-new", "new-old"]
    assert len(judge_server.requests) == 2


# --- whole jobs ---------------------------------------------------------------------------


def test_exit_codes_of_a_passed_and_a_failed_gate(sim):
    passed = score_dataset(EXAMPLE, rubric="helpfulness", min_pass_rate=0.5, **sim)
    failed = score_dataset(EXAMPLE, rubric="helpfulness", min_pass_rate=0.99, **sim)
    assert (passed.exit_code, passed.passed) == (ExitCode.OK, True)
    assert (failed.exit_code, failed.passed) == (ExitCode.GATE_FAILED, False)
    assert failed.summary.gate is not None
    assert failed.summary.gate.value == passed.summary.pass_rate
    assert passed.run_dir != failed.run_dir  # two runs in one second: two directories


def test_a_run_that_finished_incomplete_is_returned_with_exit_3(sim, judge_server):
    judge_server.enqueue("no verdict here")
    run = score_dataset(ROWS, rubric="helpfulness", max_retries=0, max_failures=0, **sim)
    assert run.exit_code is ExitCode.INCOMPLETE
    assert run.summary.incomplete
    assert run.summary.n_failed == 1
    assert [r.id for r in run.results if r.status == "failed"] == ["q0"]


def test_an_undecided_gate_is_exit_3(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    same = [{"id": f"c{i}", "input": f"{i} + {i}?", "output": f"It is {2 * i}."} for i in range(6)]
    with SimulatorServer(SimulatorConfig(position_bias=1.0)) as biased:
        run = compare_datasets(
            same, same, model="openai/sim", api_base=f"{biased.url}/v1", min_win_rate=0.5
        )
    assert run.summary.gate is not None
    assert not run.summary.gate.decided
    assert run.exit_code is ExitCode.INCOMPLETE


def test_an_outage_during_a_job_raises(sim, judge_server):
    judge_server.fail_next(401, body='{"error": {"message": "bad key", "type": "auth"}}')
    with pytest.raises(JudgeUnavailableError):
        score_dataset(ROWS, rubric="helpfulness", cache=False, **sim)


def test_bad_rows_raise_naming_the_row_and_leave_nothing_behind(sim):
    with pytest.raises(InputError) as raised:
        score_dataset([ROWS[0], {"id": "x", "input": "no answer"}], rubric="helpfulness", **sim)
    assert raised.value.message.startswith('dataset row 2: missing required field "output"')
    assert not Path("runs").exists() or not any(Path("runs").iterdir())


def test_bad_rows_into_a_named_directory_leave_no_directory(sim):
    with pytest.raises(InputError):
        score_dataset([{"id": "x"}], rubric="helpfulness", out="mine/run", **sim)
    assert not Path("mine").exists()


def test_rows_start_a_run_over_with_force(sim):
    first = score_dataset(ROWS[:2], rubric="helpfulness", out="run", **sim)
    again = score_dataset(ROWS, rubric="helpfulness", out="run", force=True, **sim)
    assert (first.summary.n_cases, again.summary.n_cases) == (2, len(ROWS))
    with pytest.raises(InputError, match="already holds a run"):
        score_dataset(ROWS[:1], rubric="helpfulness", out="run", **sim)
    kept = Path("run/inputs/dataset.jsonl").read_text().splitlines()
    assert len(kept) == len(ROWS)  # the refused call wrote nothing over the run's rows


def test_a_rubric_object_is_kept_with_the_run(sim):
    mine = load_rubric("helpfulness").model_copy(update={"name": "mine", "pass_at": 2})
    run = score_dataset(ROWS, rubric=mine, **sim)
    kept = run.run_dir / "inputs" / "rubric.yaml"
    assert load_rubric(kept).content_hash == mine.content_hash == run.summary.rubric_hash
    assert json.loads((run.run_dir / "run.json").read_text())["argv"][3:5] == [
        "--rubric",
        str(kept),
    ]


def test_calibrate_refine_and_arena_run_as_their_commands(sim):
    labels = [dict(row, label=4 if i % 2 else 2) for i, row in enumerate(ROWS)]
    calibrated = calibrate_judge(labels, rubric="helpfulness", **sim)
    assert calibrated.summary.n_labelled_cases == len(ROWS)
    refined = refine_dataset(ROWS[:2], rubric="helpfulness", generator="openai/sim", **sim)
    assert (refined.run_dir / "answers.jsonl").exists()
    other = [row | {"output": f"The answer is {row['output']}."} for row in ROWS]
    arena = run_arena({"terse": ROWS, "wordy": other, "same": ROWS}, **sim)
    assert sorted(s.name for s in arena.summary.leaderboard) == ["same", "terse", "wordy"]


def test_litellm_never_hands_out_a_client_closed_at_a_runs_end(judge_server, monkeypatch):
    # Issue 31: close_clients closed LiteLLM's pooled clients but left them in its cache,
    # keyed by the loop's id: the next call on that loop (or on a later loop given the same
    # id) got the closed client and failed with "Connection error".
    from judgecli.judge.provider import close_clients, import_litellm

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    litellm = import_litellm()
    call = {
        "model": "openai/sim",
        "api_base": f"{judge_server.url}/v1",
        "messages": [{"role": "user", "content": "hi"}],
        "max_retries": 0,
    }

    async def twice():
        await litellm.acompletion(**call)
        await close_clients(litellm)
        return await litellm.acompletion(**call)

    assert asyncio.run(twice()).choices[0].message.content


def test_calibrating_a_finished_run_calls_no_judge(sim, judge_server):
    run = score_dataset(ROWS, rubric="helpfulness", **sim)
    calls = len(judge_server.requests)
    labels = [{"id": row["id"], "label": 3} for row in ROWS]
    calibrated = calibrate_judge(
        labels, results=run.run_dir / "results.jsonl", rubric="helpfulness"
    )
    assert calibrated.summary.n_labelled_cases == len(ROWS)
    assert len(judge_server.requests) == calls
    assert calibrated.run_dir != run.run_dir
