"""`judge plan`: how many cases the gate of a judging command line needs, from the bar it
sets, the true value that matters (--effect), α and power, and a pilot run's spread when
one is given. Calls no judge: the statistics are stats/sizing's, the gate read off the
command line deciding/planned_gate's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from judgecli.deciding.outcomes import case_value
from judgecli.deciding.planned_gate import PlannedGate, mean_scale, planned_gate
from judgecli.errors import InputError
from judgecli.stats.sizing import (
    StoppingTimes,
    fixed_cases,
    fixed_power,
    outcome_sd,
    rate_cases,
    rate_power,
    sequential_stops,
    sequential_stops_of,
    shifted_to_mean,
)
from judgecli.summary.gate_records import GateMetric, GateOn

SEQUENTIAL_RUNS = 1000
"""Sequential gates simulated per plan: the p95 is then within a few percent."""
HORIZON_FACTOR = 20
"""A simulated sequential run stops at the latest after this many times the fixed-n
lower-bound gate's cases (the share still undecided there is reported)."""


@dataclass(frozen=True)
class Pilot:
    """What a pilot run says about one case's value: how many, their spread and ties (a
    pair whose two orders disagree, or a split panel, ends a tie under the default flip
    policy, so the tie share carries the judge's position consistency and the panel's
    agreement into the plan; both are reported beside it).
    """

    path: Path
    cases: int
    mean: float
    sd: float
    tie_share: float
    consistency: float | None = None
    panel_agreement: float | None = None
    values: tuple[float, ...] = ()
    """The cases' gated values (a mean's scores: the law its sequential gate is sized on)."""


@dataclass(frozen=True)
class Plan:
    """The sizing of one gate (docs/plan.md, "Sizing the run")."""

    gate: PlannedGate
    effect: float
    power: float
    alpha: float
    sd: float
    tie_share: float
    cases_point: int
    cases_lower_bound: int
    sequential_expected: float | None
    sequential_p95: int | None
    sequential_power: float | None
    sequential_undecided: float | None
    pilot: Pilot | None

    @property
    def cases_needed(self) -> int:
        """The cases the gate as asked needs (a --sequential gate: its 95th percentile)."""
        if self.gate.sequential and self.sequential_p95 is not None:
            return self.sequential_p95
        return self.cases_point if self.gate.on is GateOn.POINT else self.cases_lower_bound

    @property
    def power_reached(self) -> float:
        """The chance the gate as asked passes at --effect with `cases_needed` cases (at
        least the power asked; a --sequential gate's is simulated).
        """
        if self.gate.sequential and self.sequential_power is not None:
            return self.sequential_power
        bound = self.gate.on is GateOn.LOWER_BOUND
        if bound and self.gate.metric is not GateMetric.MEAN:
            return rate_power(
                n=self.cases_needed,
                floor=self.gate.floor,
                effect=self.effect,
                tie_share=self.tie_share,
                alpha=self.alpha,
                wilson=self.gate.metric is GateMetric.PASS_RATE,
            )
        return fixed_power(
            n=self.cases_needed,
            delta=self.effect - self.gate.floor,
            sd=self.sd,
            alpha=self.alpha,
            bound=bound,
        )

    def to_json(self) -> dict[str, Any]:
        """The plan as `--json` prints it (docs/results.md, "judge plan")."""
        return {
            "command": self.gate.command,
            "metric": self.gate.metric.value,
            "floor": self.gate.floor,
            "on": "sequential" if self.gate.sequential else self.gate.on.value,
            "effect": self.effect,
            "alpha": self.alpha,
            "power": round(self.power_reached, 4),
            "power_asked": self.power,
            "sd": round(self.sd, 6),
            "tie_share": round(self.tie_share, 6),
            "cases_needed": self.cases_needed,
            "cases_point": self.cases_point,
            "cases_lower_bound": self.cases_lower_bound,
            "sequential_expected": self.sequential_expected,
            "sequential_p95": self.sequential_p95,
            "sequential_power": self.sequential_power,
            "sequential_undecided": self.sequential_undecided,
            "pilot": None
            if self.pilot is None
            else {
                "path": str(self.pilot.path),
                "cases": self.pilot.cases,
                "mean": round(self.pilot.mean, 6),
                "sd": round(self.pilot.sd, 6),
                "tie_share": round(self.pilot.tie_share, 6),
                "consistency": self.pilot.consistency,
                "panel_agreement": self.pilot.panel_agreement,
            },
        }


def read_pilot(run_dir: Path, gate: PlannedGate) -> Pilot:
    """The spread of the gated values in a finished pilot run of the gate's command
    (summary/run.load_run).
    """
    from judgecli.summary.pairwise import PairwiseSummary
    from judgecli.summary.run import load_run

    summary, results = load_run(run_dir)
    if summary.command.value != gate.command:
        raise InputError(
            f"{run_dir}: the pilot is a {summary.command.value} run, the plan a {gate.command} one",
            hint=f"pass a finished `judge {gate.command}` run as --pilot",
        )
    values = [v for v in (case_value(r, gate.metric) for r in results) if v is not None]
    pilot = pilot_of(run_dir, values, gate.metric)
    if isinstance(summary, PairwiseSummary):
        agreement = None if summary.inter_judge is None else summary.inter_judge.percent_agreement
        pilot = replace(pilot, consistency=summary.consistency, panel_agreement=agreement)
    return pilot


