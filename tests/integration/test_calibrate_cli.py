from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.conftest import REPO

EXAMPLE = REPO / "datasets" / "example.jsonl"


def labelled(write, labels: dict[str, int], *, with_fields: bool = True) -> Path:
    """A labels file over the example dataset's cases, one annotator."""
    rows = []
    for line in EXAMPLE.read_text().splitlines():
        case = json.loads(line)
        if case["id"] in labels:
            row = {"id": case["id"], "label": labels[case["id"]]}
            if with_fields:
                row |= {k: case[k] for k in ("input", "output", "category")}
            rows.append(row)
    return write("labels.jsonl", "".join(json.dumps(r) + "\n" for r in rows))


LABELS = {f"q-{i:02d}": 1 + (i * 7) % 4 for i in range(1, 25)}


@pytest.fixture
def truthful(write):
    """A simulator that answers the human label (noise 0) for the labelled cases."""
    path = labelled(write, LABELS)
    with SimulatorServer(SimulatorConfig(truth_file=path)) as server:
        yield server, path


def calibrate(run_cli, server, *args):
    return run_cli(server, "calibrate", *args, "--json", "--quiet")


def judge_labels(run_cli, server, labels: Path, *extra: str, out: str = "cal"):
    """Calibrate by judging the labelled cases with the helpfulness rubric, into `out`."""
    return calibrate(run_cli, server, str(labels), "--rubric", "helpfulness", "--out", out, *extra)


def from_results(run_cli, labels: Path, out: str):
    """Calibrate the finished run in cal/ against `labels`, calling no judge, into `out`."""
    return calibrate(
        run_cli, None, "--results", "cal/results.jsonl", "--labels", str(labels), "--out", out
    )


def test_a_truthful_judge_agrees_perfectly_and_passes_the_gate(run_cli, truthful):
    server, labels = truthful
    run = judge_labels(run_cli, server, labels, "--min-kappa", "0.9")
    assert run.exit_code == 0, run.stderr
    s = run.summary
    assert (s["command"], s["n_labels"], s["accuracy"]) == ("calibrate", 24, 1.0)
    assert s["cohen_kappa"] == 1.0
    assert s["weighted_kappa"] == 1.0
    assert s["gate"]["metric"] == "weighted_kappa"
    assert len(server.requests) == 24
    assert sorted(p.name for p in Path("cal").iterdir()) == [
        "disagreements.jsonl",
        "report.html",
        "report.md",
        "results.jsonl",
        "results.junit.xml",
        "run.json",
        "summary.json",
    ]
    assert Path("cal/disagreements.jsonl").read_text() == ""


def test_a_noisy_judge_fails_the_gate_and_lists_its_disagreements(run_cli, write):
    labels = labelled(write, LABELS)
    with SimulatorServer(SimulatorConfig(truth_file=labels, noise=0.5, seed=3)) as server:
        run = judge_labels(run_cli, server, labels, "--min-kappa", "0.9")
    assert run.exit_code == 1, run.stderr
    s = run.summary
    assert 0.2 < s["accuracy"] < 0.8
    assert s["within_one"] == 1.0  # the noise moves a score by one point
    rows = [json.loads(x) for x in Path("cal/disagreements.jsonl").read_text().splitlines()]
    assert len(rows) == round((1 - s["accuracy"]) * 24)
    assert all(abs(r["human"] - r["judge"]) == 1 for r in rows)
    assert "FAIL" in run.stderr


def test_results_mode_measures_a_finished_run_without_calling_a_judge(run_cli, truthful):
    server, labels = truthful
    first = judge_labels(run_cli, server, labels)
    assert first.exit_code == 0, first.stderr
    calls = len(server.requests)
    again = from_results(run_cli, labels, "cal2")
    assert again.exit_code == 0, again.stderr
    assert len(server.requests) == calls
    for key in ("n_labels", "accuracy", "cohen_kappa", "weighted_kappa", "spearman"):
        assert again.summary[key] == first.summary[key]
    # The run's rubric is found through its run.json: the summary names it.
    assert again.summary["rubric"] == "helpfulness"


def rows_of(path: Path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}


@pytest.mark.parametrize("mode", ["judging", "results"])
def test_results_rows_carry_the_human_labels_and_whether_the_judge_agrees(run_cli, write, mode):
    labels = labelled(write, LABELS)
    with SimulatorServer(SimulatorConfig(truth_file=labels, noise=0.5, seed=3)) as server:
        run = judge_labels(run_cli, server, labels)
        assert run.exit_code == 0, run.stderr
        if mode == "results":
            run = from_results(run_cli, labels, "again")
            assert run.exit_code == 0, run.stderr
    rows = rows_of(Path("cal" if mode == "judging" else "again") / "results.jsonl")
    assert set(rows) == set(LABELS)
    disagreeing = set(rows_of(Path("cal/disagreements.jsonl")))
    for case_id, row in rows.items():
        assert row["human_labels"] == [LABELS[case_id]]
        assert row["agrees"] is (row["score"] == LABELS[case_id])
        assert row["agrees"] is (case_id not in disagreeing)
    assert 0 < sum(r["agrees"] for r in rows.values()) < len(rows)


