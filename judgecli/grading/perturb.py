"""The perturbations `judge probe` applies to a pair the judge has decided.

Each is a deterministic template (no model writes them, so a probe costs only the judge's
calls and reads the same on every run):

- `position`: the two answers swapped (the pair is judged in both orders);
- `length`: one answer padded with fluent filler that adds no content (`pad`);
- `verbosity`: one answer restated at about twice its length (`restate`): said once, then
  said again after a lead-in, so the content is the same and only the wording grows;
- `self`: no rewrite: where the data names an answer's generator (`generator_of`), a panel
  judge's verdict on a pair with one answer from its own model family (`family`) is read
  against the verdict of the panel's other families.

`unwrap` undoes `pad` and `restate` (the simulator reads a probe's answer through it).
"""

from __future__ import annotations

from enum import StrEnum

from judgecli.inputs.dataset import Case
from judgecli.inputs.pairs import Pair


class Probe(StrEnum):
    """A bias `judge probe` measures: the perturbation, and the summary's `name`."""

    POSITION = "position"
    LENGTH = "length"
    VERBOSITY = "verbosity"
    SELF = "self"


class Side(StrEnum):
    """Which answer of a pair a perturbation changes."""

    OLD = "old"
    NEW = "new"


FILLER = (
    "It is worth taking a moment to consider this question carefully.",
    "There are several ways to look at it, and each of them has its place.",
    "With that in mind, the points above are the ones that matter here.",
    "As always, the details can depend on the particular situation at hand.",
    "Hopefully this overview is a useful starting point for thinking it through.",
    "In any case, it is a topic that many people find genuinely interesting.",
)
"""Sentences that read fluently after any answer and add nothing to it."""

RESTATE_LEAD = "To put the same answer another way:"
RESTATE_CLOSE = "In short, that is the whole of it."

PERTURBED = (Probe.LENGTH, Probe.VERBOSITY)
"""The probes that rewrite an answer (and are judged as new pairs)."""


def pad(text: str) -> str:
    """`text` followed by filler sentences of about its own length (at least two)."""
    want = max(len(text), 1)
    said: list[str] = []
    while sum(len(s) + 1 for s in said) < want or len(said) < 2:
        said.append(FILLER[len(said) % len(FILLER)])
    return f"{text}\n\n{' '.join(said)}"


def restate(text: str) -> str:
    """`text` said twice: as it is, then after a lead-in (about twice its length)."""
    return f"{text}\n\n{RESTATE_LEAD} {text}\n\n{RESTATE_CLOSE}"


def unwrap(text: str) -> tuple[Probe | None, str]:
    """The perturbation `text` carries (None: none) and the answer without it."""
    restated = f"\n\n{RESTATE_LEAD} "
    if text.endswith(f"\n\n{RESTATE_CLOSE}") and restated in text:
        first, _, rest = text.partition(restated)
        if rest == f"{first}\n\n{RESTATE_CLOSE}":
            return Probe.VERBOSITY, first
    head, sep, tail = text.rpartition("\n\n")
    if sep and tail.startswith(FILLER[0]) and pad(head) == text:
        return Probe.LENGTH, head
    return None, text


def perturbable(pair: Pair) -> bool:
    """Whether the pair's answers are plain text (a conversation or an agent's run is not
    rewritten).
    """
    return all(c.output is not None and c.messages is None for c in (pair.old, pair.new))


def probe_id(pair_id: str, probe: Probe) -> str:
    """The id a perturbed pair is judged and stored under: `p-01~length`."""
    return f"{pair_id}~{probe.value}"


def base_id(item_id: str) -> tuple[str, Probe | None]:
    """The pair's id and the probe of a stored result's id (None: the pair as given)."""
    head, sep, tail = item_id.rpartition("~")
    if sep and tail in {p.value for p in PERTURBED}:
        return head, Probe(tail)
    return item_id, None


def perturbed(pair: Pair, probe: Probe, side: Side) -> Pair:
    """The pair with `side`'s answer rewritten by `probe` (length or verbosity), under
    `probe_id`.
    """
    rewrite = pad if probe is Probe.LENGTH else restate
    new_id = probe_id(pair.id, probe)

    def changed(case: Case, touched: bool) -> Case:
        update: dict[str, object] = {"id": new_id}
        if touched and case.output is not None:
            update["output"] = rewrite(case.output)
        return case.model_copy(update=update)

    return Pair(old=changed(pair.old, side is Side.OLD), new=changed(pair.new, side is Side.NEW))


def generator_of(case: Case) -> str | None:
    """The model a case's answer came from, where the data names it (a `generator` or
    `model` field).
    """
    for key in ("generator", "model"):
        value = case.metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def family(model: str) -> str:
    """A model's family: the first word of its bare name (`openai/gpt-4o-mini` → `gpt`,
    `claude-3-5-sonnet` → `claude`, `old-assistant-v1` → `old`).
    """
    bare = model.rsplit("/", 1)[-1].casefold().replace("_", "-")
    return bare.split("-", 1)[0].rstrip("0123456789.") or bare