def pilot_of(run_dir: Path, values: list[float], metric: GateMetric) -> Pilot:
    """A pilot's spread and tie share from its cases' gated values (`case_value`)."""
    if len(values) < 2:
        raise InputError(
            f"{run_dir}: the pilot has {len(values)} case(s) with a {metric.value} value",
            hint="pass a finished pilot run of the same command with at least 2 judged cases",
        )
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    ties = sum(1 for v in values if v == 0.5) / len(values) if metric is GateMetric.WIN_RATE else 0
    return Pilot(run_dir, len(values), mean, sd, ties, values=tuple(values))


def make_plan(
    argv: list[str],
    *,
    effect: float,
    power: float = 0.8,
    alpha: float = 0.05,
    pilot: Pilot | None = None,
    seed: int = 0,
    runs: int = SEQUENTIAL_RUNS,
) -> Plan:
    """Size the gate of the command line `argv` for a true value `effect`, from the spread
    and ties of a `pilot` (`read_pilot`) or else the worst case (no ties).
    """
    if not 0 < power < 1 or not 0 < alpha < 1:
        raise InputError("--power and --alpha must lie strictly between 0 and 1")
    gate = planned_gate(argv)
    if not effect > gate.floor:
        raise InputError(
            f"--effect {effect} is not above the bar {gate.flag} {gate.floor}",
            hint="--effect is the true value the gate should pass, above the bar",
        )
    rate = gate.metric is not GateMetric.MEAN
    if rate and effect >= 1:
        raise InputError(
            f"--effect {effect}: a true rate of 1 or more leaves no spread to size",
            hint="give a true rate below 1",
        )
    if not rate and pilot is None:
        raise InputError(
            "--min-mean: a plan needs the scores' spread",
            hint="pass --pilot RUN, a finished score run with the same rubric",
        )
    tie_share = pilot.tie_share if pilot is not None else 0.0
    if rate:
        sd = outcome_sd(effect, tie_share)
    else:
        assert pilot is not None  # checked above
        sd = pilot.sd
    if not sd > 0:
        raise InputError(
            f"the values' spread at --effect {effect} is 0: every case would end alike",
            hint="choose an --effect below 1",
        )
    delta = effect - gate.floor
    cases_point = fixed_cases(delta=delta, sd=sd, power=power, alpha=alpha, bound=False)
    if rate:
        # A rate's spread moves with it: the bound's pass line is solved, not assumed.
        cases_bound = rate_cases(
            floor=gate.floor,
            effect=effect,
            tie_share=tie_share,
            power=power,
            alpha=alpha,
            wilson=gate.metric is GateMetric.PASS_RATE,
        )
    else:
        cases_bound = fixed_cases(delta=delta, sd=sd, power=power, alpha=alpha, bound=True)
    stops = None
    if not rate:
        assert pilot is not None  # checked above
        scale = mean_scale(argv, gate)
        if scale is not None:
            stops = _mean_stops(gate, scale, pilot, effect, alpha, cases_bound, runs, seed)
    if rate:
        stops = sequential_stops(
            mean=effect,
            tie_share=tie_share,
            floor=gate.floor,
            alpha=alpha,
            horizon=HORIZON_FACTOR * cases_bound,
            runs=runs,
            seed=seed,
        )
    return Plan(
        gate=gate,
        effect=effect,
        power=power,
        alpha=alpha,
        sd=sd,
        tie_share=tie_share,
        cases_point=cases_point,
        cases_lower_bound=cases_bound,
        sequential_expected=None if stops is None else round(stops.expected, 1),
        sequential_p95=None if stops is None else stops.p95,
        sequential_power=None if stops is None else stops.passed,
        sequential_undecided=None if stops is None else stops.undecided,
        pilot=pilot,
    )


def _mean_stops(
    gate: PlannedGate,
    scale: tuple[float, float],
    pilot: Pilot,
    effect: float,
    alpha: float,
    cases_bound: int,
    runs: int,
    seed: int,
) -> StoppingTimes:
    """The sequential gate of a mean simulated at the true mean `effect`: the pilot's
    scores mapped onto 0..1 by the rubric's scale as the run maps them
    (deciding/sequential.SequentialGate.to_unit), moved by one shift to the effect (each
    clamped to the scale), drawn with replacement.
    """
    from judgecli.deciding.sequential import SequentialGate

    if not effect < scale[1]:
        raise InputError(
            f"--effect {effect}: a true mean at the top of the scale {scale[0]:g}..{scale[1]:g} "
            "leaves no spread to size",
            hint="give a true mean below the scale's top",
        )
    follows = SequentialGate(metric=gate.metric, threshold=gate.floor, scale=scale)
    values = shifted_to_mean([follows.to_unit(v) for v in pilot.values], follows.to_unit(effect))
    return sequential_stops_of(
        values=values,
        weights=[1.0] * len(values),
        floor=follows.to_unit(gate.floor),
        alpha=alpha,
        horizon=HORIZON_FACTOR * cases_bound,
        runs=runs,
        seed=seed,
    )
