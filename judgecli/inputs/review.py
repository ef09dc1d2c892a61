"""The human review queue: which cases of a finished run people should label, and the
sheet they label them on (pure; store.sheets writes it). A pairwise sheet is blind: its
answers are A and B in a seeded order per row (Blinding), its key kept with the run.

`judge review export` picks a seeded sample stratified by (category, verdict), so every
kind of case the judge produced is checked in proportion to how often it occurs, and adds
every case of the groups a judge is least trustworthy on:

* inconsistent  a pairwise verdict that changed with the answers' order (consistent false)
* failed        no verdict at all (unparseable reply, transport failure)
* borderline    a pointwise score next to the pass/fail line: `pass_at - band <= score <
                pass_at + band`, the band being one point on a whole-number scale (on a
                1-4 scale with pass_at 3, the scores 2 and 3: the last failing and the
                first passing score) and a tenth of a continuous scale (the rubric's
                Scale.borderline_band, as the --screen cascade uses). Without a rubric
                pass_at the median of the run's scores stands in for it. Binary and
                pairwise verdicts have no borderline.
* disagreement  the judges of a panel gave different verdicts, or, in a --screen run, the
                screen and the strong judge did on an escalated case (pass/fail, choice or
                winner): the cases two judges could not settle
"""

from __future__ import annotations

import hashlib
import math
import random
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from judgecli.errors import ConfigError, InputError
from judgecli.inputs.dataset import Case, case_from, check_unique, open_cases
from judgecli.inputs.label_files import PLAN_COLUMNS, PlannedRow
from judgecli.inputs.rows import DataPath
from judgecli.inputs.sampling import SAMPLE_SYNTAX, SampleSize
from judgecli.result import CaseResult, CaseStatus
from judgecli.rubric import Rubric, RubricKind

SAMPLE_REASON = "sample"
Stratum = tuple[str, str]
"""(category, verdict)."""


class Group(StrEnum):
    """A group of cases exported in full with `--include`."""

    INCONSISTENT = "inconsistent"
    FAILED = "failed"
    BORDERLINE = "borderline"
    DISAGREEMENT = "disagreement"


@dataclass(frozen=True)
class Pick:
    """One case of the sheet and why it is there (sample and/or groups, in that order)."""

    result: CaseResult
    reasons: tuple[str, ...]


def parse_sample(text: str | None) -> SampleSize:
    """`10`, `10%`, `2.5%` → SampleSize; None → no sample (0 cases)."""
    if text is None:
        return SampleSize(count=0)
    match = SAMPLE_SYNTAX.match(text)
    if match is None or (not match.group(2) and "." in match.group(1)):
        raise ConfigError(
            f"--sample {text!r} is not a count or a percentage",
            hint="e.g. --sample 50 or --sample 10%",
        )
    if match.group(2):
        percent = float(match.group(1))
        if percent > 100:
            raise ConfigError(f"--sample {text}: a percentage must be at most 100%")
        return SampleSize(percent=percent)
    return SampleSize(count=int(match.group(1)))


def parse_groups(text: str | None) -> list[Group]:
    """`inconsistent,failed` → [Group.INCONSISTENT, Group.FAILED] (order kept, no repeats)."""
    groups: list[Group] = []
    for part in (text or "").split(","):
        name = part.strip().casefold()
        if not name:
            continue
        try:
            group = Group(name)
        except ValueError:
            raise ConfigError(
                f"--include: {part.strip()!r} is not a group",
                hint="choose from " + ",".join(g.value for g in Group),
            ) from None
        if group not in groups:
            groups.append(group)
    return groups


def verdict_of(result: CaseResult) -> str:
    """The case's verdict as one word: a score, a choice, a winner, `failed` or `dropped`."""
    if result.status is CaseStatus.FAILED:
        return "failed"
    if result.winner is not None:
        return result.winner.value
    if result.choice is not None:
        return result.choice
    if result.score is not None:
        return f"{result.score:g}"
    return "dropped"


def borderline_centre(results: Sequence[CaseResult], pass_at: float | None) -> float | None:
    """The pass/fail line borderline is measured from: pass_at, else the median score."""
    if pass_at is not None:
        return pass_at
    scores = [r.score for r in results if r.status is CaseStatus.OK and r.score is not None]
    return statistics.median(scores) if scores else None


def panel_disagrees(result: CaseResult) -> bool:
    """Did two judges of a panel give different verdicts?"""
    if result.judge_winners:
        return len({w for w in result.judge_winners.values() if w is not None}) > 1
    by_model: dict[str, set[object]] = defaultdict(set)
    for judgement in result.judgements:
        if judgement.verdict is not None:
            verdict = judgement.verdict
            by_model[judgement.model].add(verdict.choice or verdict.score)
    answers = {frozenset(values) for values in by_model.values()}
    return len(by_model) > 1 and len(answers) > 1


def tiers_disagree(result: CaseResult) -> bool:
    """Cascade: did the screen's verdict differ from the strong judge's on an escalated case?"""
    screen = result.screen
    if screen is None or CaseStatus.FAILED in (screen.status, result.status):
        return False
    return decision(screen) != decision(result)


