"""The spine's ending and rounds (running/job.py, running/conclusion.py): a command with a
summary of its own concludes through `conclude` (its numbers, rule, gate and reports; the
spine's tail, files and order), the --max-failures rule is one `Shortfall`, and an adaptive
job is judged round by round until its schedule is done or too many of it failed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pydantic import Field

from judgecli.result import CaseResult, CaseStatus
from judgecli.running.conclusion import Reports, Shortfall, incomplete_reason
from judgecli.running.job import conclude, judge_rounds
from judgecli.running.judging import Judged
from judgecli.settings.config import DEFAULT_MAX_FAILURES, FailureLimit, RunConfig
from judgecli.settings.judges import ModelSettings
from judgecli.store import JUNIT, REPORT_HTML, REPORT_MD, RESULTS, SUMMARY, RunStore
from judgecli.summary.facts import FailedCase, Usage
from judgecli.summary.parts import Part, Record
from judgecli.summary.score import ScoreSummary


def result(case_id: str, ok: bool = True) -> CaseResult:
    status = CaseStatus.OK if ok else CaseStatus.FAILED
    error = None if ok else "HTTP 500"
    return CaseResult(id=case_id, status=status, error=error, rubric_hash="h")


class Mark(Record):
    passed: bool


class Tally(Part):
    """A sixth command's summary: not a RunSummary."""

    command: str = "tally"
    n_cases: int
    n_failed: int
    usage: Usage = Field(default_factory=Usage)
    warnings: list[str] = Field(default_factory=list)
    gate: Mark | None = None
    incomplete: str | None = None


@dataclass
class TallyEnding:
    """A sixth command's way to conclude (a `Concluding` of Tally): its own rule's words,
    its own gate and its own reports; a file of its own.
    """

    bar: int
    summarized: list[str] = field(default_factory=list)

    def summarize(self, results: list[CaseResult]) -> Tally:
        self.summarized = [r.id for r in results]
        failed = sum(r.status is CaseStatus.FAILED for r in results)
        return Tally(n_cases=len(results), n_failed=failed)

    def warnings_of(self, summary: Tally) -> list[str]:
        return [f"{summary.n_cases} tallied"]

    def incomplete(self, summary: Tally, limit: FailureLimit, total: int | None) -> str | None:
        short = Shortfall.of(summary.n_failed, summary.n_cases, limit, total)
        return short.failed_words("tallies") if short.too_many_failed else None

    def verdict(self, summary: Tally) -> Mark:
        return Mark(passed=summary.n_cases - summary.n_failed >= self.bar)

    def own_files(self, store: RunStore, results: list[CaseResult]) -> list[CaseResult]:
        store.write_text("tally.txt", str(len(results)))
        return results[:1]

    def reports(self, summary: Tally, results: list[CaseResult]) -> Reports:
        shown = ",".join(r.id for r in results)
        return Reports(markdown=f"# {summary.n_cases} ({shown})", html="<p>", junit="<x/>")


def run_dir(tmp_path: Path) -> Path:
    path = tmp_path / "run"
    path.mkdir()
    return path


def test_a_command_with_a_summary_of_its_own_concludes_through_the_spine(tmp_path):
    # Issue 30: the arena concluded by itself; now any Concluding ends through conclude.
    step = tmp_path / "step.md"
    ending = TallyEnding(bar=2)
    outcome = conclude(
        run_dir(tmp_path),
        [result("b"), result("a"), result("c")],
        ending,
        warnings=["before"],
        judged=(DEFAULT_MAX_FAILURES, 3),
        step_summary=step,
    )
    assert ending.summarized == ["a", "b", "c"]  # in id order
    written = json.loads((outcome.run_dir / SUMMARY).read_text())
    assert written == {
        "command": "tally",
        "n_cases": 3,
        "n_failed": 0,
        "usage": Usage().model_dump(mode="json", exclude_none=True),
        "warnings": ["before", "3 tallied"],
        "gate": {"passed": True},
    }
    assert outcome.summary.gate == Mark(passed=True)
    assert (outcome.run_dir / "tally.txt").read_text() == "3"
    # The reports show what its own files said to show, and report.md reaches CI.
    assert (outcome.run_dir / REPORT_MD).read_text() == "# 3 (b)"
    assert step.read_text().startswith("# 3 (b)")
    assert (outcome.run_dir / REPORT_HTML).read_text() == "<p>"
    assert (outcome.run_dir / JUNIT).read_text() == "<x/>"


def test_a_run_its_rule_calls_incomplete_gets_no_gate_and_neither_does_an_ungated_one(tmp_path):
    failed = conclude(
        run_dir(tmp_path),
        [result("a"), result("b", ok=False)],
        TallyEnding(bar=0),
        judged=(FailureLimit(count=0), 2),
    )
    assert failed.summary.incomplete == (
        "the judge could not grade 1 of 2 tallies (--max-failures 0 allows 0 of 2)"
    )
    assert failed.summary.gate is None
    shard = conclude(tmp_path, [result("a")], TallyEnding(bar=0), gated=False)
    assert (shard.summary.incomplete, shard.summary.gate) == (None, None)


class Broken(TallyEnding):
    def reports(self, summary: Tally, results: list[CaseResult]) -> Reports:
        raise RuntimeError("a renderer broke")


