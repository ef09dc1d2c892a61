"""The pytest plugin (issue 31), as a user's project meets it: pytest in a subprocess (pytester)
loading the installed entry point, its tests calling `llm_judge` against the simulator over
real LiteLLM. The simulator replays given labels (`--truth`, no noise), so the session's pass
rate is known: 7 of 10 cases pass (helpfulness, pass at 3), 5 of 6 in test_a.py and 2 of 4
in test_b.py.

Every session of a test shares one reply cache, so only the first pays LiteLLM's import
and the calls; the verdicts are the given labels whichever session asks.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.conftest import REPO, write_jsonl

pytest_plugins = ["pytester"]

LABELS = {
    "a1": ("What is the capital of France?", "Paris.", 4),
    "a2": ("What is 2 + 2?", "4", 4),
    "a3": ("Name a primary colour.", "Red.", 4),
    "a4": ("What is the boiling point of water at sea level?", "100 C.", 4),
    "a5": ("Who wrote Hamlet?", "Shakespeare.", 4),
    "a6": ("How many legs has a spider?", "Six.", 2),
    "b1": ("How do I cook rice?", "It depends.", 2),
    "b2": ("What is the speed of light?", "Fast.", 2),
    "b3": ("What is the largest ocean?", "The Pacific.", 4),
    "b4": ("What is H2O?", "Water.", 3),
}
"""Each case's question, answer and true helpfulness (1-4; 3 passes)."""
CASES = [{"id": k, "input": q, "output": a, "label": n} for k, (q, a, n) in LABELS.items()]
TEST_MODULE = """
import pytest

CASES = {cases!r}


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_answer(llm_judge, case):
    verdict = llm_judge.grade(case)
    assert verdict.id == case["id"]
"""
# The numbers of the known labels: Wilson's interval of 7/10, 5/6 and 2/4 and Student t's of
# the scores clipped to 1-4 (statsmodels' proportion_confint and scipy.stats.t, computed once).
TABLE = [
    "graded with helpfulness (scale 1-4), judged by openai/sim",
    "cases  pass rate          95% CI  mean        95% CI",
    "all           10      70.0%  [39.7%, 89.2%]  3.30  [2.62, 3.98]",
    "test_a.py      6      83.3%  [43.6%, 97.0%]  3.67  [2.81, 4.00]",
    "test_b.py      4      50.0%  [15.0%, 85.0%]  2.75  [1.23, 4.00]",
]


@pytest.fixture(scope="module")
def truth_server(tmp_path_factory) -> SimulatorServer:
    truth = write_jsonl(tmp_path_factory.mktemp("truth") / "labels.jsonl", CASES)
    with SimulatorServer(SimulatorConfig(truth_file=truth, noise=0.0)) as server:
        yield server


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def project(pytester, truth_server, shared_cache, monkeypatch):
    """A user's project: two test modules grading the labelled cases, the judge set in
    pyproject.toml; every session of the test module shares one reply cache."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(shared_cache))
    configure(pytester, f"{truth_server.url}/v1")
    pytester.makepyfile(
        test_a=TEST_MODULE.format(cases=[c for c in CASES if c["id"] < "b"]),
        test_b=TEST_MODULE.format(cases=[c for c in CASES if c["id"] >= "b"]),
    )
    return pytester


def configure(pytester, api_base: str, rubric: str = "helpfulness") -> None:
    pytester.makepyprojecttoml(
        f"""
        [tool.pytest.ini_options]
        judge_model = "openai/sim"
        judge_rubric = "{rubric}"
        judge_api_base = "{api_base}"
        """
    )


def run(pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=600)


def section(result: pytest.RunResult) -> list[str]:
    """The plugin's part of the terminal summary, each line stripped."""
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if re.fullmatch(r"=+ judge =+", line))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("=="))
    return [line.strip() for line in lines[start + 1 : end] if line.strip()]