def test_agrees_compares_with_the_majority_of_several_raters(run_cli, truthful, write):
    server, labels = truthful
    made = judge_labels(run_cli, server, labels)
    assert made.exit_code == 0, made.stderr
    judged = {k: v["score"] for k, v in rows_of(Path("cal/results.jsonl")).items()}
    other = {2.0: 3, 3.0: 2, 1.0: 2, 4.0: 3}
    rows = [
        {"id": "q-01", "label": judged["q-01"], "annotator": "a"},  # 2 of 3 with the judge
        {"id": "q-01", "label": judged["q-01"], "annotator": "b"},
        {"id": "q-01", "label": other[judged["q-01"]], "annotator": "c"},
        {"id": "q-02", "label": other[judged["q-02"]], "annotator": "a"},  # 2 of 3 against
        {"id": "q-02", "label": other[judged["q-02"]], "annotator": "b"},
        {"id": "q-02", "label": judged["q-02"], "annotator": "c"},
        {"id": "q-03", "label": judged["q-03"], "annotator": "a"},  # split 1-1: sides with a
        {"id": "q-03", "label": other[judged["q-03"]], "annotator": "b"},
    ]
    raters = write("raters.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    run = from_results(run_cli, raters, "raters")
    assert run.exit_code == 0, run.stderr
    got = rows_of(Path("raters/results.jsonl"))
    assert [got[i]["agrees"] for i in ("q-01", "q-02", "q-03")] == [True, False, True]
    assert len(got["q-02"]["human_labels"]) == 3
    assert "agrees" not in got["q-04"]  # no label: no verdict on agreement


def test_cases_can_come_from_a_dataset_joined_on_id(run_cli, truthful, write):
    server, _ = truthful
    bare = labelled(write, {"q-01": 4, "q-02": 4}, with_fields=False)
    run = judge_labels(run_cli, server, bare, "--cases", str(EXAMPLE))
    assert run.exit_code == 0, run.stderr
    assert run.summary["n_labels"] == 2
    assert len(server.requests) == 2


def test_stated_confidence_is_calibrated(run_cli, write):
    labels = labelled(write, LABELS)
    rubric = (
        (REPO / "rubrics" / "helpfulness.yaml")
        .read_text()
        .replace("feedback: true", "feedback: true\nconfidence: true")
    )
    write("confident.yaml", rubric)
    with SimulatorServer(SimulatorConfig(truth_file=labels, noise=0.3, seed=1)) as server:
        run = calibrate(run_cli, server, str(labels), "--rubric", "confident.yaml", "--out", "c")
    s = run.summary
    assert run.exit_code == 0, run.stderr
    assert s["n_confidence"] == 24
    assert 0 <= s["ece"] <= 1
    assert 0 <= s["brier"] <= 1
    assert sum(b["count"] for b in s["reliability"]) == 24


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        pytest.param(
            '{"id": "q-01", "label": 7}\n',
            "labels.jsonl:1: label 7 is not a number from 1 to 4",
            id="off-scale",
        ),
        pytest.param(
            '{"id": "q-01", "label": 2}\n{"id": "q-01", "label": 3}\n',
            "labels.jsonl:2: id 'q-01' is labelled twice",
            id="duplicate",
        ),
        pytest.param("{oops\n", "labels.jsonl:1: invalid JSON", id="bad-json"),
    ],
)
def test_bad_labels_exit_2_without_calling_the_judge(run_cli, judge_server, write, rows, message):
    path = write("labels.jsonl", rows)
    run = run_cli(
        judge_server,
        "calibrate",
        str(path),
        "--rubric",
        "helpfulness",
        "--cases",
        str(EXAMPLE),
        "--out",
        "cal",
    )
    assert run.exit_code == 2
    assert message in run.stderr
    assert judge_server.requests == []
    assert not Path("cal").exists()


def test_judging_without_a_rubric_is_a_usage_error(run_cli, write):
    path = write("labels.jsonl", '{"id": "q-01", "label": 2}\n')
    run = run_cli(None, "calibrate", str(path))
    assert run.exit_code == 2
    assert "judging needs --rubric" in run.stderr


