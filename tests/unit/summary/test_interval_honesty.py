"""Issue 29: no interval claims certainty it does not have. Every summary judge writes (score,
pairwise, calibrate on scores, choices and winners, repeats, drift, arena, refine, human-
corrected estimates, `judge report A B`) is computed on tiny (n = 1, 2, 3, 5) and all-
identical inputs, and every interval in it is checked against the rule of
`stats.interval_rule`:

- an interval is never a single point (the arena's anchor, 1000 by definition, aside);
- a proportion with a value always has an interval, inside [0, 1];
- any other statistic with a value and no interval says why (its object's `no_interval`);
- κ and the correlations have no interval when fewer than MIN_INFORMATIVE cases sit off
  the most common value on either side (counted here independently of the code).

hypothesis is not among the dev extras, so the inputs come from parametrised seeds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judgecli.commands.drift.audit import AuditedRun
from judgecli.commands.drift.measure import measure_drift
from judgecli.deciding.corrected import HumanLabels, corrected_fields
from judgecli.inputs.labels import Label, LabelSpace
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.result import CallCheck, CaseResult, CaseStatus, CheckedCall, RepeatVerdict, Winner
from judgecli.rubric import RubricKind
from judgecli.stats.interval_rule import MIN_INFORMATIVE
from judgecli.summary.arena import ScheduleSummary, summarize_arena
from judgecli.summary.arena_length import Matched
from judgecli.summary.calibrate import summarize_calibration
from judgecli.summary.compare import compare_runs
from judgecli.summary.facts import Usage
from judgecli.summary.gate_records import GateMetric
from judgecli.summary.pairwise import summarize_pairwise
from judgecli.summary.refine import summarize_refine
from judgecli.summary.run import summary_json
from judgecli.summary.score import summarize_score

POINTWISE = parse_rubric(
    "name: p\nkind: pointwise\nscale: {min: 1, max: 4}\npass_at: 3\n"
    "criteria:\n  - {name: accuracy, weight: 1}\n  - {name: clarity, weight: 1}\n"
    "prompt:\n  user: '{input} {output}'\n",
    source="p",
)
TOOL_CALLS = parse_rubric(
    "name: t\nkind: binary\nchoices: [PASS, FAIL]\ntool_calls: {match: exact}\n", source="t"
)
BINARY = parse_rubric(
    "name: b\nkind: binary\nchoices: [YES, NO]\nprompt:\n  user: '{input} {output}'\n",
    source="b",
)
PAIRWISE = parse_rubric(
    "name: pw\nkind: pairwise\nprompt:\n  user: '{input} {output_a} {output_b}'\n", source="pw"
)

PROPORTIONS = frozenset(
    {
        "pass_rate",
        "win_rate",
        "loss_rate",
        "consistency",
        "accuracy",
        "within_one",
        "agreement_with_ties",
        "agreement_without_ties",
        "stability",
        "pass_k",
        "pass_at_k",
        "flip_rate",
        "escalated_share",
        "rate",
        "pass_rate_first",
        "pass_rate_final",
        "win_rate_weighted",
        "pass_rate_weighted",
        "win_rate_corrected",
        "pass_rate_corrected",
        "win_rate_length_controlled",
        # Issue 32: a tool-call check's micro-averaged numbers (summary.tool_calls).
        "precision",
        "recall",
        "f1",
    }
)
"""Every summary key that is a proportion (share of cases, or a mean of probabilities)."""

AGREEMENT_BEYOND_CHANCE = ("cohen_kappa", "weighted_kappa", "spearman", "kendall", "pearson")


@dataclass(frozen=True)
class Sample:
    """Tiny inputs: n cases, every verdict alike or drawn from the seed."""

    n: int
    identical: bool
    seed: int

    def draw(self, values: Sequence[Any]) -> list[Any]:
        """n values: the first one n times when identical, else drawn at random."""
        if self.identical:
            return [values[0]] * self.n
        rng = np.random.default_rng(self.seed)
        return [values[i] for i in rng.integers(0, len(values), size=self.n)]


SAMPLES = [
    pytest.param(Sample(n, identical, seed), id=f"n{n}-{'same' if identical else 'mixed'}-{seed}")
    for n in (1, 2, 3, 5)
    for identical, seeds in ((True, (0,)), (False, range(6)))
    for seed in seeds
]


# ── what every interval must satisfy ───────────────────────────────────────────────────


def value_key(key: str) -> str:
    """The statistic an interval key belongs to."""
    if key == "win_rate_ci_wilson":
        return "win_rate"
    if key == "lift_ci_t":
        return "lift"
    return key.removesuffix("_ci")


CI_VALUES = {"ci": ("corrected", "delta", "estimate")}
"""Objects whose interval is `ci`: the key of its value there (CorrectedEstimate, a
`judge report A B` delta, an arena style coefficient)."""


def intervals(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any], str, str]]:
    """(path, object, interval key, value key) of every interval in a summary's JSON."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from intervals(item, f"{path}[{i}]")
    if not isinstance(node, dict):
        return
    for key, child in node.items():
        if key == "ci":
            value = next((v for v in CI_VALUES["ci"] if v in node), None)
            if value is not None:
                yield path, node, key, value
        elif key.endswith("_ci") or key in ("win_rate_ci_wilson", "lift_ci_t"):
            yield path, node, key, value_key(key)
        elif key not in ("gate", "corrections"):  # copies of the summary's own intervals
            yield from intervals(child, f"{path}.{key}")