def test_the_plugin_is_a_pytest11_entry_point_that_p_no_judge_leaves_out(pytester):
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert declared["project"]["entry-points"]["pytest11"] == {
        "judge": "judgecli.api.pytest_plugin"
    }
    pytester.makepyfile("def test_judged(llm_judge):\n    pass\n")
    loaded = run(pytester, "--fixtures")
    assert loaded.ret == 0
    loaded.stdout.fnmatch_lines(["llm_judge [[]session scope[]]*"])
    left_out = run(pytester, "-p", "no:judge")
    assert left_out.ret == 1
    left_out.stdout.fnmatch_lines(["*fixture 'llm_judge' not found*"])


def test_loading_the_plugin_imports_none_of_the_engine():
    # Issue 31: pytest loads it in every project of an environment with judgecli installed.
    heavy = ("litellm", "pydantic", "numpy", "judgecli.api.judge", "judgecli.api.pytest_judge")
    code = (
        "import sys, judgecli.api.pytest_plugin\n"
        f"print([m for m in {heavy!r} if m in sys.modules])\n"
    )
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True
    )
    assert result.stdout.strip() == "[]", result.stderr[-2000:]
    imported = [line.split("|")[-1].strip() for line in result.stderr.splitlines()]
    assert [m for m in imported if m.startswith("judgecli")] == [
        "judgecli",
        "judgecli.api",
        "judgecli.api.pytest_session",
        "judgecli.api.pytest_plugin",
    ]


def test_the_gate_passes_on_a_judge_whose_pass_rate_clears_it(project):
    result = run(project, "--judge-min-pass-rate", "0.6")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=10)  # a failed verdict does not fail its test by default
    shown = section(result)
    assert shown[: len(TABLE)] == TABLE
    assert "gate passed: pass rate 70.0% >= 60.0%" in shown


@pytest.mark.parametrize(
    ("args", "line"),
    [
        pytest.param(
            ("--judge-min-pass-rate", "0.8"), "pass rate 70.0% < 80.0%", id="point-estimate"
        ),
        pytest.param(
            ("--judge-min-pass-rate", "0.6", "--judge-on", "lower-bound"),
            "pass rate's 95% lower bound 39.7% < 60.0%",
            id="lower-bound",
        ),
        pytest.param(("--judge-min-mean", "3.5"), "mean 3.30 < 3.50", id="mean-score"),
    ],
)
def test_the_gate_fails_the_session_with_exit_1_on_judged_evidence(project, args, line):
    result = run(project, *args)
    assert result.ret == 1, result.stdout.str()
    result.assert_outcomes(passed=10)
    shown = section(result)
    assert f"gate FAILED on judged evidence: {line}" in shown
    assert shown[-1] == "exit 1: the judge's gate failed"


def test_judge_per_test_fails_each_test_whose_verdict_failed_with_the_judges_reason(project):
    result = run(project, "--judge-per-test", "--judge-min-pass-rate", "0.6")
    assert result.ret == 1
    result.assert_outcomes(passed=7, failed=3)
    for case in ("a6", "b1", "b2"):
        result.stdout.fnmatch_lines(
            [
                f"*_ test_answer[[]{case}[]] _*",
                "the judge failed this test's judged case:",
                f"  case '{case}' (helpfulness): score 2, not a pass: Simulated judgement*",
            ]
        )
    # The session's numbers do not depend on the flag: every case was still judged.
    assert section(result)[: len(TABLE)] == TABLE


def test_xdist_workers_pool_their_verdicts_into_the_same_numbers_and_junit_properties(project):
    alone = run(project, "--judge-min-pass-rate", "0.6", "-n", "0")
    pooled = run(project, "--judge-min-pass-rate", "0.6", "-n", "2", "--junitxml=junit.xml")
    assert (alone.ret, pooled.ret) == (0, 0), pooled.stdout.str()
    assert re.search(r"created: 2/2 workers", pooled.stdout.str())
    assert section(pooled) == section(alone)

    cases = ET.parse(project.path / "junit.xml").getroot().iter("testcase")
    properties = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in cases
    }
    assert len(properties) == 10
    for key, (_, _, label) in LABELS.items():
        got = properties[f"test_answer[{key}]"]
        assert got["judge_case"] == key
        assert got["judge_score"] == str(label)
        assert got["judge_passed"] == ("true" if label >= 3 else "false")
        assert got["judge_model"] == "openai/sim"
        assert got["judge_rubric"] == "helpfulness"
        assert got["judge_reason"].startswith("Simulated judgement")


