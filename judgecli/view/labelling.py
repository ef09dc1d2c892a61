"""Labelling in the viewer: what a label may be (the rubric's own terms), the blind A/B order
of a pairwise case for each rater, a posted label checked and turned into its file's line,
the next case to label (H33b's plan, `deciding.label_plan`), and agreement as raters go.

A pairwise case is shown blind, as review sheets are (inputs.review.Blinding): which answer
is A is drawn from a keyed hash of (seed, rater, case), the key being the run's secret salt
(review-key.json). The same rater sees the same order after a reload or a restart; two
raters see independent orders. A label of A, B or tie is stored as the winner in the run's
terms (old, new, tie), so `--labels` and calibrate read it as any other label.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgecli.commands.drift.audit import AuditedRun, verdict_kind
from judgecli.deciding.label_plan import LabelPlan, LabelStrategy, plan_labels
from judgecli.errors import InputError, JudgeError
from judgecli.inputs.labels import LabelSpace, normalise
from judgecli.inputs.review import Blinding, label_note
from judgecli.result import CaseResult, Winner
from judgecli.rubric import Rubric, RubricKind
from judgecli.stats.agreement import cohen_kappa, percent_agreement
from judgecli.store.labels import Value, label_line
from judgecli.summary.agreement import case_verdict
from judgecli.summary.score import ScoreSummary
from judgecli.view.runs import RunEntry

BLIND = ("A", "B", "tie")
"""A pairwise label as a rater gives it."""
DEFAULT_BUDGET = 20
"""The plan's budget when the page asks for none."""


@dataclass(frozen=True)
class Scheme:
    """What a label of this run may be, and the buttons (with their keys) that give one."""

    space: LabelSpace
    options: list[str]
    """Pointwise: the scale's points; binary: the choices; pairwise: A, B, tie."""
    note: str
    """The scale in words, e.g. `1-5; pass at 4`, and where it came from."""

    @property
    def pairwise(self) -> bool:
        """Whether labels are winners (shown blind)."""
        return self.space.kind is RubricKind.PAIRWISE


def run_rubric(entry: RunEntry) -> Rubric | None:
    """The rubric the run was judged with, when it can be found and is unchanged (its hash
    is the run's): the one its argv names, else the library's of its name.
    """
    from judgecli.commands.setup import named_rubric

    recorded = entry.info.get("rubric")
    wanted = recorded.get("hash") if isinstance(recorded, dict) else None
    argv = [str(a) for a in entry.info.get("argv") or []]
    names = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--rubric", "-r")]
    cwd = Path(str(entry.info.get("cwd") or "."))
    names = [str(cwd / n) if (cwd / n).is_file() else n for n in names]
    if isinstance(recorded, dict) and recorded.get("name"):
        names.append(str(recorded["name"]))
    for name in names:
        try:
            rubric = named_rubric(name)[1]
        except JudgeError:
            continue
        if rubric.content_hash == wanted:
            return rubric
    return None


def scheme_of(entry: RunEntry, results: Sequence[CaseResult]) -> Scheme:
    """How this run is labelled: the rubric's scale or choices when the rubric is found,
    else what the run's verdicts show (a pairwise run needs no rubric).
    """
    assert entry.summary is not None
    kind = verdict_kind(AuditedRun(entry.path, entry.summary, list(results), entry.info))
    if kind is RubricKind.PAIRWISE:
        return Scheme(LabelSpace(kind), list(BLIND), "A, B or tie (the answers are shown blind)")
    rubric = run_rubric(entry)
    if rubric is not None and rubric.kind is kind:
        space = LabelSpace.of(rubric)
        if rubric.scale is not None:
            options = [f"{p:g}" for p in rubric.scale.points]
        else:
            options = list(rubric.choices or [])
        return Scheme(
            space, options, f"{label_note(rubric, pairwise=False)} (rubric {rubric.name})"
        )
    if kind is RubricKind.BINARY:
        seen = entry.summary.choices if isinstance(entry.summary, ScoreSummary) else None
        choices = sorted(seen or {r.choice for r in results if r.choice})
        return Scheme(
            LabelSpace(kind, choices=choices), choices, "one of the run's choices (no rubric found)"
        )
    scores = [r.score for r in results if r.score is not None]
    low, high = (min(scores), max(scores)) if scores else (1.0, 5.0)
    low, high = float(int(low)), float(int(high) + (not high.is_integer()))
    options = [f"{p:g}" for p in range(int(low), int(high) + 1)]
    return Scheme(
        LabelSpace(kind, scale=(low, high)),
        options,
        f"{low:g}-{high:g}: the run's scores (its rubric was not found)",
    )


def new_slot(salt: str, seed: int, rater: str, case_id: str) -> str:
    """Where NEW's answer is shown to this rater on this case: "A" or "B"."""
    return Blinding(salt=salt, seed=seed).entry(f"{rater}\0{case_id}", ())[1].new


