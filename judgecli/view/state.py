"""What every request of the viewer reads: the served runs, the tokens, the seed of the
blind orders; and the lookups a page and its API share (a run by name, a case by id, the
labelling scheme, the labels, the plan), each failing as a `NotServed` or `BadRequest` that
the server answers with one clear line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from judgecli.deciding.label_plan import LabelPlan, LabelStrategy
from judgecli.errors import InputError
from judgecli.result import CaseResult
from judgecli.store.labels import blind_salt, latest_labels
from judgecli.view.labelling import DEFAULT_BUDGET, Scheme, new_slot, plan_for, scheme_of
from judgecli.view.runs import RunEntry, ServedRuns
from judgecli.view.security import Tokens

DEFAULT_STRATEGY = LabelStrategy.UNCERTAINTY.value


class NotServed(InputError):
    """A run or case no served run has (404)."""


class Unreadable(InputError):
    """A served run this judge cannot show: not finished, or written in a form it cannot
    read (409).
    """


class BadRequest(InputError):
    """A request the viewer cannot act on: a bad label, rater, filter or budget (400)."""


@dataclass
class ViewState:
    """The server's state: what it serves and how it guards it."""

    runs: ServedRuns
    tokens: Tokens
    seed: int = 0
    salts: dict[str, str] = field(default_factory=dict)

    def entry(self, name: str) -> RunEntry:
        """The served run of that name, readable (NotServed / InputError saying why not)."""
        entry = self.runs.entry(name)
        if entry is None:
            raise NotServed(f"no run named {name!r} is served", hint="see the list of runs at /")
        if entry.summary is None:
            raise Unreadable(f"run {name}: {entry.problem}")
        return entry

    def results(self, entry: RunEntry) -> list[CaseResult]:
        """The run's results in id order (Unreadable naming file:line for a line this judge
        cannot read).
        """
        try:
            return self.runs.results(entry)
        except InputError as err:
            raise Unreadable(f"run {entry.name}: {err.message}", hint=err.hint) from None

    def case(self, entry: RunEntry, case_id: str) -> CaseResult:
        """One case of the run (NotServed when it has none of that id)."""
        for r in self.results(entry):
            if r.id == case_id:
                return r
        raise NotServed(f"run {entry.name} has no case {case_id!r}")

    def scheme(self, entry: RunEntry) -> Scheme:
        """How the run's cases are labelled."""
        return scheme_of(entry, self.results(entry))

    def labels(self, entry: RunEntry) -> dict[str, dict[str, dict[str, Any]]]:
        """Each rater's standing labels of the run, by case id (Unreadable, naming
        file:line, for a label file with a line that is not a label).
        """
        try:
            return latest_labels(entry.path)
        except InputError as err:
            raise Unreadable(f"run {entry.name}: {err.message}", hint=err.hint) from None

    def slot(self, entry: RunEntry, rater: str, case_id: str) -> str:
        """Where NEW's answer sits for this rater on this case (A or B)."""
        key = str(entry.path.resolve())
        if key not in self.salts:
            self.salts[key] = blind_salt(entry.path)
        return new_slot(self.salts[key], self.seed, rater, case_id)

    def plan(self, entry: RunEntry, strategy: str | None, budget: Any) -> LabelPlan:
        """The labelling plan a page or script asked for (BadRequest for a bad budget or
        strategy).
        """
        try:
            size = int(budget) if budget not in (None, "") else DEFAULT_BUDGET
        except (TypeError, ValueError):
            raise BadRequest(f"budget {budget!r} is not a whole number") from None
        if size < 1:
            raise BadRequest(f"budget {size}: a plan needs at least one label")
        try:
            return plan_for(entry, strategy or DEFAULT_STRATEGY, size, self.seed)
        except InputError as err:
            raise BadRequest(err.message, hint=err.hint) from None