def test_a_second_session_is_answered_by_the_reply_cache(project, truth_server):
    run(project, "test_b.py")
    truth_server.reset()
    again = run(project, "test_b.py")
    assert again.ret == 0
    assert truth_server.requests == []
    assert "all            4      50.0%  [15.0%, 85.0%]  2.75  [1.23, 4.00]" in section(again)


def dead_port() -> str:
    return "http://127.0.0.1:9/v1"  # the discard port: nothing listens on loopback


@pytest.fixture
def garbling_server():
    """A judge whose every reply is not JSON: GradeError after the re-asks."""
    with SimulatorServer(SimulatorConfig(malformed_rate=1.0)) as server:
        yield server


@pytest.mark.parametrize("where", ["dead-port", "invalid-replies"])
def test_a_judge_that_cannot_grade_is_a_test_error_and_exit_3_never_a_failed_gate(
    project, where, request, monkeypatch, tmp_path
):
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "fresh"))
    if where == "dead-port":
        configure(project, dead_port())
        error = "JudgeUnavailableError"
    else:
        configure(project, f"{request.getfixturevalue('garbling_server').url}/v1")
        error = "GradeError"
    project.makeconftest(
        """
        import pytest

        @pytest.fixture(scope="session")
        def llm_judge_settings():
            return {"max_retries": 0}
        """
    )
    result = run(project, "test_b.py", "--judge-min-pass-rate", "0.9")
    assert result.ret == 3, result.stdout.str()
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at call of test_answer[[]b1[]] _*",
            ">       verdict = llm_judge.grade(case)",
            f"E       judgecli.errors.{error}: *",
            "E       hint: *",
            "test_b.py:*: " + error,
        ]
    )
    shown = section(result)
    assert shown[0] == "the judge could not grade 4 judged calls:"
    assert shown[1].startswith(f"test_b.py::test_answer[b1]: {error}: ")
    assert not any("FAILED" in line for line in shown)
    assert shown[-1] == "exit 3: the session cannot be judged on this evidence"


def test_without_a_model_a_test_that_asks_for_the_judge_errors_saying_what_to_set(pytester):
    pytester.makepyfile(
        """
        def test_judged(llm_judge):
            llm_judge.grade({"input": "q", "output": "a"})

        def test_plain():
            assert True
        """
    )
    result = run(pytester, "--judge-rubric", "helpfulness")
    assert result.ret == 4  # pytest's usage error: judge's exit 2, nothing was called
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at setup of test_judged _*",
            "error: llm_judge needs a judge model",
            "hint: pass --judge-model MODEL (e.g. openai/gpt-4o-mini), set JUDGE_MODEL, or "
            "set judge_model under [[]tool.pytest.ini_options[]]",
        ]
    )
    assert section(result)[-1] == "exit 4 (pytest's usage error): set up the judge, then run again"


def test_a_session_that_never_asks_for_the_judge_is_left_alone(pytester):
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = run(pytester)
    assert result.ret == 0
    assert not any(re.fullmatch(r"=+ judge =+", line) for line in result.outlines)


def test_a_gate_without_a_judged_case_cannot_decide(pytester):
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = run(pytester, "--judge-min-pass-rate", "0.5")
    assert result.ret == 3
    assert section(result) == [
        "no test called llm_judge: nothing was judged",
        "gate cannot decide: pass rate: none (threshold 50.0%)",
        "no pass rate: no case of this session was graded with one",
        "hint: run the tests that call llm_judge.grade (with a rubric that gives a pass rate), "
        "or leave out --judge-min-pass-rate",
        "exit 3: the session cannot be judged on this evidence",
    ]


