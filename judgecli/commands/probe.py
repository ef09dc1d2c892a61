"""`judge probe`: how far the judge's pairwise verdicts move under perturbations that should
not move them (docs/probe.md), run on the spine as `judge pairwise` is (resume, cache,
budget, --max-failures alike).

Two rounds on one run directory: first every pair as given, judged in both orders (the OLD/
NEW order is the verdict as given; the swapped one is the `position` probe); then, for each
pair the judge decided (a winner, both orders reconciled), the pair with its losing answer
padded (`length`) or restated at twice its length (`verbosity`), judged in both orders too,
so the verdicts compared are free of position bias. The flip rates, their intervals, the
floors and the gate are `summary.probe`'s and this module's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from judgecli.commands.pairwise import check_rubric_kind
from judgecli.errors import ConfigError
from judgecli.grading.debias import FlipPolicy
from judgecli.grading.grade import GradingPlan, grade_pairwise
from judgecli.grading.perturb import PERTURBED, Probe, generator_of, perturbable, perturbed
from judgecli.inputs.pairs import Pair, PairScan, iter_pairs
from judgecli.report.probe import render_probe_html, render_probe_junit, render_probe_markdown
from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.rubric import Rubric
from judgecli.running.conclusion import Reports, Shortfall, first_failure
from judgecli.running.job import Job
from judgecli.settings.config import FailureLimit, RunConfig
from judgecli.stats.power import rate_sample_size
from judgecli.store import RunStore
from judgecli.summary.gate_records import GateOn
from judgecli.summary.probe import (
    Generators,
    ProbeCheck,
    ProbeGate,
    ProbeSummary,
    Sizing,
    loser,
    summarize_probe,
)

if TYPE_CHECKING:
    from judgecli.commands.setup import FoundRubric
    from judgecli.inputs.rows import DataPath
    from judgecli.settings.flags import JudgeFlags

DEFAULT_FLOOR = 0.05
"""The flip rate a probe is read against without its --max-*-bias: a judge that moves one
verdict in twenty under a perturbation that changes nothing is at the edge of noise."""

ALPHA = 0.05
"""The one-sided level the sizing's test is at."""


@dataclass(frozen=True)
class ProbeAsked:
    """What `judge probe` was asked: the probes, their ceilings, how the gate compares, and
    the power the number of pairs is sized for.
    """

    probes: tuple[Probe, ...] = (Probe.POSITION, Probe.LENGTH, Probe.VERBOSITY)
    ceilings: dict[Probe, float] = field(default_factory=dict)
    """--max-position-bias etc.: the highest flip rate each probe may show."""
    on: GateOn = GateOn.POINT
    power: float | None = None
    effect: float | None = None

    def floor(self, probe: Probe) -> float:
        """The flip rate `probe` is read (and sized) against."""
        return self.ceilings.get(probe, DEFAULT_FLOOR)

    def check(self) -> None:
        """ConfigError (exit 2, nothing judged) for flags that do not go together."""
        if not self.probes:
            raise ConfigError("--probes names no probe", hint="e.g. --probes position,length")
        if unasked := sorted(p.value for p in self.ceilings if p not in self.probes):
            raise ConfigError(
                f"a ceiling is given for probes not run: {', '.join(unasked)}",
                hint="add them to --probes, or drop their --max-*-bias",
            )
        if self.on not in (GateOn.POINT, GateOn.LOWER_BOUND):
            raise ConfigError(
                f"--on {self.on.value} does not apply to judge probe",
                hint="use --on point or --on lower-bound",
            )
        if (self.power is None) != (self.effect is None):
            raise ConfigError(
                "--power and --effect go together", hint="e.g. --power 0.8 --effect 0.1"
            )
        if self.power is not None and self.effect is not None:
            for probe in self.probes:
                if not 0 < self.power < 1 or not 0 < self.effect <= 1 - self.floor(probe):
                    raise ConfigError(
                        f"--power {self.power} --effect {self.effect}: the power must lie "
                        f"in (0, 1) and {probe.value}'s floor {self.floor(probe)} + effect "
                        "at most 1",
                        hint="e.g. --power 0.8 --effect 0.1",
                    )

    def needed(self, probe: Probe) -> int | None:
        """Pairs `probe` needs for the stated power (None: no power stated)."""
        if self.power is None or self.effect is None:
            return None
        floor = self.floor(probe)
        return rate_sample_size(floor=floor, effect=self.effect, power=self.power, alpha=ALPHA)

    def sizing(self) -> Sizing | None:
        """summary.json's `sizing` (None: no power stated)."""
        if self.power is None or self.effect is None:
            return None
        most = max(n for p in self.probes if (n := self.needed(p)) is not None)
        return Sizing(power=self.power, effect=self.effect, alpha=ALPHA, n_pairs=most)


