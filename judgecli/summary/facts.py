"""What every summary.json says, whatever the command: what ran (the head: command, rubric,
judges, case counts, usage) and how the run ended (the tail: failures, warnings, the gate's
verdict, a cascade's tiers, why it is incomplete). The numbers of each command are declared
beside its summariser (`summary.score`, `.pairwise`, `.calibrate`, `.refine`); `summary.run`
joins them into the discriminated union `RunSummary`.

summary.json's keys are written in field order, and the order is part of the file (users
diff summaries). A command's first numbers come between the head and the tail, the numbers
it gained later after the tail. Pydantic lays fields out base-first along the MRO, so
`class PairwiseSummary(SummaryTail, PairwiseNumbers)` with `PairwiseNumbers(SummaryHead)`
gives head, pairwise numbers, tail, then PairwiseSummary's own fields.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from judgecli.stats.intervals import Interval
from judgecli.stats.multiplicity import Call, Correction
from judgecli.summary.gate_records import GateMetric, GateResult
from judgecli.summary.parts import Part, Record
from judgecli.summary.stability import SelfConsistency
from judgecli.usage import Tokens

# How many failed cases the summary lists by id (the rest are in results.jsonl).
FAILURES_LISTED = 20

ALPHA = 0.05
"""Every test and interval of a summary is at this level (95% intervals)."""


class Command(StrEnum):
    """The command a summary is of: summary.json's `command`, which picks its model."""

    SCORE = "score"
    PAIRWISE = "pairwise"
    CALIBRATE = "calibrate"
    REFINE = "refine"


class Calls(Part):
    """How many calls a run made: the keys of `usage` before its tokens, in a base of their
    own so that they stay first (pydantic lays out base fields first).
    """

    calls: int = 0
    cached: int = 0
    retries: int = 0
    batched: int = 0
    """Of the calls, how many a provider batch answered (--batch), at batch prices."""


class UnfinishedCalls(Part):
    """The key of `usage.unfinished` before its tokens (kept first, as in Calls)."""

    calls: int = 0


class UnfinishedUsage(Tokens, UnfinishedCalls):
    """Calls sent for cases that did not finish in the session that sent them (a SIGTERM,
    Ctrl-C, a stop or a lost worker ended it first): no result line holds them, yet the
    provider billed them. Their tokens and cost are those of the replies that came.
    """


class Usage(Tokens, Calls):
    """What the run's calls cost: calls, then tokens and cost (Tokens), then latency.
    Extra keys are forbidden as in every Part (Tokens sets no config of its own).
    """

    latency_p50_s: float | None = None
    latency_p95_s: float | None = None
    unfinished: UnfinishedUsage | None = None
    """Of the calls, tokens and cost above, those of cases that did not finish in the
    session that sent them (absent when there were none)."""


class CriterionSummary(Part):
    """Mean of one criterion across cases."""

    mean: float | None = None
    mean_ci: Interval = (None, None)
    no_interval: dict[str, str] | None = None
    """Why `mean_ci` is null while `mean` has a value (as the summary's `no_interval`)."""


class CategorySummary(Part):
    """The headline numbers for one value of the cases' `category` (score: mean and pass
    rate; pairwise: win rate and the tally).
    """

    n: int
    mean: float | None = None
    mean_ci: Interval | None = None
    pass_rate: float | None = None
    pass_rate_ci: Interval | None = None
    win_rate: float | None = None
    win_rate_ci: Interval | None = None
    wins: int | None = None
    losses: int | None = None
    ties: int | None = None
    p_value: float | None = None
    """The test of this category against the summary's `category_calls.reference`."""
    p_adjusted: float | None = None
    """`p_value` adjusted over every category tested (Holm, or Benjamini–Hochberg)."""
    mark: str | None = None
    """"above", "below" (adjusted p < α), "not significant", or "too few" (n < 10)."""
    no_interval: dict[str, str] | None = None
    """Why an interval here is null while its number has a value (as the summary's)."""


class CategoryCalls(Record):
    """How the categories' above/below marks were decided: one test per category against
    a reference, adjusted for the number of categories tested.
    """

    test: str
    reference: float
    """The win-rate bar (the gate's, else 50%) or, for scores, each category's own rest."""
    correction: str
    """"holm" (family-wise error ≤ α) or "bh" (Benjamini–Hochberg, false discoveries ≤ α)."""
    alpha: float
    tested: int
    """Categories in the family (those of at least 10 cases)."""


class TierCalls(Part):
    """The keys of a cascade tier before its tokens, in a base of their own so that they
    stay first (pydantic lays out base fields first).
    """

    decided: int = 0
    """Cases whose verdict is this tier's."""
    calls: int = 0


class TierUsage(Tokens, TierCalls):
    """What one tier of a cascade decided and cost (tokens and cost from Tokens)."""


class ScreenAgreement(Part):
    """Escalated cases where both tiers gave a verdict: how often the screen's verdict was
    the strong judge's.
    """

    on: str
    """What is compared: pass/fail, score, choice or winner."""
    n: int = 0
    agreed: int = 0
    rate: float | None = None
    rate_ci: Interval = (None, None)
    """Wilson 95% interval."""
    mean_abs_score_diff: float | None = None
    """Pointwise: mean |screen score - strong score|."""


