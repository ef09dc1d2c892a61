"""summary.json of `judge probe`: per probe, how often the judge's verdict moved when the
pair was perturbed (`probes`: each `name`, `flip_rate`, `flip_rate_ci`, `n`), with examples,
the floor it is read against and the cases a stated power asks for (docs/probe.md).

A pair's verdict as given is its OLD/NEW order's; `position` compares it with the swapped
order's. `length` and `verbosity` compare the pair's position-debiased verdict (both orders
reconciled) with that of the pair whose losing answer was padded or restated: only pairs
with a winner are perturbed (a tie has no loser to favour). `self` reads each panel judge's
debiased verdict on a pair with exactly one answer from its own family against the verdict
of the panel's judges of other families (their majority): where they do not prefer the
own-family answer, it moved when the judge does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple

from pydantic import Field

from judgecli.grading.debias import to_winner
from judgecli.grading.perturb import Probe, Side, base_id, family
from judgecli.grading.repeats import majority_winner
from judgecli.result import CaseResult, CaseStatus, Order, Winner
from judgecli.rubric import Rubric
from judgecli.stats.intervals import Interval, wilson_interval
from judgecli.summary.facts import FailedCase, Usage
from judgecli.summary.gate_records import GateOn
from judgecli.summary.head import run_facts
from judgecli.summary.parts import Part, Record

EXAMPLES = 5
"""Flipped pairs listed per probe."""


class FlipExample(Part):
    """One pair whose verdict moved under a probe."""

    id: str
    before: Winner
    """The verdict on the pair as given."""
    after: Winner | None
    """The verdict on the perturbed pair (None: dropped by the flip policy)."""
    changed: str
    """What the probe changed: `order`, the answer it rewrote (`old`, `new`), or for `self`
    the judge and its own family's answer (`openai/gpt-4o: new`)."""


class ProbeResult(Part):
    """One probe's numbers."""

    name: Probe
    flip_rate: float | None
    """Share of the probed pairs whose verdict moved; null with none probed."""
    flip_rate_ci: Interval
    """Wilson 95% interval of the flip rate."""
    n: int
    """Pairs probed (see the module docstring for which)."""
    flips: int
    floor: float
    """The flip rate the probe is read against (its --max-*-bias, else 0.05)."""
    note: str | None = None
    """Why no pair was probed, when the data or the panel cannot give one (`self`)."""
    n_needed: int | None = None
    """With --power and --effect: the pairs the probe needs to detect floor + effect."""
    examples: list[FlipExample] = Field(default_factory=list)


class Sizing(Part):
    """--power and --effect: what the number of pairs was sized for."""

    power: float
    effect: float
    alpha: float
    n_pairs: int
    """Pairs the largest need asks for (the data may hold fewer)."""


class ProbeCheck(Record):
    """One --max-*-bias against its probe's flip rate."""

    probe: Probe
    threshold: float
    value: float | None
    point: float | None
    interval: Interval
    on: GateOn
    passed: bool


class ProbeGate(Record):
    """The gate's verdict on the probes' flip rates (exit 1 when it failed)."""

    passed: bool
    checks: list[ProbeCheck]
    decided: bool = True
    undecided: str | None = None
    hint: str | None = None


class ProbeSummary(Part):
    """summary.json of `judge probe`."""

    command: Literal["probe"] = "probe"
    rubric: str
    rubric_version: int | str
    rubric_hash: str
    models: list[str]
    n_cases: int
    """Pairs judged as given."""
    n_ok: int
    n_failed: int
    """Results that failed: pairs and perturbed pairs alike."""
    usage: Usage
    probes: list[ProbeResult]
    sizing: Sizing | None = None
    failures: list[FailedCase] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    gate: ProbeGate | None = None
    incomplete: str | None = None


def as_given(result: CaseResult) -> tuple[Winner | None, Winner | None]:
    """The first judge's verdict in the OLD/NEW order and in the swapped one (None: not
    judged in it).
    """
    first = result.judgements[0].model if result.judgements else None
    said: dict[Order, Winner] = {}
    for j in result.judgements:
        position = j.verdict.winner if j.verdict is not None else None
        if j.model == first and j.order is not None and position is not None:
            said.setdefault(j.order, to_winner(position, j.order))
    return said.get(Order.OLD_NEW), said.get(Order.NEW_OLD)


def loser(winner: Winner) -> Side:
    """The answer a perturbation rewrites: the one the judge did not prefer."""
    return Side.OLD if winner is Winner.NEW else Side.NEW


