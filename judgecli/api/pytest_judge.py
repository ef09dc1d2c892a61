"""The Judge behind the pytest plugin's `llm_judge` fixture: made from `--judge-model`,
`--judge-api-base`, `--judge-rubric` (else JUDGE_MODEL and JUDGE_API_BASE, as the command
line reads them, else the ini file's `judge_model`, `judge_api_base`, `judge_rubric`), and
recording every verdict it gives as one judged case of the session (`RecordingJudge`).

Imported when a test first asks for the fixture, never at pytest's start-up.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from judgecli.api.judge import Judge
from judgecli.api.pytest_cases import (
    Asked,
    CallKind,
    compared_case,
    graded_case,
    ungraded_case,
)
from judgecli.api.pytest_session import UNGRADED
from judgecli.api.rubrics import load_rubric
from judgecli.errors import (
    ConfigError,
    DatasetError,
    GradeError,
    InputError,
    JudgeError,
    RunIncompleteError,
)
from judgecli.settings.flags import flag_fields

if TYPE_CHECKING:
    from judgecli.api.cases import CaseLike
    from judgecli.api.pytest_session import Ledger
    from judgecli.api.verdicts import Comparison, Verdict
    from judgecli.rubric import Rubric

T = TypeVar("T")
UNGRADABLE = (GradeError, RunIncompleteError)
"""What a judge that cannot grade raises (invalid replies, an outage, the budget): an error
of the test, never a verdict."""


@dataclass(frozen=True)
class Chosen:
    """The judge the session was configured with (None: not set anywhere)."""

    model: list[str] | None
    api_base: str | None
    rubric: str | Path | None


def chosen(config: pytest.Config) -> Chosen:
    """The judge set for this session: each of model, endpoint and rubric from its option,
    else its JUDGE_* variable (model and endpoint, the command line's), else the ini file.
    """
    env = {shared.name: shared.flag.env for shared in flag_fields()}

    def given(name: str) -> str | None:
        value = config.getoption(f"judge_{name}")
        if value:
            return " ".join(value) if isinstance(value, list) else str(value)
        variable = env.get(name)
        if variable and os.environ.get(variable):  # an empty variable is unset, as the CLI's
            return os.environ[variable]
        ini = config.getini(f"judge_{name}")
        ini = " ".join(ini) if isinstance(ini, list) else str(ini or "")
        return ini.strip() or None

    models = given("model")
    rubric = given("rubric")
    return Chosen(
        model=models.split() if models else None,
        api_base=given("api_base"),
        rubric=None if rubric is None else rubric_named(config, rubric),
    )


def rubric_named(config: pytest.Config, rubric: str) -> str | Path:
    """A rubric given on the command line as it is (a name, or a path from where pytest
    runs); one given in the ini file, a file next to the ini file when there is one.
    """
    if config.getoption("judge_rubric") or config.inipath is None:
        return rubric
    beside = config.inipath.parent / rubric
    return beside if beside.is_file() else rubric


def open_judge(config: pytest.Config, ledger: Ledger, settings: dict[str, Any]) -> RecordingJudge:
    """The session's Judge (ConfigError when no model or no rubric is set anywhere)."""
    picked = chosen(config)
    if picked.rubric is None:
        missing = "a rubric" if picked.model else "a judge model and a rubric"
        raise ConfigError(
            f"llm_judge needs {missing}",
            hint="pass --judge-model MODEL --judge-rubric NAME_OR_FILE, or set judge_model "
            "and judge_rubric under [tool.pytest.ini_options] (`judge rubrics list` shows "
            "the library's rubrics)",
        )
    rubric = load_rubric(picked.rubric)
    if picked.model is None and rubric.judge.model is None:
        raise ConfigError(
            "llm_judge needs a judge model",
            hint="pass --judge-model MODEL (e.g. openai/gpt-4o-mini), set JUDGE_MODEL, or "
            "set judge_model under [tool.pytest.ini_options]",
        )
    return RecordingJudge(
        picked.model, rubric=rubric, api_base=picked.api_base, ledger=ledger, **settings
    )


class RecordingJudge(Judge):
    """A `Judge` whose every `grade` and `compare` (and their async twins) is one judged case
    of the pytest session: recorded with the test that made it, as JUnit properties of that
    test, and counted by the session's numbers and its gate.

    A call the judge cannot grade (GradeError, an outage, the budget) is recorded as such
    and raised: the test errors, and the session exits 3.
    """

    def __init__(
        self,
        model: str | Sequence[str] | None,
        *,
        rubric: str | Path | Rubric,
        api_base: str | None,
        ledger: Ledger,
        **settings: Any,
    ) -> None:
        super().__init__(model, rubric=rubric, api_base=api_base, **settings)
        self._ledger = ledger
        self._recipe = (model, rubric, api_base, settings)
        """What this Judge was made of, for its `using` variants."""
        self._variants: dict[str, RecordingJudge] = {}

    def using(
        self, *, rubric: str | Path | Rubric | None = None, **settings: Any
    ) -> RecordingJudge:
        """A Judge of the same model and endpoint with another rubric or other settings
        (`llm_judge.using(rubric="pairwise")` compares, `using(temperature=0.7)`), whose
        verdicts are judged cases of the session too. The same arguments give the same
        Judge: one client, one rate limit, one budget.
        """
        key = repr((rubric, sorted(settings.items())))
        if key not in self._variants:
            model, own_rubric, api_base, own = self._recipe
            self._variants[key] = RecordingJudge(
                model,
                rubric=own_rubric if rubric is None else rubric,
                api_base=api_base,
                ledger=self._ledger,
                **{**own, **settings},
            )
        return self._variants[key]

    async def agrade(self, case: CaseLike) -> Verdict:  # noqa: D102 - Judge.agrade's
        if self.pairwise:  # the test's own mistake: Judge.agrade says so
            return await super().agrade(case)
        item = self._ledger.running()
        asked = self._asked(item)
        verdict = await self._recorded(super().agrade(case), item, asked, CallKind.GRADE, case)
        self._ledger.add(item, graded_case(asked, verdict, self.rubric))
        return verdict

    async def acompare(self, old: CaseLike, new: CaseLike) -> Comparison:  # noqa: D102
        if not self.pairwise:
            return await super().acompare(old, new)
        item = self._ledger.running()
        asked = self._asked(item)
        comparison = await self._recorded(
            super().acompare(old, new), item, asked, CallKind.COMPARE, new
        )
        self._ledger.add(item, compared_case(asked, comparison))
        return comparison

    async def _recorded(
        self,
        work: Awaitable[T],
        item: pytest.Item | None,
        asked: Asked,
        kind: CallKind,
        case: CaseLike,
    ) -> T:
        """The call's verdict. A judge that cannot grade is recorded as such, and one that
        cannot be used as configured (the provider, its key, its prices) as unusable; both
        are raised marked, for the test to show as an error. A case the test gave wrong
        (DatasetError) is the test's own failure.
        """
        try:
            return await work
        except UNGRADABLE as error:
            self._ledger.add(item, ungraded_case(asked, kind, case_id(case, error), said(error)))
            raise marked(error) from None
        except InputError as error:
            if isinstance(error, DatasetError):
                raise
            self._ledger.unusable(told(error))
            raise marked(error) from None

    def _asked(self, item: pytest.Item | None) -> Asked:
        """Where a call is made: the running test (none for a call outside every test)."""
        test = "" if item is None else item.nodeid
        return Asked(
            test=test,
            module=test.split("::")[0] if test else "(outside a test)",
            rubric=self.rubric.name,
            judge=", ".join(self.config.model_names),
        )

    def close(self) -> None:
        """Close the Judge's client and those of its `using` variants."""
        for variant in self._variants.values():
            variant.close()
        super().close()

    async def aclose(self) -> None:
        """Close the Judge's client and those of its `using` variants."""
        for variant in self._variants.values():
            await variant.aclose()
        await super().aclose()


def case_id(case: CaseLike, error: JudgeError) -> str:
    """The id of a case the judge could not grade: the error's, else the case's own."""
    if isinstance(error, GradeError) and error.case_id:
        return error.case_id
    given = case.get("id") if isinstance(case, dict) else getattr(case, "id", None)
    return "" if given is None else str(given)


def marked(error: JudgeError) -> JudgeError:
    """The error, marked for the plugin to show its test as an error (not a failure)."""
    setattr(error, UNGRADED, True)
    return error


def told(error: Exception) -> str:
    """An error as the command line prints it: `error: ...`, and a `hint: ...` line."""
    lines = f"error: {getattr(error, 'message', error)}"
    hint = getattr(error, "hint", None)
    return f"{lines}\nhint: {hint}" if hint else lines


def said(error: JudgeError) -> str:
    """An error in one line, with its class (`GradeError: the judge could not grade ...`);
    its hint is added to it as a note, which pytest shows under the error.
    """
    if error.hint and f"hint: {error.hint}" not in getattr(error, "__notes__", ()):
        error.add_note(f"hint: {error.hint}")
    return f"{type(error).__name__}: {error.message}"