def check_honest(summary: dict[str, Any], *, anchor: str | None = None) -> int:
    """Assert the rule on every interval of a summary's JSON; returns how many it saw."""
    seen = 0
    for path, obj, key, name in intervals(summary):
        seen += 1
        ci = obj.get(key) or (None, None)
        value = obj.get(name)
        where = f"{path}.{key} = {ci} (value {value})"
        if ci[0] is not None and ci[1] is not None:
            if obj.get("name") != anchor or anchor is None:
                assert ci[0] < ci[1], f"zero-width interval: {where}"
            if name in PROPORTIONS:
                assert 0.0 <= ci[0] < ci[1] <= 1.0, (
                    f"a proportion's interval leaves [0, 1]: {where}"
                )
            continue
        if value is None:
            continue
        assert name not in PROPORTIONS, f"a proportion with a value has no interval: {where}"
        why = obj.get("no_interval")
        reason = why if isinstance(why, str) else (why or {}).get(name)
        assert reason, f"no interval and no reason: {where}"
    return seen


def off_most_common(values: Sequence[Any]) -> int:
    """Cases off the most common value (one row per case)."""
    return len(values) - Counter(values).most_common(1)[0][1] if values else 0


# ── inputs ─────────────────────────────────────────────────────────────────────────────


def ok(i: int, **fields: Any) -> CaseResult:
    return CaseResult(id=f"c{i}", status=CaseStatus.OK, rubric_hash="h", **fields)


def scored(sample: Sample, *, repeats: int = 0) -> list[CaseResult]:
    scores = sample.draw([4.0, 1.0, 2.0, 3.0])
    clarity = Sample(sample.n, sample.identical, sample.seed + 100).draw([2.0, 4.0, 3.0])
    rows = []
    for i, (score, other) in enumerate(zip(scores, clarity, strict=True)):
        fields: dict[str, Any] = {}
        if repeats:
            asked = Sample(repeats, sample.identical, sample.seed * 10 + i).draw([score, 1.0, 4.0])
            verdicts = [
                RepeatVerdict(repeat=r, score=s, passed=s >= 3) for r, s in enumerate(asked)
            ]
            fields = {"repeats": verdicts, "stable": len(set(asked)) == 1}
        rows.append(
            ok(
                i,
                score=score,
                passed=score >= 3,
                criteria={"accuracy": score, "clarity": other},
                category="ab"[i % 2],
                **fields,
            )
        )
    return rows


