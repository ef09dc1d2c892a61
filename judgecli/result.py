"""Results: one line of `results.jsonl` per case, and one judgement per judge call.

The keys are a contract (docs/results.md, "Stable keys"): users' CI scripts read them with `jq`.
Keys may be added; none may be renamed. A key that means nothing for a case is left out of
its line (docs/contract.md), never written empty.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from judgecli.usage import Metered
from judgecli.verdict import Verdict


class CaseStatus(StrEnum):
    """Whether a case got a verdict."""

    OK = "ok"
    FAILED = "failed"


class Winner(StrEnum):
    """A pairwise verdict from NEW's point of view, after mapping positions back."""

    OLD = "old"
    NEW = "new"
    TIE = "tie"


OUTCOME = {Winner.NEW: 1.0, Winner.TIE: 0.5, Winner.OLD: 0.0}
"""NEW's outcome of a pairwise verdict: what its win rate is the mean of (ties count half)."""


class Tier(StrEnum):
    """Which judge of a cascade (`--screen`) decided a case."""

    SCREEN = "screen"
    STRONG = "strong"


class Order(StrEnum):
    """Which answer a pairwise judge saw first (in position A)."""

    OLD_NEW = "old-new"
    NEW_OLD = "new-old"


class JudgementHead(BaseModel):
    """The keys of a judgement before its spend: who judged and what it said. A base of its
    own so that results.jsonl keeps them first (pydantic lays out base fields first).
    """

    model: str
    order: Order | None = None
    """Pairwise: which answer was shown first ("old-new" or "new-old"); None for pointwise."""
    raw: str | None = None
    """The reply text exactly as received (the last attempt's)."""
    reasoning: str | None = None
    """A reasoning model's thinking when its server returns it apart from the reply
    (`reasoning_content`), as received; never parsed for a verdict."""
    verdict: Verdict | None = None
    error: str | None = None


class Judgement(Metered, JudgementHead):
    """One judge's answer for one prompt (one order of a pairwise case), then what it cost
    (tokens, cost and latency from Metered).
    """

    model_config = ConfigDict(frozen=True)

    attempts: int = 0
    """HTTP calls made, including transport retries and re-asks after unparseable replies."""
    retries: int = 0
    """Of those, how many were retries."""
    cached: bool = False
    batched: int | None = None
    """Of the attempts, how many a provider batch answered (--batch), at batch prices."""
    repeat: int | None = None
    """--repeats K: which of the K independent asks this is (0..K-1); None without repeats."""
    score_expected: float | None = None
    """--score-mode logprob: the verdict weighed by the judge's token probabilities —
    pointwise the expected score Σ p(s)·s over the scale points, binary the probability of
    the pass choice, pairwise P(new) + ½·P(tie). `verdict` stays what the judge wrote."""
    probabilities: dict[str, float] | None = None
    """--score-mode logprob: the probability of each scale point ("1".."5"), choice, or
    pairwise winner ("old", "new", "tie", mapped back through `order`), renormalised over
    the valid ones among the top logprobs where the reply writes its verdict."""


class RepeatVerdict(BaseModel):
    """--repeats K: the verdict of one repeat of a case (the panel's verdict from that
    repeat's calls, both orders reconciled for pairwise).
    """

    model_config = ConfigDict(frozen=True)

    repeat: int
    score: float | None = None
    choice: str | None = None
    passed: bool | None = None
    winner: Winner | None = None
    """Pairwise: None when the flip policy dropped this repeat."""


class ItemResult(BaseModel):
    """One item of a case's checklist with its verdict (results.jsonl's `items`)."""

    model_config = ConfigDict(frozen=True)

    item: int
    """Its place in the case's `rubric_items` (1 for the first)."""
    criterion: str
    points: int | float
    tags: list[str] = Field(default_factory=list)
    met: bool
    """Whether the judge found the criterion met (for negative points: the thing that must
    not happen happened)."""
    reasoning: str
    """The judge's reason for this item."""


class CheckedCall(BaseModel):
    """One call in a case's tool-call check (CaseResult.tool_calls): a call the case
    expected, a call the run made, or the two matched.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    arguments: Any = None
    """The arguments of the call made (of a missed call: those expected), as parsed JSON."""
    argument_schemas: dict[str, Any] | None = None
    """A missed call: the schemas its arguments had to validate against, if it had any."""
    expected: int | None = None
    """Its index in the case's `expected_tool_calls` (matched and missed calls)."""
    call: int | None = None
    """Its index among the calls the run made, in the order made (matched and extra calls)."""
    message: int | None = None
    """The index in the case's `messages` of the assistant turn that made it."""