def decision(result: CaseResult) -> tuple[object, ...]:
    """The verdict a user acts on: the winner, the choice, pass/fail (else the score)."""
    return (result.winner, result.choice, result.score if result.passed is None else result.passed)


def borderline(score: float | None, centre: float | None, band: float = 1.0) -> bool:
    """Is the score next to the pass/fail line (centre - band <= s < centre + band)?"""
    return score is not None and centre is not None and centre - band <= score < centre + band


def groups_of(result: CaseResult, *, centre: float | None, band: float = 1.0) -> set[Group]:
    """Every group the case belongs to."""
    groups = set()
    if result.consistent is False:
        groups.add(Group.INCONSISTENT)
    if result.status is CaseStatus.FAILED:
        groups.add(Group.FAILED)
    if result.status is CaseStatus.OK and borderline(result.score, centre, band):
        groups.add(Group.BORDERLINE)
    if panel_disagrees(result) or tiers_disagree(result):
        groups.add(Group.DISAGREEMENT)
    return groups


def stratum_of(result: CaseResult) -> Stratum:
    """The sampling stratum: (category, verdict)."""
    return (result.category or "", verdict_of(result))


def allocate(sizes: dict[Stratum, int], n: int, rng: random.Random) -> dict[Stratum, int]:
    """Split n over the strata in proportion to their sizes (largest remainder): each
    stratum gets the floor or the ceiling of its exact share; remainders tie-break at random.
    """
    total = sum(sizes.values())
    shares = {key: n * size / total for key, size in sizes.items()}
    counts = {key: math.floor(share) for key, share in shares.items()}
    keys = sorted(sizes)
    rng.shuffle(keys)  # a seeded order decides equal remainders
    keys.sort(key=lambda k: shares[k] - counts[k], reverse=True)
    for key in keys[: n - sum(counts.values())]:
        counts[key] += 1
    return counts


def stratified_sample(results: Sequence[CaseResult], n: int, *, seed: int) -> set[str]:
    """The ids of a seeded sample of n cases, stratified by (category, verdict)."""
    if n <= 0 or not results:
        return set()
    rng = random.Random(seed)
    strata: dict[Stratum, list[str]] = defaultdict(list)
    for result in results:
        strata[stratum_of(result)].append(result.id)
    counts = allocate({key: len(ids) for key, ids in strata.items()}, n, rng)
    chosen: set[str] = set()
    for key in sorted(strata):
        # sorted ids: the same seed picks the same cases whatever order results.jsonl has
        chosen.update(rng.sample(sorted(strata[key]), counts[key]))
    return chosen


def choose_cases(
    results: Sequence[CaseResult],
    *,
    sample: SampleSize,
    include: Sequence[Group],
    seed: int,
    pass_at: float | None = None,
    band: float = 1.0,
) -> list[Pick]:
    """The sheet's cases, in results order: the stratified sample plus every case of the
    included groups, each case once with all its reasons.
    """
    sampled = stratified_sample(results, sample.of(len(results)), seed=seed)
    centre = borderline_centre(results, pass_at) if Group.BORDERLINE in include else None
    picks = []
    for result in results:
        groups = groups_of(result, centre=centre, band=band)
        reasons = [SAMPLE_REASON] * (result.id in sampled)
        reasons += [g.value for g in include if g in groups]
        if reasons:
            picks.append(Pick(result=result, reasons=tuple(reasons)))
    return picks


@dataclass(frozen=True)
class KeyEntry:
    """What a blind pairwise row's code stands for: the case, and which of A and B is NEW."""

    id: str
    new: str
    """The column that holds NEW's answer: A or B."""
    reasons: tuple[str, ...] = ()
    """Why the case is on the sheet (kept here, off the sheet: they hint at the verdict)."""


@dataclass(frozen=True)
class ReviewKey:
    """A run's `review-key.json`: the salt of its blind sheets, and every code they used."""

    path: Path
    salt: str
    codes: dict[str, KeyEntry]


@dataclass(frozen=True)
class Blinding:
    """How a pairwise sheet hides which answer is NEW: each row shows the two answers as A
    and B, in an order drawn from a keyed hash of (seed, id), and a code that the run's key
    (`review-key.json`) maps back. The salt is the run's secret: without it a rater who
    knows the seed and the id cannot work the order out.
    """

    salt: str
    seed: int

    def entry(self, case_id: str, reasons: tuple[str, ...]) -> tuple[str, KeyEntry]:
        """The row's code and key entry (the same for the same salt, seed and id). The code
        starts with a letter so that a spreadsheet keeps it as text (`1e50...` is a number).
        """
        digest = hashlib.blake2b(
            f"{self.seed}\0{case_id}".encode(), key=self.salt.encode(), digest_size=8
        ).digest()
        new = "A" if digest[-1] & 1 else "B"
        return f"k{digest[:5].hex()}", KeyEntry(id=case_id, new=new, reasons=reasons)