def test_summary_json_is_written_after_the_reports(tmp_path):
    # docs/contract.md: summary.json is written last, so its presence says the run finished.
    # (The spine wrote it before the reports; the arena after them.)
    folder = run_dir(tmp_path)
    with pytest.raises(RuntimeError):
        conclude(folder, [result("a")], Broken(bar=0))
    assert not (folder / SUMMARY).exists()


def test_the_shortfall_is_measured_against_the_plan_or_what_was_judged():
    short = Shortfall.of(failed=2, judged=15, limit=FailureLimit(share=0.1), total=20)
    assert (short.planned, short.allowed, short.not_judged) == (20, 2, 5)
    assert not short.too_many_failed
    assert short.stopped_words("cases") == "stopped early, 5 cases not judged"
    # No plan given, or one smaller than what was judged: the judged items are the plan.
    assert Shortfall.of(1, 15, FailureLimit(count=0), None).planned == 15
    assert Shortfall.of(1, 15, FailureLimit(count=0), 10).planned == 15
    assert Shortfall.of(1, 15, FailureLimit(count=0), 10).too_many_failed


def test_a_run_summary_that_stopped_early_names_its_failures_against_the_plan():
    summary = ScoreSummary.model_construct(
        n_cases=8, n_failed=1, failures=[FailedCase(id="q-3", error="timeout")]
    )
    assert incomplete_reason(summary, FailureLimit(share=0.1), total=10) == (
        "the judge could not grade 1 of 8 cases (--max-failures 10% allows 1 of 10); "
        "stopped early, 2 cases not judged; e.g. q-3: timeout"
    )
    assert incomplete_reason(summary, FailureLimit(count=1), total=8) is None


@dataclass(frozen=True)
class Item:
    id: str


@dataclass
class Pairs:
    """A schedule that plans two more items per round from a queue, and records what it
    saw of the results when it planned.
    """

    queue: list[str]
    planned: list[Item] = field(default_factory=list)
    saw: list[list[str]] = field(default_factory=list)

    def next_round(self, results: list[CaseResult]) -> list[Item]:
        self.saw.append([r.id for r in results])
        batch = [Item(i) for i in self.queue[:2]]
        del self.queue[:2]
        self.planned += batch
        return batch


def config(**settings) -> RunConfig:
    return RunConfig(
        command="arena", models=[ModelSettings(name="openai/m")], out=Path("x"), **settings
    )


class Judging:
    """A stand-in for judge_all: appends a result line per item to the run's results."""

    def __init__(self, folder: Path, failing: set[str] = frozenset()) -> None:
        self.folder, self.failing = folder, failing
        self.rounds: list[tuple[RunConfig, list[str]]] = []

    def __call__(self, config: RunConfig, items) -> Judged:
        ids = [item.id for item in items]
        self.rounds.append((config, ids))
        with (self.folder / RESULTS).open("a", encoding="utf-8") as lines:
            for i in ids:
                lines.write(result(i, ok=i not in self.failing).model_dump_json() + "\n")
        return Judged(run_dir=self.folder, warnings=[f"after round {len(self.rounds)}"])


def test_an_adaptive_job_is_judged_round_by_round_until_its_schedule_is_done(tmp_path):
    folder = run_dir(tmp_path)
    # A line of an item this session's schedule did not plan (an earlier session's).
    (folder / RESULTS).write_text(result("stale").model_dump_json() + "\n")
    schedule = Pairs(queue=["d", "c", "f", "e"], planned=[Item("b"), Item("a")])
    judge = Judging(folder)
    first = judge(config(), schedule.planned)
    judged, results = judge_rounds(schedule, first, judge, config(), total=6)
    assert [ids for _, ids in judge.rounds] == [["b", "a"], ["d", "c"], ["f", "e"]]
    # Each round is planned from the results of what was planned before it, in id order.
    assert schedule.saw == [["a", "b"], ["a", "b", "c", "d"], list("abcdef")]
    assert [r.id for r in results] == list("abcdef")
    assert judged.warnings == ["after round 3"]
    # Each later round reopens the run the first one opened.
    for later, _ in judge.rounds[1:]:
        assert (later.out, later.resume, later.force, later.retry_failed) == (
            folder,
            True,
            False,
            False,
        )


def test_an_adaptive_job_plans_no_more_once_more_failed_than_max_failures_allows(tmp_path):
    folder = run_dir(tmp_path)
    schedule = Pairs(queue=["c", "d"], planned=[Item("a"), Item("b")])
    judge = Judging(folder, failing={"a"})
    first = judge(config(max_failures=FailureLimit(count=0)), schedule.planned)
    judged, results = judge_rounds(
        schedule, first, judge, config(max_failures=FailureLimit(count=0)), total=4
    )
    assert schedule.saw == []  # never asked for another round
    assert [r.id for r in results] == ["a", "b"]
    assert len(judge.rounds) == 1
    # One failure of four is what 25% allows: the schedule goes on.
    schedule = Pairs(queue=["c", "d"], planned=[Item("a"), Item("b")])
    folder = tmp_path / "again"
    folder.mkdir()
    judge = Judging(folder, failing={"a"})
    first = judge(config(), schedule.planned)
    judge_rounds(schedule, first, judge, config(max_failures=FailureLimit(share=0.25)), total=4)
    assert len(judge.rounds) == 2
