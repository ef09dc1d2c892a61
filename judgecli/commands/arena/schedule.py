"""Which comparisons an arena judges: every pair of systems on every case (round robin),
every system against one baseline, or an adaptive schedule that spends a budget where the
leaderboard is least sure.

A comparison is two systems on one case, judged like a `judge pairwise` case (both orders
unless --no-flip). Its id — `<case id>::<first system>::<second system>`, the earlier
file's system first — keys results.jsonl, the reply cache and --resume.

The adaptive schedule, deterministic for a given --seed and the same verdicts:

1. The cases are shuffled once (seeded); a pair of systems always takes its next cases in
   that order, skipping those it was compared on and those already compared by
   --max-pairs-per-case pairs.
2. Warm-up: a round robin on the first ⌊budget / (4 × pairs)⌋ cases (at least 1): a
   quarter of the budget, every pair of systems compared.
3. Then rounds of ⌈budget / 8⌉ comparisons (at least one per pair): the scores are fitted
   to what the earlier rounds decided, and the third of the pairs whose order is least
   certain — whose fitted win probability p is fewest binomial standard errors from ½
   over the n comparisons they had, 2·|p − ½|·√(n + 1): the pairs whose score intervals
   overlap most — share the round equally (pairs with no case left pass their share on,
   in order). A pair one system swept has p near 0 or 1 and waits; a close pair, or one
   hardly compared, goes first.
4. It stops when --budget comparisons are planned, or no pair has a case left.

Each round's plan is made from the verdicts on the earlier rounds' comparisons only, so a
resumed run plans the same rounds again and judges only what is missing.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import combinations

from judgecli.commands.arena.systems import ArenaFiles, SystemPair
from judgecli.errors import ConfigError
from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.stats.bradley_terry import Comparisons, components, fit_bradley_terry

ADAPTIVE_FROM = 5
"""Systems from which the default schedule is adaptive (a round robin grows as n²)."""
WARMUP_SHARE = 4
"""The warm-up spends 1/4 of the budget."""
ROUND_SHARE = 8
"""Each later round spends 1/8 of the budget."""
FOCUS_SHARE = 3
"""Each later round goes to the 1/3 of the pairs whose order is least certain."""
SEPARATOR = "::"


class Schedule(StrEnum):
    """How the comparisons are chosen."""

    ROUND_ROBIN = "round-robin"
    BASELINE = "baseline"
    ADAPTIVE = "adaptive"


@dataclass(frozen=True)
class Matchup:
    """One comparison to judge: two systems on one case."""

    id: str
    case_id: str
    systems: SystemPair


def system_pairs(kind: Schedule, n: int, baseline: int | None) -> list[SystemPair]:
    """The pairs of systems a schedule may compare, in a fixed order."""
    if kind is Schedule.BASELINE:
        assert baseline is not None
        return [(min(baseline, i), max(baseline, i)) for i in range(n) if i != baseline]
    return list(combinations(range(n), 2))


def matchup(files: ArenaFiles, systems: SystemPair, case_id: str) -> Matchup:
    """The comparison of two systems on a case, with its id."""
    a, b = (files.names[i] for i in systems)
    return Matchup(f"{case_id}{SEPARATOR}{a}{SEPARATOR}{b}", case_id, systems)


def check_linked(files: ArenaFiles, planned: Sequence[Matchup]) -> None:
    """ConfigError (exit 2, nothing called) when the planned comparisons cannot link every
    system into one leaderboard, or two comparisons would share an id.
    """
    if len({m.id for m in planned}) < len(planned):
        raise ConfigError(
            f"two comparisons would have the same id (case ids or system names containing "
            f"{SEPARATOR!r})",
            hint="rename the systems with --name",
        )
    linked = Comparisons.of(
        [m.systems[0] for m in planned],
        [m.systems[1] for m in planned],
        [0.5] * len(planned),
        n_systems=len(files.names),
    )
    groups = components(linked)
    if len(groups) > 1:
        shown = " | ".join(", ".join(files.names[i] for i in g) for g in groups)
        raise ConfigError(
            f"the comparisons this schedule can make do not link every system ({shown}): "
            "their scores would not be on one scale",
            hint="the files share too few ids; drop --limit/--sample, or join files that "
            "answer the same cases",
        )


@dataclass(frozen=True)
class Planner:
    """Plans an arena's comparisons, round by round (one round unless adaptive)."""

    files: ArenaFiles
    kind: Schedule
    baseline: int | None = None
    budget: int | None = None
    """Adaptive: the most comparisons planned in all."""
    max_pairs_per_case: int | None = None
    """Adaptive: the most pairs of systems compared on one case."""
    seed: int = 0

    @property
    def pairs(self) -> list[SystemPair]:
        """The pairs of systems the schedule may compare."""
        return system_pairs(self.kind, len(self.files.names), self.baseline)

    @property
    def available(self) -> int:
        """Comparisons the joined files allow for these pairs."""
        return sum(len(self.files.located[p]) for p in self.pairs)

    @property
    def capacity(self) -> int:
        """The most comparisons the run plans: all available, or the adaptive budget."""
        if self.kind is Schedule.ADAPTIVE:
            return min(self.available, self.planned_budget)
        return self.available

    @property
    def planned_budget(self) -> int:
        """--budget, else half the comparisons a round robin would make."""
        return self.budget if self.budget is not None else math.ceil(self.available / 2)

    @property
    def warmup_cases(self) -> int:
        """Cases of the adaptive warm-up round robin."""
        return max(1, self.planned_budget // (WARMUP_SHARE * len(self.pairs)))

    def order(self) -> list[str]:
        """The cases in the seeded order the adaptive schedule takes them."""
        cases = list(self.files.case_ids)
        random.Random(f"arena:{self.seed}").shuffle(cases)
        return cases

    def first_round(self) -> list[Matchup]:
        """A fixed schedule's every comparison, case by case; adaptive: the warm-up."""
        if self.kind is not Schedule.ADAPTIVE:
            planned = [
                matchup(self.files, pair, case_id)
                for case_id in self.files.case_ids
                for pair in self.pairs
                if case_id in self.files.located[pair]
            ]
        else:
            planned = self.take(
                [(pair, self.warmup_cases) for pair in self.pairs], [], self.capacity
            )
        check_linked(self.files, planned)
        return planned

    def next_round(
        self, planned: Sequence[Matchup], results: Sequence[CaseResult]
    ) -> list[Matchup]:
        """Adaptive: the next round from the verdicts on `planned` (its results); [] when
        the budget is spent, no case is left, or the schedule is fixed.
        """
        left = self.capacity - len(planned)
        if self.kind is not Schedule.ADAPTIVE or left <= 0:
            return []
        size = min(left, max(len(self.pairs), math.ceil(self.planned_budget / ROUND_SHARE)))
        ranked = self.least_certain(planned, results)
        focus = max(1, math.ceil(len(ranked) / FOCUS_SHARE))
        share = math.ceil(size / focus)
        return self.take([(pair, share) for pair in ranked], planned, size)

    def take(
        self, wants: Sequence[tuple[SystemPair, int]], planned: Sequence[Matchup], size: int
    ) -> list[Matchup]:
        """Up to `size` new comparisons: each pair in turn takes up to its share of its
        next cases; what a pair could not take goes to the pairs after it.
        """
        done = {(m.systems, m.case_id) for m in planned}
        per_case: dict[str, int] = {}
        for m in planned:
            per_case[m.case_id] = per_case.get(m.case_id, 0) + 1
        cap = self.max_pairs_per_case or len(self.pairs)
        order = self.order()
        chosen: list[Matchup] = []
        owed = 0
        for pair, share in wants:
            quota, owed = share + owed, 0
            for case_id in order:
                if quota == 0 or len(chosen) == size:
                    break
                free = (pair, case_id) not in done and per_case.get(case_id, 0) < cap
                if free and case_id in self.files.located[pair]:
                    chosen.append(matchup(self.files, pair, case_id))
                    done.add((pair, case_id))
                    per_case[case_id] = per_case.get(case_id, 0) + 1
                    quota -= 1
            owed = quota
        return chosen

    def least_certain(
        self, planned: Sequence[Matchup], results: Sequence[CaseResult]
    ) -> list[SystemPair]:
        """The pairs of systems, the least certain order first (ties: the schedule's pair
        order). A pair's certainty is how many binomial standard errors its fitted win
        probability is from ½ over the comparisons it has had, 2·|p − ½|·√(n + 1): near
        0 when the two scores are close (their intervals overlap most) or the pair was
        hardly compared.
        """
        by_id = {m.id: m for m in planned}
        outcome = {Winner.OLD: 1.0, Winner.TIE: 0.5, Winner.NEW: 0.0}
        decided = [
            (by_id[r.id].systems, outcome[r.winner])
            for r in results
            if r.id in by_id and r.status is CaseStatus.OK and r.winner is not None
        ]
        fit = fit_bradley_terry(
            Comparisons.of(
                [s[0] for s, _ in decided],
                [s[1] for s, _ in decided],
                [y for _, y in decided],
                n_systems=len(self.files.names),
            )
        )
        met = Counter(s for s, _ in decided)

        def certainty(pair: SystemPair) -> float:
            p = 1 / (1 + math.exp(fit.strengths[pair[1]] - fit.strengths[pair[0]]))
            return 2 * abs(p - 0.5) * math.sqrt(met[pair] + 1)

        pairs = self.pairs
        return sorted(pairs, key=lambda p: (certainty(p), pairs.index(p)))


@dataclass
class Plan:
    """An arena's schedule as its run goes (the spine's `job.Rounds`): the comparisons
    planned so far, and in how many rounds. It grows as the spine asks for each next round;
    the arena's ending reads what it planned (summary.json's `schedule`, the reports).
    """

    planner: Planner
    planned: list[Matchup] = field(default_factory=list)
    rounds: int = 0
    """Rounds planned that have comparisons (one unless adaptive)."""

    @classmethod
    def begun(cls, planner: Planner) -> Plan:
        """A plan with its first round planned (ConfigError when its comparisons cannot
        link every system).
        """
        plan = cls(planner)
        plan.add(planner.first_round())
        return plan

    def next_round(self, results: list[CaseResult]) -> list[Matchup]:
        """The next round, from the results of the comparisons planned so far (in id
        order), added to the plan; [] when the schedule is done.
        """
        return self.add(self.planner.next_round(self.planned, results))

    def add(self, batch: list[Matchup]) -> list[Matchup]:
        """A round's comparisons, now planned (an empty one is no round)."""
        if batch:
            self.planned += batch
            self.rounds += 1
        return batch