class CallCheck(BaseModel):
    """A case's tool calls checked against its `expected_tool_calls` (grading.tool_calls):
    results.jsonl's `tool_calls`. Each expected call is matched to at most one call made.
    """

    model_config = ConfigDict(frozen=True)

    matched: list[CheckedCall] = Field(default_factory=list)
    """Expected calls the run made (true positives), in the order expected."""
    missed: list[CheckedCall] = Field(default_factory=list)
    """Expected calls the run did not make (false negatives)."""
    extra: list[CheckedCall] = Field(default_factory=list)
    """Calls the run made that match no expected call (false positives)."""
    decided: bool = False
    """Whether the check gave the case's verdict: its calls were checked and no judge was
    asked about it (the rubric's `tool_calls.judge`)."""

    @property
    def passed(self) -> bool:
        """Every expected call made, and no other."""
        return not self.missed and not self.extra


# Issue 32: from reading (inputs.images) to asking (grading.images makes it an image part of
# the judge's message), an image stands in its field's text as a mark: private-use
# characters around a nonce of this process, the file it came from, its detail and its URL.
# No text can forge one (it cannot know the nonce); no mark reaches results.jsonl, whose
# `case` shows `[image N]` instead and lists the images in `images` (CaseResult).
IMAGE_NONCE = secrets.token_hex(8)
IMAGE_OPEN = f"\ue000{IMAGE_NONCE}\ue002"
IMAGE_MARK = re.compile(f"{IMAGE_OPEN}([^\ue001]*)\ue002([^\ue001]*)\ue002([^\ue001]*)\ue001")
"""An image in a case's text: groups file ("" for a URL), detail ("" for none), URL."""
EMBEDDED_BYTES = 256 * 1024
"""The largest image results.jsonl (and with it report.html) keeps as a data URL."""


class ShownImage(BaseModel):
    """An image a case showed the judge (results.jsonl's `images`), `[image N]` in its text."""

    model_config = ConfigDict(frozen=True)

    field: str
    """The case text's field it is in (`input`, `output`, `conversation`, ...)."""
    image: int
    """Its N in that field's `[image N]` (1 for the field's first)."""
    file: str | None = None
    """The file it was read from, as the dataset names it (None for a URL)."""
    media_type: str | None = None
    bytes: int | None = None
    sha256: str | None = None
    """Of its bytes (None for an http(s) URL: judge never fetches one)."""
    url: str | None = None
    """The http(s) URL, or its data URL when at most EMBEDDED_BYTES (None: larger)."""

    @classmethod
    def of(cls, field: str, image: int, file: str, url: str) -> ShownImage:
        """The image of a mark: a data URL's bytes counted and hashed."""
        if not url.startswith("data:"):
            return cls(field=field, image=image, url=url)
        head, _, payload = url.partition(",")
        data = base64.b64decode(payload)
        return cls(
            field=field,
            image=image,
            file=file or None,
            media_type=head.removeprefix("data:").partition(";")[0],
            bytes=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            url=url if len(data) <= EMBEDDED_BYTES else None,
        )


def shown_images(case: dict[str, str]) -> tuple[dict[str, str], list[ShownImage]]:
    """A case's text with each image mark as `[image N]` (N counted field by field), and
    the images.
    """
    images: list[ShownImage] = []
    text: dict[str, str] = {}
    for name, value in case.items():
        count = 0

        def label(mark: re.Match[str], name: str = name) -> str:
            nonlocal count
            count += 1
            images.append(ShownImage.of(name, count, mark.group(1), mark.group(3)))
            return f"[image {count}]"

        text[name] = IMAGE_MARK.sub(label, value) if IMAGE_OPEN in value else value
    return text, images


def not_any(value: dict[str, Any]) -> bool:
    """Whether a mapping is empty: a key that would say nothing."""
    return not value


