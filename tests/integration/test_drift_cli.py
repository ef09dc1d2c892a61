"""`judge drift` through the real CLI, LiteLLM and the simulator playing two judges of one
binary rubric on cases whose true labels it knows: `sharp` always answers the label,
`noisy` answers the other choice with probability 0.3 (a seeded draw per answer).

What is checked against sources other than drift's own word: the flipped cases are exactly
those the simulator's truth draw flipped for `noisy` (recomputed here from
`judgecli.simulator.truth`), and exactly those whose choice differs between the two
results files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecli.result import natural_key
from judgecli.simulator.config import JudgeProfile
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from judgecli.simulator.truth import load_truth, shown
from tests.conftest import DATA
from tests.integration.conftest import write_jsonl

N_CASES = 60
NOISE = 0.3
SEED = 0
BINARY = """\
name: correct
version: 1
kind: binary
choices: [YES, NO]
prompt:
  user: "Question: {input}\\nAnswer: {output}"
"""
POINTWISE = """\
name: graded
kind: pointwise
scale: {min: 1, max: 5}
prompt:
  user: "Question: {input}\\nAnswer: {output}"
"""
PROSE = "I think this answer is quite good."


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """N_CASES answers, ids c1..c60 (natural order is not string order), mostly right: the
    noisy judge's errors then mostly fail right answers, a shift the t test can see.
    """
    path = tmp_path_factory.mktemp("drift") / "cases.jsonl"
    rows = [
        {
            "id": f"c{i}",
            "input": f"What is {i} + {i}?",
            "output": f"It is {2 * i if i % 5 else 2 * i + 1}.",
            "label": "YES" if i % 5 else "NO",
        }
        for i in range(1, N_CASES + 1)
    ]
    return write_jsonl(path, rows)


@pytest.fixture(scope="module")
def two_judges(cases: Path):
    config = SimulatorConfig(
        seed=SEED,
        truth_file=cases,
        profiles={"sharp": JudgeProfile(noise=0.0), "noisy": JudgeProfile(noise=NOISE)},
    )
    with SimulatorServer(config) as server:
        yield server


@pytest.fixture
def server(two_judges: SimulatorServer) -> SimulatorServer:
    two_judges.reset()
    return two_judges


@pytest.fixture
def rubric(tmp_path: Path) -> Path:
    path = tmp_path / "correct.yaml"
    path.write_text(BINARY, encoding="utf-8")
    return path


@pytest.fixture
def score(run_cli, server, cases, rubric):
    """score(out, model, *extra): the binary run of every case by one judge."""

    def _run(out: str, model: str, *extra: str, dataset: Path = cases, rubric_file: Path = rubric):
        words = ["score", str(dataset), "--rubric", str(rubric_file), "--out", out, "--quiet"]
        return run_cli(server, *words, *extra, model=f"openai/{model}")

    return _run


@pytest.fixture
def sharp_and_noisy(score):
    """Runs a (sharp) and b (noisy) of the same cases."""
    for out, model in [("a", "sharp"), ("b", "noisy")]:
        run = score(out, model)
        assert run.exit_code == 0, run.stderr


def flipped_by_the_truth_draw(cases: Path) -> set[str]:
    """The ids whose answer the simulator flips for `noisy` (LiteLLM sends the model name
    without its `openai/` prefix)."""
    table = load_truth(cases, "label")
    flipped = set()
    for line in cases.read_text().splitlines():
        case = json.loads(line)
        answer = table.answer(
            shown("input", case["input"]),
            shown("output", case["output"]),
            noise=NOISE,
            seed=SEED,
            model="noisy",
        )
        assert answer is not None
        if answer.flipped:
            flipped.add(case["id"])
    return flipped


def choices_in(run_dir: str) -> dict[str, str]:
    lines = Path(run_dir, "results.jsonl").read_text().splitlines()
    return {row["id"]: row["choice"] for row in map(json.loads, lines)}


def drift(run_cli, *args: str):
    return run_cli(None, "drift", *args, "--json")


def flips_in(out: str) -> list[dict]:
    return [json.loads(line) for line in Path(out, "flips.jsonl").read_text().splitlines()]


def test_drift_finds_exactly_the_verdicts_the_noisy_judge_flipped(
    run_cli, server, sharp_and_noisy, cases
):
    calls = len(server.requests)
    run = drift(run_cli, "a", "b", "--out", "d")
    assert run.exit_code == 0, run.stderr
    assert len(server.requests) == calls  # two finished runs: nothing is judged
    s = run.summary
    expected = flipped_by_the_truth_draw(cases)
    a, b = choices_in("a"), choices_in("b")
    truth = {c["id"]: c["label"] for c in map(json.loads, cases.read_text().splitlines())}
    assert a == truth  # the sharp judge answered every true label
    assert expected == {i for i in a if a[i] != b[i]}  # the results agree with the draw
    assert 0 < len(expected) < N_CASES
    assert {f["id"] for f in flips_in("d")} == expected
    assert (s["n_paired"], s["n_flipped"], s["left_out"]) == (N_CASES, len(expected), 0)
    assert s["flip_rate"] == pytest.approx(len(expected) / N_CASES)
    assert (s["kind"], s["compared"], s["value"]) == ("binary", "choice", "passed")
    assert s["differences"]["models"] == {"a": ["openai/sharp"], "b": ["openai/noisy"]}
    assert s["runs"] == {"a": "a", "b": "b"}
    assert json.loads(Path("d/summary.json").read_text()) == s
    assert s["shift"] == pytest.approx(
        (sum(b[i] == "YES" for i in b) - sum(a[i] == "YES" for i in a)) / N_CASES
    )
    assert Path("d/report.md").read_text().startswith("# Judge drift: a → b")
    html = Path("d/report.html").read_text()
    assert html.startswith("<!doctype html>")
    assert "http" not in html  # self-contained: nothing is fetched


def test_flips_jsonl_lists_the_largest_change_first_then_ids_in_natural_order(
    run_cli, sharp_and_noisy
):
    assert drift(run_cli, "a", "b", "--out", "d").exit_code == 0
    flips = flips_in("d")
    assert flips == sorted(flips, key=lambda f: (-abs(f["change"]), natural_key(f["id"])))
    ids = [f["id"] for f in flips]
    assert ids != sorted(ids)  # c13 before c5 as strings: natural order is the one kept
    first = flips[0]
    assert set(first) == {"id", "a", "b", "a_value", "b_value", "change", "case"}
    assert first["case"]["output"].startswith("It is")


def test_a_significant_shift_beyond_max_shift_exits_1_and_within_it_0(run_cli, sharp_and_noisy):
    failed = drift(run_cli, "a", "b", "--out", "tight", "--max-shift", "0.05")
    assert failed.exit_code == 1, failed.stderr
    gate = failed.summary["gate"]
    low, high = failed.summary["shift_ci"]
    assert high < 0  # the noisy judge fails right answers: a significant fall
    assert gate == {
        "metric": "shift",
        "max_shift": 0.05,
        "shift": failed.summary["shift"],
        "shift_ci": [low, high],
        "significant": True,
        "passed": False,
    }
    assert "FAIL" in failed.stderr
    loose = drift(run_cli, "a", "b", "--out", "loose", "--max-shift", "0.9")
    assert loose.exit_code == 0, loose.stderr
    assert loose.summary["gate"]["passed"] is True


@pytest.mark.parametrize(
    ("other", "why"),
    [
        pytest.param(
            "pointwise",
            "a has binary verdicts and other pointwise verdicts: a flip or a shift between "
            "them means nothing",
            id="binary-vs-pointwise",
        ),
        pytest.param(
            "pairwise",
            "a is a score run and other a pairwise run: drift compares runs of one kind "
            "(score or calibrate with score, pairwise with pairwise)",
            id="score-vs-pairwise",
        ),
    ],
)
def test_runs_of_different_kinds_exit_2_and_write_nothing(
    run_cli, server, score, sharp_and_noisy, tmp_path, other, why
):
    if other == "pointwise":
        graded = tmp_path / "graded.yaml"
        graded.write_text(POINTWISE, encoding="utf-8")
        made = score("other", "sharp", "--limit", "3", rubric_file=graded)
    else:
        rows = [json.loads(line) for line in (DATA / "three_cases.jsonl").read_text().splitlines()]
        old = write_jsonl(tmp_path / "old.jsonl", rows)
        new = write_jsonl(tmp_path / "new.jsonl", [r | {"output": r["output"] + "!"} for r in rows])
        made = run_cli(server, "pairwise", str(old), str(new), "--out", "other", "--quiet")
    assert made.exit_code == 0, made.stderr
    calls = len(server.requests)
    run = drift(run_cli, "a", "other", "--out", "d")
    assert run.exit_code == 2
    assert run.stdout == ""
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {why}"]
    assert not Path("d").exists()
    assert len(server.requests) == calls


def test_an_incomplete_run_exits_3_and_writes_nothing(run_cli, server, score, sharp_and_noisy):
    server.enqueue(PROSE)  # one case fails, and this run may lose none
    broken = score("broken", "noisy", "--max-failures", "0", "--max-retries", "0", "--no-cache")
    assert broken.exit_code == 3, broken.stderr
    run = drift(run_cli, "a", "broken", "--out", "d", "--max-shift", "0.9")
    assert run.exit_code == 3
    assert "incomplete" in run.stderr
    assert not Path("d").exists()


def test_an_unfinished_run_exits_3_and_says_how_to_finish_it(run_cli, score, sharp_and_noisy):
    submitted = score("batched", "noisy", "--batch", "--no-cache")
    assert submitted.exit_code == 0, submitted.stderr
    assert not Path("batched/summary.json").exists()
    run = drift(run_cli, "a", "batched", "--out", "d")
    assert run.exit_code == 3
    assert "has not finished" in run.stderr
    assert "judge collect batched" in run.stderr
    assert not Path("d").exists()


def test_anchor_rejudges_the_pinned_set_with_the_new_judge_and_compares_in_one_command(
    run_cli, server, score, cases
):
    assert score("a", "sharp").exit_code == 0
    server.reset()
    run = drift(run_cli, "a", "--anchor", str(cases), "--model", "openai/noisy", "--out", "d")
    assert run.exit_code == 0, run.stderr
    # Only the new judge was asked, once per anchor case.
    assert {r.model for r in server.requests} == {"noisy"}
    assert len(server.requests) == N_CASES
    info = json.loads(Path("d/rejudged/run.json").read_text())
    assert info["argv"][:2] == ["judge", "score"]
    assert str(cases.resolve()) in info["argv"]
    assert info["argv"][info["argv"].index("--model") + 1] == "openai/noisy"
    assert info["argv"][info["argv"].index("--out") + 1] == str(Path("d/rejudged").resolve())
    s = run.summary
    assert s["runs"]["b"] == str(Path("d/rejudged"))
    assert {f["id"] for f in flips_in("d")} == flipped_by_the_truth_draw(cases)
    assert s["n_paired"] == N_CASES
    # stdout carries the drift's summary alone; the re-judged run reported on stderr.
    assert json.loads(run.stdout)["command"] == "drift"


@pytest.mark.parametrize(
    ("anchors", "why"),
    [
        pytest.param(
            ["others"],
            "none of the 1 cases of others.jsonl is a case a judged (no id matches)",
            id="no-id-matches",
        ),
        pytest.param(
            ["cases", "cases"],
            "a was made from 1 case file(s) (DATASET); 2 --anchor given",
            id="one-anchor-per-dataset",
        ),
    ],
)
def test_anchors_that_do_not_fit_run_a_exit_2_before_any_call(
    run_cli, server, score, cases, tmp_path, anchors, why
):
    assert score("a", "sharp", "--limit", "5").exit_code == 0
    write_jsonl(tmp_path / "others.jsonl", [{"id": "x1", "input": "Hi?", "output": "Hello."}])
    files = {"others": "others.jsonl", "cases": str(cases)}
    words = [w for name in anchors for w in ("--anchor", files[name])]
    server.reset()
    run = drift(run_cli, "a", *words, "--model", "openai/noisy", "--out", "d")
    assert run.exit_code == 2
    assert f"error: {why}" in run.stderr
    assert server.requests == []
    assert not Path("d").exists()


def test_judge_options_without_anchor_are_bad_usage(run_cli, sharp_and_noisy):
    run = drift(run_cli, "a", "b", "--model", "openai/noisy")
    assert run.exit_code == 2
    assert "--model change the judge of a re-judged anchor set" in run.stderr