def chosen(sample: Sample) -> list[CaseResult]:
    choices = sample.draw(["YES", "NO"])
    probability = sample.draw([0.9, 0.2, 0.6])
    return [
        ok(
            i,
            choice=c,
            passed=c == "YES",
            probabilities={"YES": p, "NO": 1 - p},
            category="ab"[i % 2],
        )
        for i, (c, p) in enumerate(zip(choices, probability, strict=True))
    ]


def judged_pairs(sample: Sample) -> list[CaseResult]:
    winners = sample.draw([Winner.NEW, Winner.OLD, Winner.TIE])
    second = Sample(sample.n, sample.identical, sample.seed + 7).draw(list(Winner))
    flips = sample.draw([True, False])
    return [
        ok(
            i,
            winner=w,
            consistent=c,
            judge_winners={"m1": w, "m2": w2},
            lengths={"old": 10 + i, "new": 30 - i},
            probabilities={"new": 0.7, "old": 0.2, "tie": 0.1},
            category="ab"[i % 2],
        )
        for i, (w, w2, c) in enumerate(zip(winners, second, flips, strict=True))
    ]


def labels_for(sample: Sample, values: Sequence[Any], *, annotators: int = 1) -> list[Label]:
    out = []
    for a in range(annotators):
        drawn = Sample(sample.n, sample.identical, sample.seed + 31 * (a + 1)).draw(values)
        out += [
            Label(id=f"c{i}", value=v, annotator=f"r{a}", line=i + 1) for i, v in enumerate(drawn)
        ]
    return out


def labelled_summary(results, labels, space) -> dict[str, Any]:
    return summary_json(summarize_calibration(results, labels, space))


def assert_no_interval_from_too_few(summary: dict[str, Any], judge: list[Any], human: list[Any]):
    """κ and the correlations: none when a side has < MIN_INFORMATIVE cases off its mode."""
    if min(off_most_common(judge), off_most_common(human)) >= MIN_INFORMATIVE:
        return
    for name in AGREEMENT_BEYOND_CHANCE:
        assert summary.get(f"{name}_ci") in (None, [None, None]), (name, summary.get(f"{name}_ci"))


# ── the summaries ──────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("sample", SAMPLES)
def test_score_summaries_have_honest_intervals(sample):
    for rubric, rows in ((POINTWISE, scored(sample)), (BINARY, chosen(sample))):
        s = summary_json(summarize_score(rows, rubric=rubric, models=["m"]))
        assert check_honest(s) >= 1


def checked_calls(sample: Sample) -> list[CaseResult]:
    """Cases whose tool calls were checked: each (matched, missed, extra) drawn from the
    sample, among them a case expecting no call that made none (it informs nothing)."""
    counts = sample.draw([(1, 0, 0), (2, 1, 0), (0, 2, 0), (0, 0, 2), (1, 0, 1), (0, 0, 0)])
    rows = []
    for i, (matched, missed, extra) in enumerate(counts):
        call = CheckedCall(name="f", arguments={"i": i})
        check = CallCheck(
            matched=[call] * matched, missed=[call] * missed, extra=[call] * extra, decided=True
        )
        rows.append(
            ok(i, choice="PASS", passed=check.passed, tool_calls=check, category="ab"[i % 2])
        )
    return rows


@pytest.mark.parametrize("sample", SAMPLES)
def test_tool_call_summaries_have_honest_intervals(sample):
    # Issue 32: precision, recall and F1 are proportions (of calls): an interval whenever
    # they have a value, never a point, in [0, 1] — also when every case is perfect.
    s = summary_json(summarize_score(checked_calls(sample), rubric=TOOL_CALLS, models=[]))
    calls = s["tool_calls"]
    assert check_honest(calls) == 3 * (1 + len(calls["by_category"]))


