"""Pairs: OLD and NEW datasets joined on `id`, for `judge pairwise`.

Both files are validated in full before anything is called. Memory holds the ids and byte
offsets, not the texts: pairs are read back from disk one at a time while the runner works.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from judgecli.dataset import Case, Selector, check_unique, iter_lines, parse_case, read_line_at
from judgecli.errors import DatasetError

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
    """Where a case's line is: line number and byte offset."""

    line: int
    offset: int


@dataclass(frozen=True)
class PairScan:
    """The validated join: which pairs to judge, and what did not match."""

    old_path: Path
    new_path: Path
    pairs: list[tuple[Located, Located]]
    """Selected pairs (old, new) in OLD's file order."""
    total: int
    """Matched pairs before --limit/--sample."""
    only_old: list[str] = field(default_factory=list)
    only_new: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def digest(text: str | None) -> bytes:
    """A short fingerprint of an input, so inputs are compared without keeping them."""
    return hashlib.blake2b((text or "").encode(), digest_size=16).digest()


def named(ids: list[str]) -> str:
    """'a', 'b', 'c' and 4 more."""
    shown = ", ".join(repr(i) for i in ids[:SHOWN_IDS])
    return shown + (f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else "")


def scan_pairs(
    old_path: Path,
    new_path: Path,
    *,
    requires: list[str],
    field_map: Mapping[str, str] | None = None,
    allow_partial: bool = False,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    only: set[str] | None = None,
) -> PairScan:
    """Validate both files and join them on id (see dataset.Selector for limit/sample)."""
    field_map = field_map or {}
    new_index: dict[str, tuple[Located, bytes]] = {}
    seen: dict[str, int] = {}
    for number, offset, text in iter_lines(new_path):
        case = parse_case(new_path, number, text, field_map=field_map, requires=requires)
        check_unique(new_path, case, seen)
        new_index[case.id] = (Located(number, offset), digest(case.input))
    if not new_index:
        raise DatasetError(new_path, None, "no cases (the file is empty)")
    selector: Selector[tuple[Located, Located]] = Selector(limit=limit, sample=sample, seed=seed)
    seen = {}
    only_old: list[str] = []
    differing: list[str] = []
    for number, offset, text in iter_lines(old_path):
        case = parse_case(old_path, number, text, field_map=field_map, requires=requires)
        check_unique(old_path, case, seen)
        match = new_index.pop(case.id, None)
        if match is None:
            only_old.append(case.id)
        elif match[1] != digest(case.input):
            differing.append(case.id)
        elif only is None or case.id in only:
            selector.offer((Located(number, offset), match[0]))
    if not seen:
        raise DatasetError(old_path, None, "no cases (the file is empty)")
    if differing:
        raise DatasetError(
            new_path, None, f"input differs from {old_path} for id {named(differing)}",
            hint="OLD and NEW must answer the same inputs; check that the files belong together",
        )  # fmt: skip
    only_new = list(new_index)
    warnings = []
    if only_old or only_new:
        problem = (
            f"{len(only_old)} id(s) only in {old_path} ({named(only_old)}), "
            f"{len(only_new)} only in {new_path} ({named(only_new)})"
        )
        if not allow_partial:
            raise DatasetError(
                new_path, None, f"the files do not have the same ids: {problem}",
                hint="pass --allow-partial to judge only the ids in both files",
            )  # fmt: skip
        warnings.append(f"--allow-partial: judging only the ids in both files; {problem}")
    pairs = selector.chosen(key=lambda p: p[0].line)
    if not pairs:
        raise DatasetError(new_path, None, f"no id is in both {old_path} and {new_path}")
    total = len(seen) - len(only_old) - len(differing)
    return PairScan(
        old_path=old_path, new_path=new_path, pairs=pairs, total=total, only_old=only_old,
        only_new=only_new, warnings=warnings,
    )  # fmt: skip


def iter_pairs(
    scan: PairScan, *, requires: list[str], field_map: Mapping[str, str] | None = None
) -> Iterator[Pair]:
    """Stream the selected pairs, reading each line back from its offset."""
    field_map = field_map or {}
    for old_at, new_at in scan.pairs:
        old = parse_case(
            scan.old_path, old_at.line, read_line_at(scan.old_path, old_at.line, old_at.offset),
            field_map=field_map, requires=requires,
        )  # fmt: skip
        new = parse_case(
            scan.new_path, new_at.line, read_line_at(scan.new_path, new_at.line, new_at.offset),
            field_map=field_map, requires=requires,
        )  # fmt: skip
        yield Pair(old=old, new=new)
