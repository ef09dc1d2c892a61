"""Pairs: OLD and NEW datasets joined on `id`, for `judge pairwise`.

Both files are validated in full before anything is called. Memory holds the ids and where
each row is (rows.Row.at), not the texts: pairs are read back one at a time while the
runner works.
The two sides of a pair answer the same input; of a conversation (`messages`), the same
user turns (the system prompt and the assistant turns are what a new version may change).
Agents' runs are the exception: when a simulated user drives them (tau-bench), each version
meets its own user, whose turns answer the agent's, so their user turns differ by design.
Such pairs are judged, with a warning naming them, rather than refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from judgecli.inputs.conversation import render_turns, user_turns_digest
from judgecli.inputs.dataset import (
    Case,
    case_from,
    check_unique,
    no_cases,
    open_cases,
)
from judgecli.inputs.empty_fields import EmptyFields
from judgecli.inputs.images import ImageCases, ImagesShown
from judgecli.inputs.rows import DataPath, RowSource
from judgecli.inputs.sampling import SampleSize, Selector
from judgecli.inputs.shard import Shard
from judgecli.inputs.trajectory import agent_run_case

# How many ids an error or warning names before "and N more".
SHOWN_IDS = 5


@dataclass(frozen=True)
class Pair:
    """The same case answered by the old and the new system."""

    old: Case
    new: Case

    @property
    def id(self) -> str:
        """The shared id."""
        return self.old.id


@dataclass(frozen=True)
class Located:
    """Where a case's row is: its number, and where its source finds it (rows.Row.at)."""

    line: int
    offset: int


def read_case(
    source: RowSource,
    at: Located,
    *,
    field_map: Mapping[str, str],
    requires: list[str],
) -> Case:
    """The case of a row found by an earlier scan, read back."""
    fields = source.row_at(at.line, at.offset)
    return case_from(source, at.line, fields, field_map=field_map, requires=requires)


@dataclass(frozen=True)
class PairScan:
    """The validated join: which pairs to judge, and what did not match."""

    old: RowSource
    new: RowSource
    pairs: list[tuple[Located, Located]]
    """Selected pairs (old, new) in OLD's file order."""
    total: int
    """Matched pairs before --limit/--sample."""
    only_old: list[str] = field(default_factory=list)
    only_new: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    images: ImagesShown | None = None
    """The selected pairs that show images (a vision judge is needed), if any."""

    @property
    def old_path(self) -> Path:
        """OLD's path."""
        return self.old.path

    @property
    def new_path(self) -> Path:
        """NEW's path."""
        return self.new.path


def digest(text: str | None) -> bytes:
    """A short fingerprint of a text, so texts are compared without keeping them."""
    return hashlib.blake2b((text or "").encode(), digest_size=16).digest()


def input_digest(case: Case) -> bytes:
    """What the two sides of a pair must share: the input, or a conversation's user turns
    (a conversation never matches a case that is not one).
    """
    if case.messages is not None:
        return b"turns:" + user_turns_digest(case.messages)
    return b"input:" + digest(case.input)


def output_digest(case: Case) -> bytes:
    """A fingerprint of what a side answered: its output, or its whole conversation."""
    return digest(render_turns(case.messages) if case.messages is not None else case.output)


def named(ids: list[str]) -> str:
    """'a', 'b', 'c' and 4 more."""
    shown = ", ".join(repr(i) for i in ids[:SHOWN_IDS])
    return shown + (f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else "")


def unmatched(only_old: list[str], old: str, only_new: list[str], new: str) -> str:
    """`2 ids only in old.jsonl ('p2', 'p3'); 1 id only in new.jsonl ('p9')`, naming only
    the sides that have any.
    """
    sides = [(ids, name) for ids, name in ((only_old, old), (only_new, new)) if ids]
    return "; ".join(
        f"{len(ids)} {'id' if len(ids) == 1 else 'ids'} only in {name} ({named(ids)})"
        for ids, name in sides
    )


@dataclass(frozen=True)
class Indexed:
    """A NEW case as the join needs it: where its line is, and fingerprints of its texts."""

    at: Located
    input: bytes
    output: bytes
    conversation: bool
    agent: bool
    """An agent's run (tool calls or results): its user turns may differ from OLD's."""
    images: bool = False
    """It shows images (a vision judge is needed)."""


def agent_case(case: Case) -> bool:
    """Whether a case is an agent's run: its turns call tools or carry their results, or it
    was offered `tools` (a run that made no call is a run too).
    """
    return case.messages is not None and agent_run_case(case.messages, case.tools)


def runs(new: Indexed, old: Case) -> bool:
    """Whether both sides of a pair are agents' runs (their user turns may differ)."""
    return new.agent and agent_case(old)


def index_new(
    new: RowSource, *, requires: list[str], field_map: Mapping[str, str]
) -> tuple[dict[str, Indexed], EmptyFields]:
    """Validate NEW and index its cases by id (and count its empty fields; its inputs are
    OLD's, so only OLD's empty inputs are counted).
    """
    index: dict[str, Indexed] = {}
    seen: dict[str, int] = {}
    empty = EmptyFields(new.name, [f for f in requires if f != "input"], field_map)
    for row in new.rows():
        case = case_from(new, row.number, row.fields, field_map=field_map, requires=requires)
        check_unique(new, case, seen)
        empty.note(case)
        index[case.id] = Indexed(
            Located(row.number, row.at),
            input_digest(case),
            output_digest(case),
            conversation=case.messages is not None,
            agent=agent_case(case),
            images=case.images_shown > 0,
        )
    if not index:
        raise no_cases(new)
    return index, empty


