"""The systems of an arena: their names, and their answer files joined on id.

Each pair of systems is joined as `judge pairwise` joins OLD and NEW (`pairs.scan_pairs`):
the same validation, the same file:line errors, the same --allow-partial rule. Without
--allow-partial every file must hold the same ids, so joining the first file with each
other one checks them all; with it, each pair of systems that is to be compared is joined
on the ids both of its files hold. Memory holds ids and line offsets; the answers are read
back from disk when a comparison is judged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from judgecli.errors import ConfigError
from judgecli.inputs.dataset import Case, open_cases
from judgecli.inputs.images import ImagesShown
from judgecli.inputs.pairs import Located, Pair, iter_pairs, read_case, scan_pairs
from judgecli.inputs.rows import RowSource
from judgecli.inputs.sampling import SampleSize, Selector

SystemPair = tuple[int, int]
"""Two systems by their index in file order, the earlier first."""


def system_names(paths: Sequence[Path], names: Sequence[str] | None) -> list[str]:
    """The systems' names: `--name`, given once per file in file order, else the files'
    stems; ConfigError (exit 2) when they are not one per file, or not distinct.
    """
    if len(paths) < 2:
        raise ConfigError(
            f"judge arena compares 2 or more systems; got {len(paths)} file(s)",
            hint="pass one JSONL of answers per system: judge arena A.jsonl B.jsonl C.jsonl",
        )
    if names and len(names) != len(paths):
        raise ConfigError(
            f"{len(names)} --name for {len(paths)} files",
            hint="give --name once per file, in the files' order, or leave the names to the "
            "file names",
        )
    chosen = [n.strip() for n in names] if names else [p.stem for p in paths]
    if any(not n for n in chosen):
        raise ConfigError("a system's name is empty", hint="give each --name some text")
    repeated = sorted({n for n in chosen if chosen.count(n) > 1})
    if repeated:
        raise ConfigError(
            f"two systems are named {repeated[0]!r}",
            hint="name them apart with --name, once per file in order (e.g. --name base "
            "--name tuned)",
        )
    return chosen


def system_index(names: Sequence[str], name: str, flag: str) -> int:
    """The index of the system `name` (ConfigError naming `flag` when there is none)."""
    if name not in names:
        raise ConfigError(
            f"{flag} {name!r} is not one of the systems",
            hint="the systems are " + ", ".join(repr(n) for n in names),
        )
    return list(names).index(name)


@dataclass(frozen=True)
class ArenaFiles:
    """The systems' files joined: which cases each pair of systems can be compared on, and
    where its two answers are.
    """

    names: list[str]
    paths: list[Path]
    sources: list[RowSource]
    """The files opened (seekable: a comparison's answers are read back by position)."""
    case_ids: list[str]
    """Selected case ids (--limit, --sample), in the order the files list them."""
    located: dict[SystemPair, dict[str, tuple[Located, Located]]]
    """For each pair that may be compared: case id → the lines of its two answers."""
    requires: list[str]
    field_map: Mapping[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    images: ImagesShown | None = None
    """Cases whose answers show images (a vision judge is needed), if any of the joins found
    them (before --limit and --sample: the check is the stricter for it)."""

    def read(self, system: int, at: Located) -> Case:
        """One system's case, read back from its row."""
        source = self.sources[system]
        return read_case(source, at, field_map=self.field_map, requires=self.requires)

    def pair(self, systems: SystemPair, case_id: str, comparison_id: str) -> Pair:
        """The two answers to a case, as a pairwise rubric grades them (the earlier system
        as OLD), under the comparison's own id.
        """
        old_at, new_at = self.located[systems][case_id]
        old, new = self.read(systems[0], old_at), self.read(systems[1], new_at)
        return Pair(
            old=old.model_copy(update={"id": comparison_id}),
            new=new.model_copy(update={"id": comparison_id}),
        )


def joined_pair(
    sources: Sequence[RowSource],
    systems: SystemPair,
    *,
    requires: list[str],
    field_map: Mapping[str, str],
    allow_partial: bool,
    shown: list[ImagesShown],
) -> tuple[dict[str, tuple[Located, Located]], list[str]]:
    """Two systems' files joined on id (`scan_pairs`): case id → both lines, and the
    join's warnings; the cases that show images are added to `shown`.
    """
    scan = scan_pairs(
        sources[systems[0]],
        sources[systems[1]],
        requires=requires,
        field_map=field_map,
        allow_partial=allow_partial,
    )
    cases = iter_pairs(scan, requires=requires, field_map=field_map)
    found = {pair.id: located for located, pair in zip(scan.pairs, cases, strict=True)}
    shown += [scan.images] if scan.images is not None else []
    return found, scan.warnings


def join_files(
    paths: Sequence[Path],
    names: list[str],
    pairs: Sequence[SystemPair],
    *,
    requires: list[str],
    field_map: Mapping[str, str] | None = None,
    allow_partial: bool = False,
    limit: int | None = None,
    sample: int | SampleSize | None = None,
    seed: int = 0,
) -> ArenaFiles:
    """Validate every file and join the `pairs` of systems to be compared (DatasetError,
    exit 2, before anything is called: a malformed line, an input that differs between
    files, ids not in every file without --allow-partial). --limit and --sample choose
    cases, the same ones for every pair.
    """
    field_map = field_map or {}
    sources = [open_cases(path, seekable=True) for path in paths]
    warnings: list[str] = []
    shown: list[ImagesShown] = []
    located: dict[SystemPair, dict[str, tuple[Located, Located]]] = {}
    if allow_partial:
        for systems in pairs:
            located[systems], said = joined_pair(
                sources,
                systems,
                requires=requires,
                field_map=field_map,
                allow_partial=True,
                shown=shown,
            )
            warnings += said
    else:
        # The same ids in every file: each file joined with the first says where all are.
        where: list[dict[str, Located]] = [{} for _ in paths]
        for other in range(1, len(paths)):
            found, said = joined_pair(
                sources,
                (0, other),
                requires=requires,
                field_map=field_map,
                allow_partial=False,
                shown=shown,
            )
            warnings += said
            where[0] = {case_id: at[0] for case_id, at in found.items()}
            where[other] = {case_id: at[1] for case_id, at in found.items()}
        for a, b in pairs:
            located[(a, b)] = {case_id: (at, where[b][case_id]) for case_id, at in where[a].items()}
    seen: dict[str, int] = {}
    for found in located.values():
        for case_id in found:
            seen.setdefault(case_id, len(seen))
    selector: Selector[str] = Selector(limit=limit, sample=sample, seed=seed)
    for case_id in seen:
        selector.offer(case_id)
    chosen = selector.chosen(key=seen.__getitem__)
    keep = set(chosen)
    return ArenaFiles(
        names=names,
        paths=list(paths),
        sources=sources,
        case_ids=chosen,
        located={
            systems: {i: at for i, at in found.items() if i in keep}
            for systems, found in located.items()
        },
        requires=requires,
        field_map=field_map,
        warnings=list(dict.fromkeys(warnings)),
        images=shown[0] if shown else None,
    )