@pytest.mark.parametrize("sample", SAMPLES)
def test_repeats_have_honest_intervals(sample):
    rows = scored(sample, repeats=3)
    s = summary_json(summarize_score(rows, rubric=POINTWISE, models=["m"]))
    check_honest(s)
    details = s["self_consistency"]
    verdicts = [v["score"] for r in rows for v in (r.model_dump()["repeats"] or [])]
    per_case = [[v.score for v in r.repeats or []] for r in rows]
    common = Counter(verdicts).most_common(1)[0][0]
    off = sum(any(x != common for x in case) for case in per_case)
    if off < MIN_INFORMATIVE:
        assert details.get("fleiss_kappa_ci") in (None, [None, None])


@pytest.mark.parametrize("sample", SAMPLES)
def test_pairwise_summaries_have_honest_intervals(sample):
    rows = judged_pairs(sample)
    for models in (["m1"], ["m1", "m2"]):
        s = summarize_pairwise(rows, rubric=PAIRWISE, models=models, flip=True, flip_policy="tie")
        assert check_honest(summary_json(s)) >= 4


@pytest.mark.parametrize("sample", SAMPLES)
def test_calibrate_on_scores_has_honest_intervals(sample):
    results = scored(sample)
    for annotators in (1, 2):
        labels = labels_for(sample, [3.0, 1.0, 4.0, 2.0], annotators=annotators)
        s = labelled_summary(results, labels, LabelSpace.of(POINTWISE))
        check_honest(s)
        if annotators == 1:
            judge = [r.score for r in results]
            assert_no_interval_from_too_few(s, judge, [x.value for x in labels])


@pytest.mark.parametrize("sample", SAMPLES)
def test_calibrate_on_choices_and_winners_has_honest_intervals(sample):
    results = chosen(sample)
    labels = labels_for(sample, ["YES", "NO"])
    s = labelled_summary(results, labels, LabelSpace.of(BINARY))
    check_honest(s)
    assert_no_interval_from_too_few(s, [r.choice for r in results], [x.value for x in labels])
    pairs = judged_pairs(sample)
    labels = labels_for(sample, ["new", "old", "tie"], annotators=2)
    check_honest(labelled_summary(pairs, labels, LabelSpace(kind=RubricKind.PAIRWISE)))


def audited(name: str, summary: Any, rows: list[CaseResult]) -> AuditedRun:
    return AuditedRun(path=Path(name), summary=summary, results=rows, info={})


@pytest.mark.parametrize("sample", SAMPLES)
def test_drift_and_run_comparisons_have_honest_intervals(sample):
    moved = Sample(sample.n, sample.identical, sample.seed + 3)
    for rubric, make in ((POINTWISE, scored), (BINARY, chosen)):
        a_rows, b_rows = make(sample), make(moved)
        a = summarize_score(a_rows, rubric=rubric, models=["m"])
        b = summarize_score(b_rows, rubric=rubric, models=["m"])
        drift = measure_drift(audited("a", a, a_rows), audited("b", b, b_rows), max_shift=0.1)
        check_honest(drift.summary.model_dump(mode="json"))
        for delta in compare_runs(a, a_rows, b, b_rows):
            check_honest(vars(delta) | {"ci": list(delta.ci)})
    a_rows, b_rows = judged_pairs(sample), judged_pairs(moved)
    a = summarize_pairwise(a_rows, rubric=PAIRWISE, models=["m1"], flip=True, flip_policy="tie")
    b = summarize_pairwise(b_rows, rubric=PAIRWISE, models=["m1"], flip=True, flip_policy="tie")
    check_honest(
        measure_drift(audited("a", a, a_rows), audited("b", b, b_rows)).summary.model_dump(
            mode="json"
        )
    )