class CascadeSummary(Part):
    """A --screen run: how many cases escalated, what each tier cost, what it saved."""

    screen: str
    judges: list[str]
    """The strong tier."""
    rule: str
    """The --escalate rule as run (the default spelled out)."""
    n_cases: int
    escalated: int
    escalated_share: float | None = None
    escalated_share_ci: Interval = (None, None)
    tiers: dict[str, TierUsage]
    """"screen" and "strong"."""
    cost_usd: float
    """Both tiers together: what the run paid."""
    all_strong_cost_usd: float | None = None
    """Estimate: every case judged by the strong tier (its real cost on the escalated cases;
    the screen's token counts at the strong judges' prices on the others)."""
    saved_usd: float | None = None
    saved_share: float | None = None
    unpriced: list[str] = Field(default_factory=list)
    """Strong judges without a known price (no estimate is made then)."""
    agreement: ScreenAgreement


class FailedCase(Part):
    """A case that got no verdict, and why."""

    id: str
    error: str


class SequentialSummary(Record):
    """A --sequential run: when its confidence sequence decided, and how."""

    metric: GateMetric
    threshold: float
    alpha: float
    method: str
    decision: str
    """"pass" (the sequence lies above the threshold), "fail" (below) or "undecided" (the
    cases ran out first: the gate fails, nothing shows the bar is met)."""
    decided_after: int | None
    """Cases of the random order taken when the decision was made (None: undecided)."""
    n_cases: int
    """Cases in the data: what a fixed-size run would have judged."""
    judged: int
    """Cases judged (those in flight at the decision finish and are kept)."""
    observations: int
    """Cases with a verdict in the sequence at the decision (failed cases add none)."""
    bound: float | None
    """The end of the sequence that decided: its lower end for a pass, upper for a fail."""
    interval: tuple[float, float]
    """The confidence sequence at the decision (or at the end), on the metric's scale."""
    saved_cases: int
    saved_usd: float
    """Estimate: the run's cost per judged case times the cases left unjudged."""
    order_seed: int


class CorrectedEstimate(Record):
    """A human-corrected estimate (PPI++, from --labels): how it was made, beside the
    summary's stable `<metric>_corrected` and `<metric>_corrected_ci` keys.
    """

    raw: float | None
    """The judge's own number over every graded case."""
    corrected: float | None
    ci: Interval
    """95% normal interval of the corrected estimate."""
    n_labeled: int
    """Graded cases with a human label."""
    n_unlabeled: int
    lam: float | None
    """The power-tuned weight of the judge's verdicts (0: labels alone; 1: plain PPI)."""
    judge_bias: float | None
    """Mean of judge − human on the labelled cases."""
    target_half_width: float | None = None
    more_labels: int | None = None
    """About how many more labelled cases would narrow the interval to ±target_half_width
    (None: not reachable by labelling every case)."""


class LabelDesign(Record):
    """`corrections.design` (issue 33): the labels were drawn by a plan with known inclusion
    probabilities (`judge review plan`), and the corrected numbers weigh each label by the
    inverse of its probability (active inference, `stats.active`), not PPI++.
    """

    strategy: str | None
    """The plan's strategy (uniform, disagreement, uncertainty); None when the labels
    do not say."""
    budget: int | None
    """The plan's budget of labels; None when the labels do not say."""
    weighted: bool
    """Whether the labels' inclusion probabilities weighed the estimate (always true here)."""
    n_weighted: int
    """Labelled graded cases with an inclusion probability: those the estimate uses."""
    n_unplanned: int
    """Labelled graded cases without one (made outside the plan): left out of the estimate,
    which is unbiased only over the plan's own draws."""
    estimator: str
    """The method, in words."""


class SpecRun(Part):
    """The evaluation spec a run is (`judge run SPEC`): its file, its hash, and the hash of
    the spec the run directory held before when a resume or --force changed it.
    """

    path: str
    hash: str
    previous: str | None = None


class SummaryHead(Part):
    """The keys every summary starts with: what ran, how many cases ended how, what it cost."""

    command: Command
    rubric: str
    rubric_version: int | str
    rubric_hash: str
    models: list[str]
    n_cases: int
    n_ok: int
    n_failed: int
    usage: Usage
    spec: SpecRun | None = None
    """The spec the run is, when `judge run SPEC` ran it (issue 35)."""


class SummaryTail(Part):
    """The keys every summary has after its command's first numbers: how the run ended."""

    failures: list[FailedCase] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    gate: GateResult | None = None
    """The gate's verdict when a threshold was given (pairwise, calibrate, `judge gate`)."""
    cascade: CascadeSummary | None = None
    """A --screen run's tiers (score, pairwise)."""
    incomplete: str | None = None
    """Why the run's numbers cannot stand for a verdict (e.g. "the judge could not grade 24
    of 30 cases"): the run then exits 3 and its gate is not evaluated."""
    sequential: SequentialSummary | None = None
    """A --sequential run's decision (score, pairwise)."""
    repeats: int | None = None
    """--repeats K: how many independent times each judge was asked each case (K >= 2)."""
    stability: float | None = None
    """--repeats K: the share of cases whose K verdicts agree."""
    stability_ci: Interval | None = None
    self_consistency: SelfConsistency | None = None
    """--repeats K: the judge's agreement with itself in detail."""
    no_interval: dict[str, str] | None = None
    """Why a statistic of the summary's own keys that has a value has no interval (its
    `_ci` is null): key → reason, e.g. "spearman" → "too few informative cases: ...". An
    object nested in the summary that holds intervals has its own `no_interval`.
    Absent when every statistic with a value has its interval."""


def calls_summary(
    test: str, reference: float, correction: Correction, calls: dict[str, Call]
) -> CategoryCalls:
    """summary.json's `category_calls`: how the marks were decided."""
    return CategoryCalls(
        test=test,
        reference=reference,
        correction=correction.value,
        alpha=ALPHA,
        tested=sum(c.p_adjusted is not None for c in calls.values()),
    )
