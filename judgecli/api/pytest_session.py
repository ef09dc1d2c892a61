"""The pytest session as the plugin keeps it (`Ledger`): its judged cases, the test running
now, what kept the judge from being made, and the gate it was asked for (`GateAsked`).

Imported at pytest's start-up with the plugin (`pytest_plugin`), so it imports only pytest
and the standard library.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from judgecli.api.pytest_cases import JudgedCase

UNGRADED = "judge_could_not_grade"
"""The attribute that marks an error of a judge that could not grade or be used (set by
`pytest_judge.RecordingJudge`), and the report of the test it stopped."""


@dataclass(frozen=True)
class GateAsked:
    """The session's thresholds (None: not checked), what they compare, and whether a
    failed verdict fails its own test too.
    """

    min_pass_rate: float | None = None
    min_mean: float | None = None
    min_win_rate: float | None = None
    on: str = "point"
    per_test: bool = False

    @property
    def given(self) -> bool:
        """Whether any threshold was given."""
        return any(v is not None for v in (self.min_pass_rate, self.min_mean, self.min_win_rate))


class Ledger:
    """The session's judged cases, the test running now, and what kept a judge from being
    made (pooled on xdist's controller from every worker).
    """

    def __init__(self, gate: GateAsked) -> None:
        self.gate = gate
        self.cases: list[JudgedCase] = []
        self.unmade: list[str] = []
        """Why the judge could not be made, once per reason (`error: ...` / `hint: ...`)."""
        self.lost: list[str] = []
        """xdist workers that went down without sending their cases."""
        self._item: pytest.Item | None = None
        self._by_test: dict[str, list[JudgedCase]] = defaultdict(list)
        self._lock = threading.Lock()

    @contextmanager
    def running_test(self, item: pytest.Item) -> Iterator[None]:
        """While `item`'s setup, call and teardown run, its judged calls are its own."""
        self._item = item
        try:
            yield
        finally:
            self._item = None

    def unusable(self, said: str) -> None:
        """Note why the judge cannot be made or used (`error: ...` / `hint: ...`), once."""
        with self._lock:
            if said not in self.unmade:
                self.unmade.append(said)

    def running(self) -> pytest.Item | None:
        """The test whose setup, call or teardown runs now."""
        return self._item

    def add(self, item: pytest.Item | None, case: JudgedCase) -> None:
        """Record a judged call of `item`, and show it in its JUnit properties."""
        with self._lock:
            self.cases.append(case)
            self._by_test[case.test].append(case)
        if item is not None:
            item.user_properties.extend(case.properties())

    def of(self, item: pytest.Item) -> list[JudgedCase]:
        """The judged calls `item` made so far."""
        with self._lock:
            return list(self._by_test.get(item.nodeid, ()))

    def export(self) -> dict[str, Any]:
        """What a worker sends to the controller (plain types, for execnet)."""
        return {"cases": [c.as_dict() for c in self.cases], "unmade": self.unmade}

    def pool(self, exported: dict[str, Any]) -> None:
        """Add what a worker sent."""
        from judgecli.api.pytest_cases import JudgedCase

        for data in exported.get("cases", ()):
            self.add(None, JudgedCase.from_dict(data))
        for said in exported.get("unmade", ()):
            self.unusable(said)

    @property
    def judged(self) -> bool:
        """Whether the session is the judge's business: a judged call, a judge that could
        not be made, or a gate asked for. A lost xdist worker alone is not: a project that
        never asks for the judge keeps pytest's own verdict on a crash.
        """
        return bool(self.cases or self.unmade or self.gate.given)
