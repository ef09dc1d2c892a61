"""The position-consistency floor: below it a judge's pairwise verdicts decide no gate.

Each pair is judged in both orders; a judge that can tell the answers apart names the same
answer whichever slot it sits in. One that answers "A" whatever the order gives 0%
position consistency and nothing but ties, and a gate reading those ties as "NEW is not
better" would fail (exit 1) on evidence there is none of. Below the floor
(`--min-consistency`, default 0.5: the share of pairs whose two orders agree, point
estimate, over the pairs with both orders judged) the run warns with the number and what to
do, and its gate is undecided (exit 3). A panel stands while one of its judges is at or
above the floor (each judge's consistency is in the summary's `judges`); the judges below it
are named in a warning. A run judged in one order (--no-flip) measures no consistency, and
the floor does not apply to it. `--min-consistency 0` turns the floor off.
"""

from __future__ import annotations

from judgecli.deciding.undecided import Undecided
from judgecli.summary.gate_records import (
    ConsistencyFloor,
    GateCheck,
    GateMetric,
    GateOn,
    GateResult,
)
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.run import RunSummary

DEFAULT_FLOOR = 0.5
"""--min-consistency when not given."""

BETTER_JUDGE = "use a stronger judge, or a rubric that asks for its reasoning before the verdict"
FLOOR_OFF = "--min-consistency 0 turns the floor off"
WHAT_TO_DO = (
    f"{BETTER_JUDGE}; first_position_rate in summary.json says which position it picks "
    f"({FLOOR_OFF})"
)
"""What to do below the floor, for a pairwise run."""
ARENA_TO_DO = f"{BETTER_JUDGE} ({FLOOR_OFF})"
"""The same for an arena (whose summary has no first_position_rate)."""


def pct(value: float | None) -> str:
    """A share as a percentage, without a trailing .0 (0%, 50%, 83.3%)."""
    if value is None:
        return "n/a"
    return f"{value:.1%}".replace(".0%", "%")


def floor_of(
    consistency: float | None,
    threshold: float,
    *,
    judges: dict[str, float | None] | None = None,
) -> ConsistencyFloor:
    """The floor against a run's consistency; with `judges` (a panel), against each judge's
    own: met while one judge is at or above it. A consistency of None (no pair with both
    orders judged) does not meet it: nothing shows the judge can tell the answers apart.
    """
    if not judges:
        met = consistency is not None and consistency >= threshold
        return ConsistencyFloor(threshold=threshold, value=consistency, met=met)
    below = [m for m, v in judges.items() if v is None or v < threshold]
    measured = [v for v in judges.values() if v is not None]
    return ConsistencyFloor(
        threshold=threshold,
        value=max(measured) if measured else None,
        judges=dict(judges),
        below=below,
        met=len(below) < len(judges),
    )


def pairwise_floor(summary: PairwiseSummary, threshold: float) -> ConsistencyFloor | None:
    """The floor of a pairwise run; None for a run judged in one order (--no-flip). With
    --repeats K each ask (a repeat's two orders) counts, as it was drawn on its own: a
    pair's `consistency` needs all K to agree, which a judge that tells answers apart most
    of the time still misses on many pairs.
    """
    if not summary.flip:
        return None
    if summary.judges:
        judges = {model: judge.consistency for model, judge in summary.judges.items()}
        return floor_of(summary.consistency, threshold, judges=judges)
    asks = summary.ask_consistency
    return floor_of(summary.consistency if asks is None else asks, threshold)


def judge_values(floor: ConsistencyFloor, names: list[str]) -> str:
    """`a 10%, b 0%`: the named judges' consistency."""
    values = floor.judges or {}
    return ", ".join(f"{name} {pct(values.get(name))}" for name in names)


def floor_reason(floor: ConsistencyFloor) -> str:
    """Why a gate below the floor is undecided: the report's headline."""
    bar = pct(floor.threshold)
    if floor.judges:
        return (
            "no judge of the panel could tell the answers apart (position consistency "
            f"{judge_values(floor, floor.below)} < {bar})"
        )
    value = pct(floor.value)
    return f"the judge could not tell the answers apart (position consistency {value} < {bar})"


def floor_undecided(floor: ConsistencyFloor, to_do: str = WHAT_TO_DO) -> Undecided:
    """A gate below the floor: why it is undecided, and what to do."""
    return Undecided(floor_reason(floor), to_do)


def floor_check(floor: ConsistencyFloor) -> tuple[GateCheck, Undecided | None]:
    """--min-consistency as a check: the floor itself (point estimate; a panel's most
    consistent judge), undecided below it, never failed.
    """
    why = None if floor.met else floor_undecided(floor)
    made = GateCheck(
        metric=GateMetric.CONSISTENCY,
        threshold=floor.threshold,
        value=floor.value,
        point=floor.value,
        interval=None,
        on=GateOn.POINT,
        passed=floor.met,
        minimum=True,
        decided=floor.met,
        undecided=None if why is None else why.reason,
    )
    return made, why


def floor_warnings(
    floor: ConsistencyFloor | None, first_position: float | None, to_do: str = WHAT_TO_DO
) -> list[str]:
    """The loud warnings of a run below the floor (a panel: any of its judges), with the
    number and `to_do`; none at or above it, or without a floor.
    """
    if floor is None:
        return []
    bar = pct(floor.threshold)
    if floor.judges:
        if not floor.below:
            return []
        who = judge_values(floor, floor.below)
        if floor.met:
            these = "this judge" if len(floor.below) == 1 else "these judges"
            return [
                f"position consistency below the floor {bar} (--min-consistency) for {who}: "
                f"{these} picked a position rather than an answer; the panel's gate stands "
                "on its other judges"
            ]
        return [
            f"position consistency of every judge is below the floor {bar} "
            f"(--min-consistency): {who}. None of them could tell the answers apart, so "
            f"these verdicts decide no gate; {to_do}"
        ]
    if floor.met:
        return []
    chose = (
        ""
        if first_position is None
        else f" (it chose the answer shown first {pct(first_position)} of the time)"
    )
    return [
        f"position consistency {pct(floor.value)} is below the floor {bar} "
        f"(--min-consistency): the judge could not tell the answers apart{chose}; its "
        "verdicts measure its position bias, not the answers, and decide no gate. "
        f"{to_do[0].upper()}{to_do[1:]}"
    ]


def gate_warnings(summary: RunSummary, gate: GateResult) -> list[str]:
    """The warnings of a gate re-checked on a finished run (`judge gate`): a judge below
    its position-consistency floor.
    """
    first = summary.first_position_rate if isinstance(summary, PairwiseSummary) else None
    return floor_warnings(gate.consistency_floor, first)
