"""The sealed split: labelled cases divided once, stratified by label, into train and a
test that nothing of the choosing ever sees; its ids and their hash are written first.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from judgecli.inputs.labels import Label


@dataclass(frozen=True)
class Split:
    """Case ids in train and in the sealed test."""

    train: list[str]
    test: list[str]

    @property
    def test_hash(self) -> str:
        """sha256 of the sorted test ids, one a line: who holds the ids can check the seal."""
        return hashlib.sha256("".join(f"{i}\n" for i in sorted(self.test)).encode()).hexdigest()


def majority(
    labels: Sequence[Label], of: Callable[[Label], str] = lambda x: str(x.value)
) -> dict[str, str]:
    """Each case's most common label, read by ``of`` (the first seen wins a tie)."""
    by_case: dict[str, list[str]] = defaultdict(list)
    for label in labels:
        by_case[label.id].append(of(label))
    return {case: Counter(values).most_common(1)[0][0] for case, values in by_case.items()}


def seal_split(strata: Mapping[str, str], *, test_share: float, seed: int) -> Split:
    """Split the cases, stratified by their label (``strata``: case → its majority label):
    each label's cases are shuffled (``random.Random(seed)``, labels in sorted order) and
    the first round(share × n) go to the test, at least one and all but one while the label
    has two cases or more.

    Raises:
        ValueError: If ``test_share`` is not in (0, 1) or a side would be empty.
    """
    if not 0.0 < test_share < 1.0:
        raise ValueError(f"the test share must be between 0 and 1, not {test_share:g}")
    groups: dict[str, list[str]] = defaultdict(list)
    for case, label in sorted(strata.items()):
        groups[label].append(case)
    rng = random.Random(seed)
    train: list[str] = []
    test: list[str] = []
    for label in sorted(groups):
        cases = groups[label]
        rng.shuffle(cases)
        k = round(test_share * len(cases))
        if len(cases) >= 2:
            k = min(max(k, 1), len(cases) - 1)
        test.extend(cases[:k])
        train.extend(cases[k:])
    if not test or not train:
        raise ValueError(f"{len(strata)} labelled case(s) cannot make both a train and a test")
    return Split(train=sorted(train), test=sorted(test))