def stored_value(scheme: Scheme, raw: Any, slot: str) -> Value:
    """A posted label as its file holds it: a blind A/B as old/new (NEW sat in `slot`),
    anything else checked against the label space. None withdraws a label; ValueError says
    what the label may be.
    """
    if raw is None:
        return None
    if scheme.pairwise and isinstance(raw, str) and raw.strip().upper() in ("A", "B"):
        return Winner.NEW.value if raw.strip().upper() == slot else Winner.OLD.value
    if scheme.space.kind is RubricKind.POINTWISE and isinstance(raw, str):
        # A button's value is text: "3" is the score 3 (and "three" no score at all).
        with contextlib.suppress(ValueError):
            raw = float(raw)
    value = normalise(raw, scheme.space, {})
    if value is None:
        shown = ", ".join(scheme.options) if len(scheme.options) <= 12 else scheme.note
        raise ValueError(f"label {raw!r} is not one of {shown}")
    return value


def shown_value(scheme: Scheme, stored: Any, slot: str) -> Any:
    """A stored label as this rater gave it: old/new back to A/B in their order."""
    if not scheme.pairwise or stored not in (Winner.OLD.value, Winner.NEW.value):
        return stored
    other = "B" if slot == "A" else "A"
    return slot if stored == Winner.NEW.value else other


@dataclass(frozen=True)
class NextCase:
    """The case a rater should label next, and what the file records with its label."""

    id: str | None
    """None: every case of the plan (or of the run) is labelled by this rater."""
    inclusion_probability: float | None = None
    why: str = ""
    planned: int = 0
    done: int = 0


def plan_for(entry: RunEntry, strategy: str, budget: int, seed: int) -> LabelPlan:
    """H33b's plan for this run (InputError for an unknown strategy or a bad budget)."""
    try:
        chosen = LabelStrategy(strategy)
    except ValueError:
        names = ", ".join(s.value for s in LabelStrategy)
        raise InputError(f"strategy {strategy!r} is not one of {names}") from None
    return plan_labels(entry.path, budget=budget, strategy=chosen, seed=seed)


def next_case(
    entry: RunEntry, results: Sequence[CaseResult], labelled: set[str], plan: LabelPlan | None
) -> NextCase:
    """The first case of the plan this rater has not labelled; without a plan, the first
    unlabelled case in id order (no inclusion probability: not drawn by a design).
    """
    if plan is None:
        left = [r.id for r in results if r.id not in labelled]
        return NextCase(
            left[0] if left else None, done=len(results) - len(left), planned=len(results)
        )
    done = sum(c.id in labelled for c in plan.cases)
    for case in plan.cases:
        if case.id not in labelled:
            return NextCase(case.id, case.inclusion_probability, case.why, len(plan.cases), done)
    return NextCase(None, planned=len(plan.cases), done=done)


def new_line(
    case_id: str,
    value: Value,
    rater: str,
    *,
    note: str | None,
    plan: LabelPlan | None,
) -> dict[str, Any]:
    """The label's line; a case the plan drew carries its inclusion probability, the
    strategy, the budget and the seed (a case labelled off the plan carries none of them).
    """
    planned = {c.id: c for c in plan.cases} if plan is not None else {}
    case = planned.get(case_id)
    if plan is None or case is None:
        return label_line(case_id, value, rater, note=note)
    return label_line(
        case_id,
        value,
        rater,
        note=note,
        inclusion_probability=case.inclusion_probability,
        strategy=plan.strategy.value,
        budget=plan.budget,
        seed=plan.seed,
    )


def agreement(
    scheme: Scheme,
    labels: Mapping[str, Mapping[str, Mapping[str, Any]]],
    results: Sequence[CaseResult],
) -> dict[str, Any]:
    """Agreement so far: each pair of raters, and each rater with the judge, on the cases
    both labelled — n, the share of equal labels and Cohen's κ (quadratic-weighted on a
    scale, stats.agreement).
    """
    judge: dict[str, Value] = {}
    for r in results:
        verdict = case_verdict(r, scheme.space.kind)
        if verdict is not None:
            judge[r.id] = verdict
    standing = {
        rater: {i: line["label"] for i, line in lines.items()} for rater, lines in labels.items()
    }
    pairs = [
        pair_numbers(a, b, standing[a], standing[b], scheme)
        for a, b in itertools.combinations(sorted(standing), 2)
    ]
    pairs += [
        pair_numbers(rater, "judge", standing[rater], judge, scheme) for rater in sorted(standing)
    ]
    counts = {rater: len(done) for rater, done in standing.items()}
    return {"raters": counts, "pairs": pairs}


def pair_numbers(
    a: str, b: str, first: Mapping[str, Any], second: Mapping[str, Any], scheme: Scheme
) -> dict[str, Any]:
    """n, percent agreement and κ of two raters on the cases both labelled."""
    shared = sorted(first.keys() & second.keys())
    ordinal = scheme.space.kind is RubricKind.POINTWISE
    # A scale's labels are numbers (3 and 3.0 one label), ordered for the weights.
    x: list[Hashable] = [float(first[i]) if ordinal else first[i] for i in shared]
    y: list[Hashable] = [float(second[i]) if ordinal else second[i] for i in shared]
    levels = sorted(set(x) | set(y), key=lambda v: (str(type(v)), v))
    kappa = None
    if shared:
        kappa = cohen_kappa(x, y, labels=levels, weights="quadratic" if ordinal else None)
    return {
        "a": a,
        "b": b,
        "n": len(shared),
        "agreement": percent_agreement(x, y),
        "kappa": kappa,
        "weighted": scheme.space.kind is RubricKind.POINTWISE,
    }
