"""A scan's count of the selected cases whose required fields are empty: legitimate data
(an empty answer is judged as given), said once per field so a user hears how many.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from judgecli.inputs.conversation import Turn, answer_index


class Case(Protocol):
    """What of a case (inputs.dataset.Case) the count reads."""

    @property
    def line(self) -> int:
        """The case's line in its file."""
        ...

    @property
    def messages(self) -> list[Turn] | None:
        """The case's turns, when it is a conversation or an agent's run."""
        ...

    def field_text(self, name: str) -> str | None:
        """A field's text (None when the case has no such field)."""
        ...


def is_blank(case: Case, name: str) -> bool:
    """Whether the case's field is present but empty (or only whitespace)."""
    text = case.field_text(name)
    return text is not None and not text.strip()


class EmptyFields:
    """Counts the selected cases whose required fields are empty, for one scan warning per
    field: a dataset of empty answers is valid, but a user should hear how many there are.
    Only the lines of empty fields are kept, so memory follows the empties, not the file.
    """

    def __init__(self, name: str, names: list[str], field_map: Mapping[str, str]) -> None:
        self._name = name
        self._names = names
        self._field_map = field_map
        self._lines: dict[str, list[int]] = {name: [] for name in names}
        self._unanswered: list[int] = []

    def note(self, case: Case) -> None:
        """Record the case's empty fields."""
        for name in self._names:
            if is_blank(case, name):
                # An agent's run that stopped on a tool result has no answer, by its nature.
                stopped = case.messages is not None and answer_index(case.messages) is None
                (self._unanswered if stopped and name == "output" else self._lines[name]).append(
                    case.line
                )

    def warnings(self, selected: Iterable[int]) -> list[str]:
        """`path: 3 cases have an empty "output" (judged as given)`, for the selected lines."""
        chosen = set(selected)
        found: list[str] = []
        for name, lines in self._lines.items():
            count = sum(line in chosen for line in lines)
            if count:
                key = self._field_map.get(name, name)
                verb = "case has" if count == 1 else "cases have"
                found.append(f'{self._name}: {count} {verb} an empty "{key}" (judged as given)')
        stopped = sum(line in chosen for line in self._unanswered)
        if stopped:
            found.append(
                f"{self._name}: {stopped} agent run(s) ended on a tool result, with no final "
                "answer (judged as given)"
            )
        return found