def test_a_bad_threshold_is_a_usage_error_before_any_test_runs(pytester):
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = run(pytester, "--judge-min-pass-rate", "80")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--judge-min-pass-rate: 80 is out of range: from 0 to 1*"])


COMPARE_MODULE = """
import json
from pathlib import Path

import pytest

def read(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


OLD = read({old!r})[:8]
NEW = {{case["id"]: case for case in read({new!r})}}


@pytest.mark.parametrize("old", OLD, ids=[case["id"] for case in OLD])
def test_new_answer(llm_judge, old):
    llm_judge.using(rubric="pairwise").compare(old, NEW[old["id"]])
"""


def test_comparisons_give_the_win_rate_judge_pairwise_gives_and_gate_on_it(
    project, truth_server, tmp_path
):
    from judgecli import compare_datasets

    old, new = REPO / "datasets" / "old.jsonl", REPO / "datasets" / "new.jsonl"
    project.makepyfile(test_pairs=COMPARE_MODULE.format(old=str(old), new=str(new)))
    run_ = compare_datasets(
        [json.loads(line) for line in old.read_text().splitlines()][:8],
        [json.loads(line) for line in new.read_text().splitlines()][:8],
        model="openai/sim",
        api_base=f"{truth_server.url}/v1",
        out=tmp_path / "run",
    )
    rate, (low, high) = run_.summary.win_rate, run_.summary.win_rate_ci
    counts = (run_.summary.wins, run_.summary.losses, run_.summary.ties)
    assert None not in (rate, low, high)
    above, below = round(rate + 0.01, 2), round(rate - 0.01, 2)
    result = run(project, "test_pairs.py", "--judge-min-win-rate", str(above))
    assert result.ret == 1
    shown = section(result)
    assert shown[0] == "compared with pairwise, judged by openai/sim"
    expected = f"all          8  {rate:8.1%}  [{low:.1%}, {high:.1%}]  " + "  ".join(
        f"{n:>4}" for n in counts
    )
    assert re.sub(r"\s+", " ", shown[2]) == re.sub(r"\s+", " ", expected)
    assert f"gate FAILED on judged evidence: win rate {rate:.1%} < {above:.1%}" in shown

    passing = run(project, "test_pairs.py", "--judge-min-win-rate", str(below))
    assert passing.ret == 0


ASYNC_MODULE = """
import asyncio

import pytest

CASES = {cases!r}


@pytest.fixture
def graded_at_setup(llm_judge):
    return llm_judge.grade(CASES[0])


def test_graded_in_a_fixture(graded_at_setup):
    assert graded_at_setup.id == CASES[0]["id"]


def test_graded_concurrently(llm_judge):
    async def both():
        return await asyncio.gather(*(llm_judge.agrade(case) for case in CASES[1:]))

    assert [v.id for v in asyncio.run(both())] == [case["id"] for case in CASES[1:]]
"""


def test_async_calls_and_calls_from_a_tests_fixtures_are_that_tests_cases(project):
    project.makepyfile(test_async=ASYNC_MODULE.format(cases=CASES[5:8]))  # a6, b1, b2
    result = run(project, "test_async.py", "--junitxml=junit.xml", "--judge-per-test")
    assert result.ret == 1
    result.assert_outcomes(failed=2)
    assert "all                3       0.0%  [0.0%, 56.1%]  2.00       -" in section(result)
    assert "the mean of all has no interval: no spread: every score is 2" in section(result)
    cases = ET.parse(project.path / "junit.xml").getroot().iter("testcase")
    judged = {
        case.get("name"): [
            p.get("value") for p in case.iter("property") if p.get("name") == "judge_case"
        ]
        for case in cases
    }
    assert judged == {"test_graded_in_a_fixture": ["a6"], "test_graded_concurrently": ["b1", "b2"]}