def scan_pairs(
    old_path: DataPath | RowSource,
    new_path: DataPath | RowSource,
    *,
    requires: list[str],
    field_map: Mapping[str, str] | None = None,
    allow_partial: bool = False,
    limit: int | None = None,
    sample: int | SampleSize | None = None,
    seed: int = 0,
    only: set[str] | None = None,
    shard: Shard | None = None,
) -> PairScan:
    """Validate both files and join them on id (see sampling.Selector for limit/sample);
    with `shard`, of the chosen pairs those of the shard. Both sources are opened seekable:
    the pairs are read back in OLD's order (`iter_pairs`).
    """
    field_map = field_map or {}
    old, new = open_cases(old_path, seekable=True), open_cases(new_path, seekable=True)
    new_index, new_empty = index_new(new, requires=requires, field_map=field_map)
    selector: Selector[tuple[Located, Located]] = Selector(limit=limit, sample=sample, seed=seed)
    old_empty = EmptyFields(old.name, requires, field_map)
    seen: dict[str, int] = {}
    only_old: list[str] = []
    differing: list[str] = []
    differing_turns: list[str] = []
    differing_runs: list[str] = []
    same_output = 0
    shown = ImageCases()
    for row in old.rows():
        case = case_from(old, row.number, row.fields, field_map=field_map, requires=requires)
        check_unique(old, case, seen)
        old_empty.note(case)
        match = new_index.pop(case.id, None)
        if match is None:
            only_old.append(case.id)
        elif match.input != input_digest(case) and not runs(match, case):
            conversation = match.conversation or case.messages is not None
            (differing_turns if conversation else differing).append(case.id)
        else:
            if match.input != input_digest(case):
                differing_runs.append(case.id)
            same_output += match.output == output_digest(case)
            if only is None or case.id in only:
                selector.offer((Located(row.number, row.at), match.at))
            if case.images_shown or match.images:
                side = (old, row.number) if case.images_shown else (new, match.at.line)
                shown.note(1, row.number, f"{side[0].name}:{side[1]}")
    if not seen:
        raise no_cases(old)
    if differing:
        raise new.error(
            None,
            f"input differs from {old.name} for id {named(differing)}",
            hint="OLD and NEW must answer the same inputs; check that the files belong together",
        )
    if differing_turns:
        raise new.error(
            None,
            f"the user turns differ from {old.name} for id {named(differing_turns)}",
            hint="OLD and NEW must hold the same conversation from the user's side (the system "
            'and assistant turns may differ), as "messages" in both files',
        )
    only_new = list(new_index)
    warnings = []
    if differing_runs:
        warnings.append(
            f"the user turns differ from {old.name} for {len(differing_runs)} agent "
            f"run(s) ({named(differing_runs)}): judged anyway, as runs a simulated user drives "
            "differ by design; each side is shown with its own user turns, so the comparison "
            "is of the runs, not of answers to the same turns"
        )
    if only_old or only_new:
        problem = unmatched(only_old, old.name, only_new, new.name)
        if not allow_partial:
            raise new.error(
                None,
                f"the files do not have the same ids: {problem}",
                hint="pass --allow-partial to judge only the ids in both files",
            )
        warnings.append(f"--allow-partial: judging only the ids in both files; {problem}")
    pairs = selector.chosen(key=lambda p: p[0].line)
    if not pairs:
        raise new.error(
            None,
            f"no id is in both {old.name} and {new.name}",
            hint="OLD and NEW answer the same cases: a case's two answers share its id",
        )
    total = len(seen) - len(only_old) - len(differing)
    if shard is not None:
        ids = {line: case_id for case_id, line in seen.items()}
        pairs = [pair for pair in pairs if shard.holds(ids[pair[0].line])]
    # Comparing a version with itself can only measure the judge's noise: say so, since the
    # run itself looks like any other (a win rate near 50%).
    if old.same_as(new):
        warnings.append(
            f"OLD and NEW are the same file ({new.name}): the run compares a version with itself"
        )
    elif same_output == total:
        warnings.append(
            f"{old.name} and {new.name} have the same output for every id: the run "
            "compares a version with itself"
        )
    warnings += old_empty.warnings(p[0].line for p in pairs)
    warnings += new_empty.warnings(p[1].line for p in pairs)
    return PairScan(
        old=old,
        new=new,
        pairs=pairs,
        total=total,
        only_old=only_old,
        only_new=only_new,
        warnings=warnings,
        images=shown.shown(p[0].line for p in pairs),
    )


def iter_pairs(
    scan: PairScan, *, requires: list[str], field_map: Mapping[str, str] | None = None
) -> Iterator[Pair]:
    """Stream the selected pairs, reading each row back where the scan found it."""
    field_map = field_map or {}
    for old_at, new_at in scan.pairs:
        yield Pair(
            old=read_case(scan.old, old_at, field_map=field_map, requires=requires),
            new=read_case(scan.new, new_at, field_map=field_map, requires=requires),
        )
