"""`judge pairwise`: is NEW better than OLD? Both orders, a panel, the win rate, the gate."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from judgecli.deciding.consistency import floor_warnings, pairwise_floor
from judgecli.deciding.decision import Deciding
from judgecli.deciding.gate import GateSpec
from judgecli.errors import ConfigError, RubricError
from judgecli.grading.debias import FlipPolicy
from judgecli.grading.grade import GradingPlan, grade_pairwise
from judgecli.inputs.pairs import Pair, PairScan, iter_pairs
from judgecli.result import CaseResult
from judgecli.rubric import Rubric, RubricKind
from judgecli.running.job import Ending, Job, Sequential
from judgecli.settings.config import RunConfig
from judgecli.summary.gate_records import GateMetric
from judgecli.summary.length_control import NAME, OutcomeKind
from judgecli.summary.pairwise import PairwiseSummary, summarize_pairwise

GAP = 0.05
"""Raw and length-controlled win rates further apart than this (with a length coefficient
whose interval excludes 0) are warned about."""

NO_FLIP_WARNING = (
    "--no-flip: each case was judged in one (seeded random) order only, so position bias "
    "is not removed per case; consistency cannot be measured"
)


def check_rubric_kind(rubric: Rubric, where: str) -> None:
    """`pairwise` needs a pairwise rubric (the judge sees answers A and B; `where`: the
    rubric's file, as messages name it).
    """
    if rubric.kind is not RubricKind.PAIRWISE:
        raise RubricError(
            f"{where}: rubric {rubric.name!r} is {rubric.kind.value}, not pairwise",
            hint="use `judge score` with it, or a pairwise rubric such as `--rubric pairwise`",
        )


def check_consistency_floor(gate: GateSpec, *, flip: bool) -> None:
    """ConfigError (exit 2, nothing judged) for --min-consistency with --no-flip: a pair
    judged in one order has no consistency to stand on.
    """
    if gate.min_consistency is not None and not flip:
        raise ConfigError(
            "--min-consistency with --no-flip: a pair judged in one order measures no "
            "position consistency",
            hint="drop --no-flip (both orders are judged by default), or --min-consistency",
        )


def bare_name(model: str) -> str:
    """gpt-4o for openai/gpt-4o: what a dataset's `model` field would say."""
    return model.rsplit("/", 1)[-1].casefold()


def watch_self_preference(
    pairs: Iterable[Pair], judges: list[str], found: set[str]
) -> Iterator[Pair]:
    """Pass pairs through, noting judges that also generated answers (metadata.model):
    judges favour their own outputs (self-preference bias).
    """
    names = {bare_name(j): j for j in judges}
    for pair in pairs:
        for case in (pair.old, pair.new):
            generator = case.metadata.get("model")
            if isinstance(generator, str) and bare_name(generator) in names:
                found.add(names[bare_name(generator)])
        yield pair


def pairwise_job(
    config: RunConfig,
    rubric: Rubric,
    scan: PairScan,
    decides: Deciding,
    *,
    flip: bool,
    flip_policy: FlipPolicy,
) -> Job[Pair, PairwiseSummary]:
    """Judge every pair; the summary's numbers are NEW's wins, losses and ties, gated.
    With `decides.sequential`, the pairs are judged in a seeded random order and judging
    stops once the win rate's confidence sequence decides; with `decides.labels` (human
    labels of some pairs) the summary has the human-corrected win rate.
    """
    gate, sequential, labels = decides.gate, decides.sequential, decides.labels
    self_judges: set[str] = set()

    def fresh() -> Iterable[Pair]:
        return iter_pairs(scan, requires=rubric.requires, field_map=config.field_map)

    read = fresh()
    order = None
    if sequential is not None:
        from judgecli.deciding.sequential import shuffled  # only a --sequential run needs it

        # The whole order is fixed before the first verdict (so it is held in memory).
        listed = shuffled(read, sequential.seed)
        order = Sequential(sequential, [pair.id for pair in listed])
        read = iter(listed)
        fresh = listed.__iter__
    pairs = watch_self_preference(read, [m.name for m in config.all_models], self_judges)

    def late_warnings() -> list[str]:
        return [NO_FLIP_WARNING] * (not flip) + [
            f"judge {j} also generated answers in this data (metadata.model): "
            "expect self-preference; use another judge or a panel"
            for j in sorted(self_judges)
        ]

    def summarize(results: list[CaseResult]) -> PairwiseSummary:
        summary = summarize_pairwise(
            results,
            rubric=rubric,
            models=config.model_names,
            flip=flip,
            flip_policy=flip_policy.value,
            seed=config.seed,
            reference=0.5 if gate.min_win_rate is None else gate.min_win_rate,
            correction=decides.correction,
        )
        if labels is None:
            return summary
        # Only a run with --labels needs what corrects for them (PPI++, the labels' reader).
        from judgecli.deciding.corrected import corrected_fields

        corrected = corrected_fields(
            results, labels, [GateMetric.WIN_RATE], no_interval=summary.no_interval
        )
        return summary.model_copy(update=corrected)

    def warnings_of(summary: PairwiseSummary) -> list[str]:
        # Below the floor the run warns whether or not it has a gate: it has nothing to
        # decide then, but its numbers still say nothing about the answers.
        floor = pairwise_floor(summary, gate.consistency_floor)
        said = floor_warnings(floor, summary.first_position_rate)
        return [*said, *length_warnings(summary)]

    return Job(
        config=config,
        plan=GradingPlan.of(config, rubric, flip=flip, flip_policy=flip_policy),
        items=pairs,
        total=len(scan.pairs),
        grade=grade_pairwise,
        ending=Ending(summarize, gate=gate, warnings_of=warnings_of),
        warnings=scan.warnings,
        late_warnings=late_warnings,
        sequential=order,
        fresh=fresh,
    )


def length_warnings(s: PairwiseSummary) -> list[str]:
    """A warning when length explains much of the verdicts: the length coefficient's 95%
    interval excludes 0 and the length-controlled win rate differs by more than GAP from the
    raw one it controls (the probability-weighted one when probabilities were fitted).
    """
    fit, controlled = s.length_control, s.win_rate_length_controlled
    weighed = fit is not None and fit.outcome is OutcomeKind.PROBABILITY
    raw = s.win_rate_weighted if weighed else s.win_rate
    if fit is None or fit.coefficient is None or raw is None or controlled is None:
        return []
    low, high = fit.coefficient_ci
    if low is None or high is None or low <= 0 <= high or abs(raw - controlled) <= GAP:
        return []
    ci_low, ci_high = s.win_rate_length_controlled_ci or (None, None)
    interval = "" if ci_low is None or ci_high is None else f" [{ci_low:.1%}, {ci_high:.1%}]"
    lengths = ""
    if s.length is not None and None not in (s.length.mean_length_new, s.length.mean_length_old):
        lengths = (
            f"; NEW's answers average {s.length.mean_length_new:,.0f} characters, "
            f"OLD's {s.length.mean_length_old:,.0f}"
        )
    favours = "longer" if fit.coefficient > 0 else "shorter"
    kind = " (probability-weighted)" if weighed else ""
    return [
        f"answer length sways the judge: at equal length NEW's win rate would be "
        f"{controlled:.1%}{interval}, not {raw:.1%}{kind} (the judge favours the {favours} "
        f"answer: length coefficient {fit.coefficient:+.2f} [{low:+.2f}, {high:+.2f}])"
        f"{lengths}; that is the {NAME}. "
        "The gate compares the raw win rate: before trusting it, check in report.html whether "
        "the length difference is substance or padding (win_rate_length_controlled is the rate "
        "at equal length), and consider telling the judge in the rubric not to prefer an "
        "answer for its length"
    ]
