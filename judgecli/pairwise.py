"""`judge pairwise`: is NEW better than OLD? Both orders, a panel, the win rate, the gate."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from judgecli.cascade import plan_cascade, recorded_rule, summarize_tiers, tiered
from judgecli.config import RunConfig
from judgecli.debias import FlipPolicy
from judgecli.errors import RubricError
from judgecli.gate import GateResult, GateSpec, evaluate_gate, gate_dict
from judgecli.grading import GradingPlan, grade_pairwise
from judgecli.pairs import Pair, PairScan, iter_pairs
from judgecli.result import CaseResult
from judgecli.rubric import Rubric, RubricKind
from judgecli.run import finish_run, judge_all
from judgecli.store import RESULTS, read_results
from judgecli.summary.pairwise import summarize_pairwise
from judgecli.summary.run import RunSummary

NO_FLIP_WARNING = (
    "--no-flip: each case was judged in one (seeded random) order only, so position bias "
    "is not removed per case; consistency cannot be measured"
)


@dataclass(frozen=True)
class PairwiseOutcome:
    """A finished pairwise run."""

    run_dir: Path
    summary: RunSummary
    gate: GateResult | None


def check_rubric_kind(rubric: Rubric, path: Path) -> None:
    """`pairwise` needs a pairwise rubric (the judge sees answers A and B)."""
    if rubric.kind is not RubricKind.PAIRWISE:
        raise RubricError(
            f"{path}: rubric {rubric.name!r} is {rubric.kind.value}, not pairwise",
            hint="use `judge score` with it, or a pairwise rubric such as `--rubric pairwise`",
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


def compare_datasets(
    config: RunConfig,
    rubric: Rubric,
    scan: PairScan,
    *,
    flip: bool,
    flip_policy: FlipPolicy,
    gate: GateSpec,
    argv: list[str],
    on_result: Callable[[CaseResult], None],
    warnings: list[str],
    step_summary: Path | None = None,
) -> PairwiseOutcome:
    """Judge every pair, write the run directory, summarise and gate it."""
    plan = GradingPlan.of(config, rubric, flip=flip, flip_policy=flip_policy)
    cascade = plan_cascade(plan, config.screen_name, config.escalate)
    config = recorded_rule(config, cascade)
    self_judges: set[str] = set()
    pairs = watch_self_preference(
        iter_pairs(scan, requires=rubric.requires, field_map=config.field_map),
        [m.name for m in config.all_models],
        self_judges,
    )
    grade = tiered(grade_pairwise, plan, cascade)
    run_dir = judge_all(
        config,
        rubric,
        pairs,
        grade,
        argv=argv,
        on_result=on_result,
        warnings=warnings,
        total=len(scan.pairs),
    )
    results = list(read_results(run_dir / RESULTS))
    summary = summarize_pairwise(
        results, rubric=rubric, models=config.model_names, flip=flip,
        flip_policy=flip_policy.value, seed=config.seed,
    )  # fmt: skip
    summary.cascade = summarize_tiers(results, config, cascade)
    if not flip:
        warnings.append(NO_FLIP_WARNING)
    warnings.extend(
        f"judge {j} also generated answers in this data (metadata.model): "
        "expect self-preference; use another judge or a panel"
        for j in sorted(self_judges)
    )
    summary.warnings.extend(warnings)
    result = evaluate_gate(summary, gate)
    if result is not None:
        summary.gate = gate_dict(result)
    finish_run(
        run_dir,
        summary,
        step_summary=step_summary,
        results=results,
        failure_limit=config.max_failures,
        total=len(scan.pairs),
    )
    return PairwiseOutcome(run_dir=run_dir, summary=summary, gate=result)