class CaseResult(BaseModel):
    """The aggregated verdict for one case, with every judgement behind it."""

    model_config = ConfigDict(frozen=True)

    id: str
    status: CaseStatus
    error: str | None = None
    category: str | None = None
    score: float | None = None
    criteria: dict[str, float] = Field(default_factory=dict)
    choice: str | None = None
    passed: bool | None = None
    """Whether the case met the rubric's bar (pass_at or pass_choice); None when unknown."""
    winner: Winner | None = None
    """Pairwise: the aggregated verdict (None when the flip policy dropped the case)."""
    consistent: bool | None = None
    """Pairwise: every judge gave the same verdict in both orders (None without a flip)."""
    # Issue 29: a score result wrote `"judge_winners": {}, "lengths": {}`, keys that mean
    # nothing there; empty, they are left out of the line (and read back as empty).
    judge_winners: dict[str, Winner | None] = Field(default_factory=dict, exclude_if=not_any)
    """Pairwise: each judge's verdict after reconciling its two orders (absent on a failed
    case)."""
    lengths: dict[str, int] = Field(default_factory=dict, exclude_if=not_any)
    """Pairwise: characters of the old and new answers (`old`, `new`; of agents' runs, of
    their turns' text, calls and tool results), and of agents' runs the tool calls each
    made (`old_steps`, `new_steps`)."""
    judgements: list[Judgement] = Field(default_factory=list)
    rubric_hash: str
    case: dict[str, str] = Field(default_factory=dict)
    """The case's text as the judge was shown it, so a verdict can be checked from the
    results alone: `input`, `output` (pairwise: `output_old` and `output_new`), `reference`,
    `context` (passages joined by blank lines) — the fields the rubric's prompt uses."""
    images: list[ShownImage] | None = None
    """The images the case showed the judge, each `[image N]` in its field of `case`
    (issue 32): its file, media type, size and sha256, and its URL (an http(s) URL, or a data
    URL of at most 256 KB, which report.html shows). None for a case without images."""
    human_labels: list[str | float] | None = None
    """Calibrate: the human label(s) of this case, as normalised for the rubric."""
    agrees: bool | None = None
    """Calibrate: whether the judge's verdict matches the humans' (None without a verdict
    or a label)."""
    attempts: list[dict[str, Any]] | None = None
    """Refine: every answer of the case with its verdict and spend (refine.Attempt)."""
    repeats: list[RepeatVerdict] | None = None
    """--repeats K: each repeat's verdict, in repeat order; the case's own verdict above is
    their aggregate (mean score; majority choice or winner, a tie or no choice without one)."""
    stable: bool | None = None
    """--repeats K: whether the K verdicts agree (the same score on an integer scale, the same
    pass/fail call on a continuous one, the same choice or winner)."""
    spread: float | None = None
    """--repeats K: pointwise, the standard deviation of the K scores; binary and pairwise,
    the share of the K verdicts that differ from the most common one."""
    turns: list[dict[str, Any]] | None = None
    """A conversation graded with `turns: each`: each assistant turn's verdict, in order —
    `turn` (1 for the first answer), `message` (its index in the case's messages), `score`,
    `criteria`, `choice`, `passed` (with --repeats, the turn's aggregate over the repeats).
    The case's verdict above is their aggregate (the rubric's `aggregate`: mean or min);
    `judgements` holds every turn's calls, turn by turn. None for any other case."""
    tool_calls: CallCheck | None = None
    """A case with `expected_tool_calls` graded with a rubric's `tool_calls` check: the
    calls matched, missed and extra. None for any other case."""
    items: list[ItemResult] | None = None
    """A case graded with a `checklist` rubric: each of its `rubric_items` with its verdict
    (`met`) and the judge's reasoning, in the case's order. The case's `score` is the points
    of the met items over the positive points (not clipped: it can be below 0), `passed`
    that score against the rubric's pass_at. None for any other case."""
    steps: list[dict[str, Any]] | None = None
    """An agent's run graded step by step (`steps: each`): each tool call's verdict, in
    order — `step` (1 for the run's first call), `tool` (its name), `message` (the index of
    the assistant turn that made it), `score`, `criteria`, `choice`, `passed`; empty for a
    run without a tool call (graded once, as a whole). The case's verdict above is their
    aggregate (the rubric's `aggregate`). None for any other case."""
    probabilities: dict[str, float] | None = None
    """--score-mode logprob: the case's probability of each value, the mean over its
    judgements (pairwise: of "old", "new" and "tie", both orders mapped back; binary: of
    each choice; pointwise: of each scale point)."""
    tier: Tier | None = None
    """Cascade: the tier whose verdict this is (None without --screen)."""
    screen: CaseResult | None = None
    """Cascade, escalated cases: the screen judge's own result, before the strong judge
    decided (its judgements are paid calls too)."""

    @model_validator(mode="before")
    @classmethod
    def images_from_marks(cls, data: Any) -> Any:
        """A case text given with image marks (as grading shows it) is kept with `[image N]`
        in their place and the images in `images`, whoever builds the result.
        """
        case = data.get("case") if isinstance(data, dict) else None
        if not case or not any(IMAGE_OPEN in value for value in case.values()):
            return data
        text, images = shown_images(case)
        return {**data, "case": text, "images": images}

    @property
    def all_judgements(self) -> list[Judgement]:
        """Every judge call behind the case: the screen's on an escalated case, then the
        deciding tier's.
        """
        return [*(self.screen.judgements if self.screen else []), *self.judgements]

    @property
    def spent_usd(self) -> float:
        """What the case cost: every judge call, plus generation for `judge refine`."""
        judged = sum(j.cost_usd for j in self.all_judgements)
        generated = sum(
            float((attempt.get("generation") or {}).get("cost_usd") or 0.0)
            for attempt in self.attempts or []
        )
        return judged + generated


DIGIT_RUNS = re.compile(r"(\d+)")


def natural_key(case_id: str) -> list[tuple[int, int | str]]:
    """Sort key that orders q-2 before q-10: how ids are listed wherever a run's cases are
    (results.jsonl holds them in the order they finished, which varies run to run).
    """
    return [(0, int(p)) if p.isdigit() else (1, p) for p in DIGIT_RUNS.split(case_id)]