@dataclass
class ProbeRounds:
    """The second round: once the pairs are judged as given, each decided one perturbed by
    every rewriting probe asked (`grading.perturb`).
    """

    pairs: list[Pair]
    probes: tuple[Probe, ...]
    planned: list[Pair] = field(default_factory=list)
    done: bool = False

    def __post_init__(self) -> None:
        self.planned = list(self.pairs)

    def next_round(self, results: list[CaseResult]) -> Sequence[Pair]:
        """The perturbed pairs of those the judge decided (none after the second round)."""
        if self.done:
            return []
        self.done = True
        rewriting = [p for p in self.probes if p in PERTURBED]
        by_id = {r.id: r for r in results}
        batch = []
        for pair in self.pairs:
            given = by_id.get(pair.id)
            if given is None or given.status is not CaseStatus.OK or not perturbable(pair):
                continue
            if given.winner is None or given.winner is Winner.TIE:
                continue
            batch += [perturbed(pair, probe, loser(given.winner)) for probe in rewriting]
        self.planned += batch
        return batch


@dataclass(frozen=True)
class ProbeEnding:
    """How a probe run concludes (a `Concluding` of ProbeSummary)."""

    rubric: Rubric
    models: list[str]
    asked: ProbeAsked
    not_text: int = 0
    """Pairs whose answers are not plain text: judged as given, never rewritten."""
    generators: Generators = field(default_factory=dict)
    """Each pair's generators, where the data names them (the `self` probe)."""

    def summarize(self, results: list[CaseResult]) -> ProbeSummary:
        """The flip rates, with what each probe needs for the stated power."""
        asked = self.asked
        summary = summarize_probe(
            results,
            rubric=self.rubric,
            models=self.models,
            probes=asked.probes,
            floors={p: asked.floor(p) for p in asked.probes},
            generators=self.generators,
        )
        probes = [p.model_copy(update={"n_needed": asked.needed(p.name)}) for p in summary.probes]
        return summary.model_copy(update={"probes": probes, "sizing": asked.sizing()})

    def warnings_of(self, summary: ProbeSummary) -> list[str]:
        """Probes with fewer pairs than the stated power needs; pairs never rewritten."""
        said = [
            f"{p.name.value}: {p.n} pairs probed, fewer than the {p.n_needed} that --power "
            f"{self.asked.power} needs to detect a flip rate {self.asked.effect} above "
            f"{p.floor}: a pass says little; probe more pairs"
            for p in summary.probes
            if p.n_needed is not None and p.n < p.n_needed
        ]
        said += [f"{p.name.value}: not probed: {p.note}" for p in summary.probes if p.note]
        if self.not_text:
            said.append(
                f"{self.not_text} pairs are conversations or agents' runs: judged for "
                "position only (length and verbosity rewrite plain answers)"
            )
        return said

    def incomplete(
        self, summary: ProbeSummary, limit: FailureLimit, total: int | None
    ) -> str | None:
        """Too many pairs or perturbed pairs failed (--max-failures), or the run stopped."""
        short = Shortfall.of(summary.n_failed, summary.n_ok + summary.n_failed, limit, total)
        reasons = [short.failed_words("pairs")] * short.too_many_failed
        reasons += [short.stopped_words("pairs")] * bool(short.not_judged)
        if reasons and summary.failures:
            reasons.append(first_failure(summary.failures))
        return "; ".join(reasons) or None

    def verdict(self, summary: ProbeSummary) -> ProbeGate | None:
        """Each --max-*-bias against its probe's flip rate (None: no ceiling given)."""
        return probe_gate(summary, self.asked)

    def own_files(self, store: RunStore, results: list[CaseResult]) -> list[CaseResult]:
        """A probe writes no files of its own."""
        return results

    def reports(self, summary: ProbeSummary, results: Sequence[CaseResult]) -> Reports:
        """report.md, report.html and results.junit.xml (one test per probe)."""
        return Reports(
            markdown=render_probe_markdown(summary),
            html=render_probe_html(summary),
            junit=render_probe_junit(summary),
        )