def test_pairwise_labels_against_both_orders(run_cli, judge_server, write):
    old = REPO / "datasets" / "old.jsonl"
    new = REPO / "datasets" / "new.jsonl"
    rows = [{"id": f"p-{i:02d}", "label": "B" if i % 3 else "A"} for i in range(1, 11)]
    labels = write("pw-labels.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    run = calibrate(
        run_cli,
        judge_server,
        str(labels),
        "--rubric",
        "pairwise",
        "--old",
        str(old),
        "--new",
        str(new),
        "--label-map",
        "A=old,B=new",
        "--out",
        "cal",
    )
    assert run.exit_code == 0, run.stderr
    s = run.summary
    assert s["n_labels"] == 10
    assert set(s["by_order"]["openai/sim"]) == {"old-new", "new-old", "mean"}
    assert "agreement_without_ties" in s
    assert len(judge_server.requests) == 20


# Regression for issue 13 §4: labels of other cases crashed (--results) or gave an all-n/a
# report (judging). They are bad input: one line, exit 2, nothing called or written.
WRONG = '{"id": "zz-1", "label": 2}\n{"id": "zz-2", "label": 3}\n'
NO_MATCH = "none of the 2 labels match a case id of"
SAMPLES = "(labels: 'zz-1', 'zz-2'; cases: 'q-01', 'q-02', 'q-03', 'q-04', 'q-05' and 19 more)"


def assert_bad_input(run, *messages):
    assert run.exit_code == 2, run.stderr
    assert "Traceback" not in run.stderr
    error_lines = [x for x in run.stderr.splitlines() if x.startswith("error:")]
    assert len(error_lines) == 1, run.stderr
    for message in messages:
        assert message in error_lines[0]
    assert run.stdout == ""


def test_labels_of_other_cases_exit_2_in_results_mode(run_cli, truthful, write):
    server, labels = truthful
    made = judge_labels(run_cli, server, labels)
    assert made.exit_code == 0, made.stderr
    wrong = write("wrongids.jsonl", WRONG)
    before = set(Path().iterdir())
    run = run_cli(None, "calibrate", "--results", "cal/results.jsonl", "--labels", str(wrong))
    assert_bad_input(run, f"{wrong}: {NO_MATCH} cal/results.jsonl", SAMPLES)
    assert set(Path().iterdir()) == before
    assert not Path("runs").exists()


def test_labels_of_other_cases_exit_2_before_judging(run_cli, judge_server, write):
    wrong = write("wrongids.jsonl", WRONG)
    run = run_cli(
        judge_server,
        "calibrate",
        str(wrong),
        "--rubric",
        "helpfulness",
        "--cases",
        str(EXAMPLE),
        "--out",
        "cal",
    )
    assert_bad_input(run, NO_MATCH, SAMPLES)
    assert judge_server.requests == []
    assert not Path("cal").exists()


def test_pairwise_labels_of_other_cases_exit_2_before_judging(run_cli, judge_server, write):
    wrong = write("wrongids.jsonl", '{"id": "zz-1", "label": "new"}\n')
    run = run_cli(
        judge_server,
        "calibrate",
        str(wrong),
        "--rubric",
        "pairwise",
        "--old",
        str(REPO / "datasets" / "old.jsonl"),
        "--new",
        str(REPO / "datasets" / "new.jsonl"),
        "--out",
        "cal",
    )
    assert_bad_input(run, "none of the 1 labels match a case id", "'zz-1'", "'p-01'")
    assert judge_server.requests == []
    assert not Path("cal").exists()


# Regression for issue 13 §4: without --rubric, --results took any number as a label.
def test_off_scale_labels_exit_2_with_the_scale_of_the_run(run_cli, truthful, write):
    server, labels = truthful
    made = judge_labels(run_cli, server, labels)
    assert made.exit_code == 0, made.stderr
    off = write("off.jsonl", '{"id": "q-01", "label": 3}\n{"id": "q-02", "label": 7}\n')
    run = run_cli(
        None, "calibrate", "--results", "cal/results.jsonl", "--labels", str(off), "--out", "bad"
    )
    assert_bad_input(run, f"{off}:2: label 7 is not a number from 1 to 4")
    assert not Path("bad").exists()


def test_a_rubric_changed_since_the_run_is_not_used_to_judge_labels(run_cli, truthful, write):
    server, labels = truthful
    rubric = write("mine.yaml", (REPO / "rubrics" / "helpfulness.yaml").read_text())
    made = calibrate(run_cli, server, str(labels), "--rubric", str(rubric), "--out", "cal")
    assert made.exit_code == 0, made.stderr
    rubric.write_text(rubric.read_text().replace("description:", "description: (v2)", 1))
    run = from_results(run_cli, labels, "later")
    assert run.exit_code == 0, run.stderr
    assert any("has changed since the run" in w for w in run.summary["warnings"])