class Move(NamedTuple):
    """One probed pair: its verdict before and after, what changed, whether it moved."""

    id: str
    before: Winner
    after: Winner | None
    changed: str
    moved: bool


def compared(case_id: str, before: Winner, after: Winner | None, changed: str) -> Move:
    """A probed pair whose verdict moved when it is not the same."""
    return Move(case_id, before, after, changed, after is not before)


def probe_result(name: Probe, moves: Sequence[Move], floor: float) -> ProbeResult:
    """A probe's flip rate over its probed pairs."""
    flipped = [m for m in moves if m.moved]
    n = len(moves)
    return ProbeResult(
        name=name,
        flip_rate=len(flipped) / n if n else None,
        flip_rate_ci=wilson_interval(len(flipped), n) if n else (None, None),
        n=n,
        flips=len(flipped),
        floor=floor,
        examples=[
            FlipExample(id=m.id, before=m.before, after=m.after, changed=m.changed)
            for m in flipped[:EXAMPLES]
        ],
    )


Generators = Mapping[str, tuple[str | None, str | None]]
"""Each pair's generators where the data names them: pair id → (OLD's, NEW's)."""


def self_moves(
    results: Sequence[CaseResult], models: Sequence[str], generators: Generators
) -> tuple[list[Move], str | None]:
    """The `self` probe's pairs (`Move.before`: the other families' verdict; `after`: the
    judge's), or why there are none.
    """
    if not any(g for pair in generators.values() for g in pair):
        return [], "the data names no generators (a `generator` or `model` field)"
    if len({family(m) for m in models}) < 2:
        return [], (
            "needs a panel with judges of another model family (repeat --model) to read "
            "each judge's verdict against"
        )
    moves = []
    for r in results:
        old_by, new_by = generators.get(r.id, (None, None))
        for judge in models:
            own = family(judge)
            mine = [
                w
                for w, by in ((Winner.OLD, old_by), (Winner.NEW, new_by))
                if by and family(by) == own
            ]
            others = [w for m, w in r.judge_winners.items() if family(m) != own]
            verdict = r.judge_winners.get(judge)
            if len(mine) != 1 or not others or verdict is None:
                continue
            reference = majority_winner(others)
            if reference is None or reference is mine[0]:
                continue  # nothing to move toward: the others already prefer it
            said = f"{judge}: {mine[0].value}"
            moves.append(Move(r.id, reference, verdict, said, verdict is mine[0]))
    if not moves:
        return [], "no pair has exactly one answer from a panel judge's own family"
    return moves, None


def summarize_probe(
    results: list[CaseResult],
    *,
    rubric: Rubric,
    models: list[str],
    probes: Sequence[Probe],
    floors: dict[Probe, float],
    generators: Generators | None = None,
) -> ProbeSummary:
    """The probes' flip rates from every result of the run (pairs and perturbed pairs)."""
    given = {r.id: r for r in results if base_id(r.id)[1] is None}
    perturbed = {base_id(r.id): r for r in results if base_id(r.id)[1] is not None}
    ok = [r for r in given.values() if r.status is CaseStatus.OK]
    listed = []
    for probe in probes:
        moves: list[Move] = []
        note = None
        if probe is Probe.SELF:
            moves, note = self_moves(ok, models, generators or {})
        for r in ok if probe in (Probe.LENGTH, Probe.VERBOSITY, Probe.POSITION) else []:
            if probe is Probe.POSITION:
                before, after = as_given(r)
                if before is not None and after is not None:
                    moves.append(compared(r.id, before, after, "order"))
                continue
            done = perturbed.get((r.id, probe))
            if r.winner in (None, Winner.TIE) or done is None:
                continue
            assert r.winner is not None
            if done.status is CaseStatus.OK:
                moves.append(compared(r.id, r.winner, done.winner, loser(r.winner).value))
        made = probe_result(probe, moves, floors[probe])
        listed.append(made.model_copy(update={"note": note}) if note else made)
    facts = run_facts(results, rubric=rubric, models=models)
    return ProbeSummary(
        rubric=facts["rubric"],
        rubric_version=facts["rubric_version"],
        rubric_hash=facts["rubric_hash"],
        models=models,
        n_cases=len(given),
        n_ok=facts["n_ok"],
        n_failed=facts["n_failed"],
        usage=facts["usage"],
        failures=facts["failures"],
        probes=listed,
    )