def probe_gate(summary: ProbeSummary, asked: ProbeAsked) -> ProbeGate | None:
    """The gate: each ceiling against the point flip rate, or with --on lower-bound the
    pessimistic end of its interval (the upper bound, as for every maximum), so a lucky
    small sample cannot pass. A probe with no pair probed cannot be decided (exit 3).
    """
    if not asked.ceilings:
        return None
    checks, missing = [], []
    for result in summary.probes:
        if result.name not in asked.ceilings:
            continue
        point, interval = result.flip_rate, result.flip_rate_ci
        value = interval[1] if asked.on is GateOn.LOWER_BOUND else point
        ceiling = asked.ceilings[result.name]
        if value is None:
            missing.append(
                f"{result.name.value} ({result.note})" if result.note else result.name.value
            )
        checks.append(
            ProbeCheck(
                probe=result.name,
                threshold=ceiling,
                value=value,
                point=point,
                interval=interval,
                on=asked.on,
                passed=value is not None and value <= ceiling,
            )
        )
    if missing:
        return ProbeGate(
            passed=False,
            checks=checks,
            decided=False,
            undecided=f"no pair was probed for {', '.join(missing)}",
            hint="give pairs the judge decides (a tie has no loser to rewrite), more pairs, "
            "or for self a panel and data naming the generators",
        )
    return ProbeGate(passed=all(c.passed for c in checks), checks=checks)


def probe_job(
    config: RunConfig, rubric: Rubric, scan: PairScan, asked: ProbeAsked
) -> Job[Pair, ProbeSummary]:
    """Judge the pairs as given, then the perturbed ones; the summary is the flip rates."""
    pairs = list(iter_pairs(scan, requires=rubric.requires, field_map=config.field_map))
    rounds = ProbeRounds(pairs, asked.probes)
    rewriting = sum(p in PERTURBED for p in asked.probes)
    ending = ProbeEnding(
        rubric,
        config.model_names,
        asked,
        not_text=sum(not perturbable(p) for p in pairs) if rewriting else 0,
        generators={p.id: (generator_of(p.old), generator_of(p.new)) for p in pairs},
    )
    return Job(
        config=config,
        plan=GradingPlan.of(config, rubric, flip=True, flip_policy=FlipPolicy.TIE),
        items=pairs,
        total=len(pairs) * (1 + rewriting),
        grade=grade_pairwise,
        ending=ending,
        warnings=scan.warnings,
        rounds=rounds,
    )


def bundled_pairs() -> tuple[Path, Path]:
    """The pairs probed without OLD and NEW: the bundled datasets/old.jsonl and new.jsonl
    (found as `cli.demo_data.bundled_datasets` finds them: judgecli/demo_datasets/ in a
    wheel, datasets/ beside the package in a checkout).
    """
    from importlib import resources

    packaged = resources.files("judgecli").joinpath("demo_datasets")
    folder = packaged if isinstance(packaged, Path) and packaged.is_dir() else None
    folder = folder or Path(__file__).resolve().parents[2] / "datasets"
    return folder / "old.jsonl", folder / "new.jsonl"


def prepare_probe(
    old: DataPath | None,
    new: DataPath | None,
    found: FoundRubric,
    flags: JudgeFlags,
    asked: ProbeAsked,
) -> Job[Pair, ProbeSummary]:
    """`judge probe [OLD NEW]`: the pairs joined on id (the bundled ones without OLD and
    NEW), checked (exit 2 before anything is called), and with --power the first pairs the
    largest need asks for (unless --limit or --sample says otherwise).
    """
    from judgecli.commands.setup import check_images, judge_config
    from judgecli.inputs.pairs import scan_pairs

    if (old is None) != (new is None):
        raise ConfigError("judge probe takes OLD and NEW, or neither", hint="add NEW's file")
    if old is None or new is None:
        old, new = bundled_pairs()
    rubric = found.rubric
    check_rubric_kind(rubric, found.where)
    asked.check()
    config = judge_config("probe", rubric, flags)
    sizing = asked.sizing()
    limit = flags.limit
    if sizing is not None and limit is None and flags.sample_size is None:
        limit = sizing.n_pairs
    scan = scan_pairs(
        old,
        new,
        requires=rubric.requires,
        field_map=config.field_map,
        limit=limit,
        sample=flags.sample_size,
        seed=flags.seed,
        shard=config.shard,
    )
    check_images(config, rubric, scan.images)
    return probe_job(config, rubric, scan, asked)