@pytest.mark.parametrize("sample", SAMPLES)
def test_arena_leaderboards_have_honest_intervals(sample):
    systems = ["x", "y", "z"]
    winners = sample.draw([Winner.NEW, Winner.OLD, Winner.TIE])
    rows, matched = [], {}
    for i, w in enumerate(winners):
        for old, new in (("x", "y"), ("y", "z"), ("x", "z")):
            cid = f"q{i}::{old}::{new}"
            rows.append(
                CaseResult(id=cid, status=CaseStatus.OK, winner=w, consistent=True, rubric_hash="h")
            )
            matched[cid] = Matched(f"q{i}", old, new)
    for anchor in (None, "x"):
        s = summarize_arena(
            rows,
            matched,
            systems=systems,
            files={n: f"{n}.jsonl" for n in systems},
            rubric=PAIRWISE,
            models=["m"],
            schedule=ScheduleSummary(kind="round-robin", pairs=3, planned=0),
            anchor=anchor,
            style_control=False,
            flip=True,
            flip_policy="tie",
            seed=0,
            resamples=200,
        )
        check_honest(s.model_dump(mode="json"), anchor=anchor)


@dataclass(frozen=True)
class Tried:
    """One answer of a refine case (refine.Attempt's fields the summary reads)."""

    attempt: int
    score: float | None
    passed: bool | None
    cost_generation_usd: float = 0.0
    cost_judging_usd: float = 0.0


@pytest.mark.parametrize("sample", SAMPLES)
def test_refine_and_corrected_estimates_have_honest_intervals(sample):
    rows = scored(sample)
    first = Sample(sample.n, sample.identical, sample.seed + 5).draw([1.0, 2.0, 3.0])
    attempts = [
        [Tried(0, f, f >= 3), Tried(1, r.score, r.passed)] for f, r in zip(first, rows, strict=True)
    ]
    refined = summarize_refine(
        rows,
        attempts,
        rubric=POINTWISE,
        judges=["m"],
        generator="g",
        generation_usage=Usage(),
        max_attempts=2,
        success_rating=3.0,
    )
    check_honest(summary_json(refined))
    labels = labels_for(sample, [4.0, 1.0, 3.0])
    human = HumanLabels(labels=labels, space=LabelSpace.of(POINTWISE), pass_at=3.0)
    corrected = corrected_fields(rows, human, [GateMetric.PASS_RATE, GateMetric.MEAN])
    check_honest(corrected)


# ── the trial's cases, by name ─────────────────────────────────────────────────────────


def test_five_labels_all_agreeing_get_wilson_not_a_point():
    # Issue 29 (review finding 4): "accuracy 100.0% [100.0%, 100.0%]" on 5 labels passed
    # `--min-accuracy 0.9 --on lower-bound`. Wilson on 5 of 5:
    # statsmodels.stats.proportion.proportion_confint(5, 5, method="wilson").
    results = [ok(i, winner=Winner.NEW, consistent=True) for i in range(5)]
    labels = [Label(id=f"c{i}", value="new", annotator=None, line=i + 1) for i in range(5)]
    s = summarize_calibration(results, labels, LabelSpace(kind=RubricKind.PAIRWISE))
    assert s.accuracy == 1.0
    assert s.accuracy_ci == pytest.approx((0.5655175352168252, 1.0), abs=1e-12)


def test_a_judge_that_scored_seven_of_eight_cases_alike_has_no_correlation_interval():
    # Issue 29: the llama calibrate, 8 cases, 7 scored alike by the judge: Spearman
    # −0.48 [−1.00, −0.31] and Kendall [−1.00, −0.30] claimed significance from one case.
    judge = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 3.0]
    human = [2.0, 4.0, 1.0, 3.0, 4.0, 2.0, 3.0, 1.0]
    results = [ok(i, score=s, passed=s >= 3) for i, s in enumerate(judge)]
    labels = [Label(id=f"c{i}", value=h, annotator=None, line=i + 1) for i, h in enumerate(human)]
    s = summarize_calibration(results, labels, LabelSpace.of(POINTWISE))
    assert s.spearman is not None
    assert s.spearman < 0
    for name in ("spearman", "kendall", "pearson", "cohen_kappa", "weighted_kappa"):
        assert getattr(s, f"{name}_ci") == (None, None), name
    assert s.no_interval is not None
    assert s.no_interval["spearman"] == (
        "too few informative cases: the judge's score is 1 on 7 of 8 cases (an interval "
        "needs 3 cases off each side's most common)"
    )
