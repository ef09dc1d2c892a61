"""What `job.conclude` asks of a command, so that every judging command ends through it:
the numbers of its results, the warnings they give, whether they are enough to stand for a
verdict, the gate's verdict on them, its own files and its reports (`Concluding`). The
four commands whose summary is a `RunSummary` share one answer (`job.Ending`); a command
with a summary of its own (the arena's) gives its own, and the spine does the rest alike:
the --max-failures rule (`Shortfall`), the tail of the summary, summary.json (written last:
its presence says the run finished, docs/contract.md), report.md, report.html,
results.junit.xml and the CI step summary (`Reports`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Self, TypeVar

from judgecli.report.markdown import render_markdown
from judgecli.result import CaseResult
from judgecli.settings.config import FailureLimit
from judgecli.store import JUNIT, REPORT_HTML, REPORT_MD, RunStore
from judgecli.store.step_summary import append_step_summary
from judgecli.summary.facts import FailedCase, Usage
from judgecli.summary.parts import Record
from judgecli.summary.run import RunSummary


class Summary(Protocol):
    """What the spine reads off any command's summary (a pydantic model): its case count,
    its usage, and a copy with the tail's keys set.
    """

    n_cases: int
    usage: Usage

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """The summary with `update`'s keys replaced (pydantic's)."""
        ...

    def model_dump(self, *, mode: str = "python", exclude_none: bool = False) -> dict[str, Any]:
        """The summary as a dict (pydantic's): summary.json is its JSON mode, None left out."""
        ...


S = TypeVar("S", bound=Summary)


@dataclass(frozen=True)
class Reports:
    """A finished run's reports, rendered: report.md, report.html, results.junit.xml."""

    markdown: str
    html: str
    junit: str

    def write(self, run_dir: Path, *, step_summary: Path | None = None) -> Path:
        """Write them into the run directory (and report.md to a CI step summary); the
        HTML report's path.
        """
        store = RunStore(run_dir)
        store.write_text(REPORT_MD, self.markdown)
        if step_summary is not None:
            append_step_summary(step_summary, self.markdown)
        store.write_text(JUNIT, self.junit)
        return store.write_text(REPORT_HTML, self.html)


class Concluding(Protocol[S]):
    """How a command's run ends: what `job.conclude` asks of it. `job.Ending` is the answer
    of the commands whose summary is a RunSummary; the arena's is `commands.arena.ending`.
    """

    def summarize(self, results: list[CaseResult]) -> S:
        """The command's numbers, from every result of the run in id order (the summary's
        tail is the spine's).
        """
        ...

    def warnings_of(self, summary: S) -> list[str]:
        """Warnings the numbers give (calibrate: labels without a verdict)."""
        ...

    def incomplete(self, summary: S, limit: FailureLimit, total: int | None) -> str | None:
        """Why the numbers cannot stand for a verdict (`Shortfall`, in the command's words),
        or None; `total`: the items the run planned (None: those in the summary).
        """
        ...

    def verdict(self, summary: S) -> Record | None:
        """The gate's verdict on complete numbers (None: no gate was asked for)."""
        ...

    def own_files(self, store: RunStore, results: list[CaseResult]) -> list[CaseResult]:
        """Write the command's own files (refine: answers.jsonl); the results the reports
        show.
        """
        ...

    def reports(self, summary: S, results: Sequence[CaseResult]) -> Reports:
        """The run's reports, from its finished summary and the results they show."""
        ...


@dataclass(frozen=True)
class Shortfall:
    """How far a run's judged items fall from what --max-failures asks of its plan: more
    failed than it allows of the planned items, or fewer judged than planned (a stop). The
    one rule of every command; `words` says it in the command's unit (cases, comparisons).
    """

    failed: int
    judged: int
    planned: int
    limit: FailureLimit

    @classmethod
    def of(cls, failed: int, judged: int, limit: FailureLimit, total: int | None) -> Shortfall:
        """The shortfall of `judged` items, `failed` of them, against the `total` the run
        planned (None, or fewer: the judged ones).
        """
        return cls(failed, judged, max(total or 0, judged), limit)

    @property
    def allowed(self) -> int:
        """The most failures --max-failures allows of the planned items."""
        return self.limit.allowed(self.planned)

    @property
    def too_many_failed(self) -> bool:
        """More failed than --max-failures allows."""
        return self.failed > self.allowed

    @property
    def not_judged(self) -> int:
        """Planned items the run did not judge."""
        return self.planned - self.judged

    def failed_words(self, unit: str) -> str:
        """The failures against the limit, e.g. "the judge could not grade 3 of 20 cases
        (--max-failures 5% allows 1 of 20)".
        """
        return (
            f"the judge could not grade {self.failed} of {self.judged} {unit} "
            f"(--max-failures {self.limit} allows {self.allowed} of {self.planned})"
        )

    def stopped_words(self, unit: str) -> str:
        """The items a stop left, e.g. "stopped early, 4 cases not judged"."""
        return f"stopped early, {self.not_judged} {unit} not judged"


def first_failure(failures: Sequence[FailedCase]) -> str:
    """The first failure as an example, e.g. "e.g. q-3: openai/sim: timeout"."""
    return f"e.g. {failures[0].id}: {failures[0].error}"


def incomplete_reason(
    summary: RunSummary, limit: FailureLimit, *, total: int | None = None
) -> str | None:
    """Why a run's numbers cannot stand for a verdict, or None: more cases failed than
    `limit` allows of the run's `total` cases (default: those in the summary), or the run
    stopped before judging them all. A run the judge could not grade is never a pass, and
    never a regression.
    """
    short = Shortfall.of(summary.n_failed, summary.n_cases, limit, total)
    if not short.too_many_failed and not short.not_judged:
        return None
    reason = short.failed_words("cases")
    if short.not_judged:
        reason += "; " + short.stopped_words("cases")
    if summary.failures:
        reason += "; " + first_failure(summary.failures)
    return reason


def run_reports(summary: RunSummary, results: Sequence[CaseResult]) -> Reports:
    """The reports of a score, pairwise, calibrate or refine run."""
    # The HTML report (with its charts) and JUnit load only when a run is concluded.
    from judgecli.report.html import render_html
    from judgecli.report.junit import render_junit

    return Reports(
        markdown=render_markdown(summary, results),
        html=render_html(summary, results),
        junit=render_junit(summary, results),
    )