@dataclass(frozen=True)
class Sheet:
    """A labelling sheet: named columns, one row per case, and the label scale's note."""

    columns: list[str]
    rows: list[dict[str, str]]
    label_note: str | None
    """What a label may be, e.g. `1-4; pass at 3` (the CSV puts it in the label header)."""
    key: dict[str, KeyEntry] = field(default_factory=dict)
    """A blind pairwise sheet: each row's code → what it stands for."""


def label_note(rubric: Rubric | None, *, pairwise: bool) -> str | None:
    """The rubric's scale as a short note for raters."""
    if pairwise:
        return "A, B or tie"
    if rubric is None:
        return None
    if rubric.kind is RubricKind.POINTWISE and rubric.scale is not None:
        scale = f"{rubric.scale.min:g}-{rubric.scale.max:g}"
        return scale + (f"; pass at {rubric.pass_at:g}" if rubric.pass_at is not None else "")
    if rubric.choices:
        return "one of " + ", ".join(rubric.choices)
    return None


def build_sheet(
    picks: Sequence[Pick],
    cases: dict[str, Case] | tuple[dict[str, Case], dict[str, Case]],
    *,
    note: str | None,
    show_verdict: bool,
    blinding: Blinding | None = None,
    planned: Mapping[str, PlannedRow] | None = None,
) -> Sheet:
    """The sheet's rows: the case text a rater needs (joined on id), a blank label and
    annotator, and the judge's verdict only when asked (raters shown it anchor on it).

    A pointwise row says why the case is there. A pairwise row (cases given as (OLD, NEW),
    with a `blinding`) shows the answers as `output_a`/`output_b` in a per-row order, with
    a `code` the sheet's key maps back, and no reason: "inconsistent" would tell raters the
    judge hesitated. Its verdict, when shown, is A, B or tie.

    A sheet of a label plan (`planned`, issue 33) carries each row's inclusion probability,
    strategy and budget after the label, so the labels read back from it keep them.

    Raises:
        InputError: If a picked case is missing from the cases.
        ValueError: If cases and blinding do not fit (pairwise needs one, pointwise none).
    """
    if isinstance(cases, tuple) != (blinding is not None):
        raise ValueError("a pairwise sheet, and only one, is built with a blinding")
    rows, key = [], {}
    for pick in picks:
        found = (
            [c.get(pick.result.id) for c in cases]
            if isinstance(cases, tuple)
            else [cases.get(pick.result.id)]
        )
        present = [c for c in found if c is not None]
        if len(present) < len(found):
            raise InputError(
                f"case {pick.result.id!r} of the run is not in the cases file(s)",
                hint="pass the dataset the run judged with --cases (--old/--new for pairwise)",
            )
        first = present[0]
        row = {
            "id": pick.result.id,
            "category": pick.result.category or first.category or "",
            # A conversation's last user turn and answer (its whole text is in results).
            "input": first.field_text("input") or "",
        }
        verdict = verdict_of(pick.result)
        if blinding is not None:
            code, entry = blinding.entry(pick.result.id, pick.reasons)
            key[code] = entry
            old = present[0].field_text("output") or ""
            new = present[1].field_text("output") or ""
            row |= {"code": code} | (
                {"output_a": new, "output_b": old}
                if entry.new == "A"
                else {"output_a": old, "output_b": new}
            )
            letters = {"new": entry.new, "old": "B" if entry.new == "A" else "A"}
            verdict = letters.get(verdict, verdict)
        else:
            output = first.field_text("output") or ""
            row |= {"output": output, "reason": "; ".join(pick.reasons)}
        row["reference"] = first.reference or ""
        row |= {"verdict": verdict, "label": "", "annotator": ""}
        if planned is not None:
            plan = planned[pick.result.id]
            row |= {
                "inclusion_probability": repr(plan.inclusion_probability),
                "strategy": plan.strategy or "",
                "budget": "" if plan.budget is None else str(plan.budget),
            }
        rows.append(row)
    columns = (
        ["id", "code", "category", "input", "output_a", "output_b"]
        if blinding
        else ["id", "category", "input", "output"]
    )
    columns += ["reference"] * any(row["reference"] for row in rows)
    columns += ["reason"] * (blinding is None) + ["verdict"] * show_verdict
    columns += ["label", "annotator"] + list(PLAN_COLUMNS) * (planned is not None)
    return Sheet(
        columns=columns,
        rows=[{k: r[k] for k in columns} for r in rows],
        label_note=note,
        key=key,
    )


def read_cases(path: DataPath, field_map: dict[str, str]) -> dict[str, Case]:
    """A dataset's cases by id (the text columns of the sheet), with file:line errors;
    `field_map` is the run's `--field` mapping (run.json `config.field_map`).
    """
    cases: dict[str, Case] = {}
    first_line: dict[str, int] = {}
    source = open_cases(path)
    for row in source.rows():
        case = case_from(source, row.number, row.fields, field_map=field_map, requires=[])
        check_unique(source, case, first_line)
        cases[case.id] = case
    return cases
