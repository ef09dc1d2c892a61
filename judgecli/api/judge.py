"""`Judge`: one rubric and its judges, asked about one case at a time, from Python.

It grades a case exactly as a `judge score` or `judge pairwise` run grades each of its
cases (`grading.grade`: the prompts, the re-asks of an invalid reply, both orders, the
panel, --repeats, the --screen cascade), through the same judge client (`running.judging.
make_client`: retries, Retry-After, the rate limits, the circuit breaker, the budget) behind
the same reply cache: a case graded before costs nothing.

Every call runs on the API's one event loop (`loops.ENGINE`), whichever thread or loop it
comes from, so a Judge has one client for its life: pooled connections, one pacing state
for its rate limits, one budget.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from judgecli.api.cases import CaseLike, as_case, as_pair
from judgecli.api.loops import ENGINE
from judgecli.api.settings import choice, read_settings
from judgecli.api.verdicts import Comparison, Verdict
from judgecli.commands.setup import find_rubric_of, judge_config
from judgecli.errors import ConfigError, JudgeUnavailableError
from judgecli.grading.cascade import plan_cascade, tiered
from judgecli.grading.debias import FlipPolicy
from judgecli.grading.grade import GradingPlan, grade_pairwise, grade_pointwise
from judgecli.rubric import Rubric, RubricKind
from judgecli.settings.flags import flag_fields

if TYPE_CHECKING:
    from judgecli.judge.client import LiteLLMClient
    from judgecli.judge.protocol import JudgeClient
    from judgecli.result import CaseResult
    from judgecli.store.cache import ReplyCache

JUDGE_SETTINGS = frozenset(
    {
        *("model", "api_base", "price", "json_schema", "temperature", "max_tokens"),
        *("repeats", "score_mode", "screen", "escalate", "screen_price"),
        *("concurrency", "rpm", "tpm", "max_retries", "timeout", "no_cache", "max_cost"),
        *("seed", "field", "elide_at", "items_per_call"),
    }
)
"""The flags that mean something for one case at a time: who judges and how, the limits,
the cache and the budget (not the run's files, its cases or its scale-out)."""


@dataclass
class Client:
    """A Judge's client, and the reply cache's connection it reads (made on the engine's
    loop, whose thread alone uses it: SQLite connections belong to one thread).
    """

    client: JudgeClient
    cache: ReplyCache | None


class Closing:
    """Something with a client to close (a Judge, a guard): `with` closes it, and so does
    `async with`, each by its own `close` or `aclose`.
    """

    def close(self) -> None:  # noqa: D102 - each class says what it closes
        raise NotImplementedError

    async def aclose(self) -> None:  # noqa: D102
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.aclose()


class Judge(Closing):
    """A rubric's judges, grading one case (`grade`) or comparing two answers (`compare`)
    as a `judge score` or `judge pairwise` run grades each of its cases.

    Args:
        model: The LiteLLM model string of the judge (`"openai/gpt-4o-mini"`), or a list
            of them for a panel; None: the rubric's `judge: {model}`.
        rubric: A library rubric's name (`"helpfulness"`), a YAML file, or a loaded
            `Rubric` (`judgecli.load_rubric`). A pairwise rubric makes a Judge that
            compares; any other, one that grades.
        api_base: The endpoint of an OpenAI-compatible server (vLLM, Ollama, `judge
            simulate`), as `--api-base`.
        flip: Pairwise: judge both orders of every pair (the position-bias fix).
        flip_policy: Pairwise: what a judge whose two orders disagree says: `"tie"`,
            `"drop"` (no winner) or `"vote"`, as `--flip-policy`.
        **settings: The command line's judging flags, by their names in
            `judgecli.settings.flags.JudgeFlags`: `temperature`, `max_tokens`, `repeats`,
            `score_mode`, `json_schema`, `price`, `screen`, `escalate`, `screen_price`,
            `concurrency`, `rpm`, `tpm`, `max_retries`, `timeout`, `max_cost`, `seed`,
            `elide_at`, `items_per_call` (a checklist rubric: `"one"` or
            `"all"`), `field` (a dict: `{"output": "answer"}`) and `cache` (False:
            `--no-cache`).

    Raises:
        TypeError: A setting that does not exist (the nearest one is named) or a value of
            the wrong type.
        judgecli.errors.InputError: A rubric that cannot be found or read, or settings that
            do not make a runnable configuration (as the command line's exit 2).
    """

    def __init__(
        self,
        model: str | Sequence[str] | None = None,
        *,
        rubric: str | Path | Rubric,
        api_base: str | None = None,
        flip: bool = True,
        flip_policy: FlipPolicy | str = FlipPolicy.TIE,
        **settings: Any,
    ) -> None:
        read = read_settings(
            {"model": model, "api_base": api_base, **settings},
            caller="Judge",
            flags=[shared for shared in flag_fields() if shared.name in JUDGE_SETTINGS],
            own=("rubric", "flip", "flip_policy"),
        )
        found = find_rubric_of(rubric)
        self.rubric: Rubric = found.rubric
        """The rubric every case is graded with."""
        self.pairwise = self.rubric.kind is RubricKind.PAIRWISE
        """Whether this Judge compares two answers (a pairwise rubric) or grades one."""
        self.config = judge_config(
            "pairwise" if self.pairwise else "score", self.rubric, read.flags
        )
        """The settings as a run would have them (`settings.config.RunConfig`)."""
        if self.pairwise:
            plan = GradingPlan.of(
                self.config,
                self.rubric,
                flip=flip,
                flip_policy=choice(FlipPolicy, "flip_policy", flip_policy),
            )
        else:
            plan = GradingPlan.of(self.config, self.rubric)
        self.plan = plan
        """What every case is graded with (`grading.asking.GradingPlan`)."""
        cascade = plan_cascade(plan, self.config.screen_name, self.config.escalate)
        self._grade: Callable[[JudgeClient, Any], Awaitable[CaseResult]] = tiered(
            grade_pairwise if self.pairwise else grade_pointwise, plan, cascade
        )
        self._made: Client | None = None

    def grade(self, case: CaseLike) -> Verdict:
        """Grade one case with a pointwise or binary rubric, waiting for the verdict.

        Safe from any thread, and inside a running event loop (a notebook): the call runs
        on judgecli's own event loop and waits for it. In async code, `await
        agrade(case)` instead.

        Args:
            case: A dict with the keys of a dataset row (`input`, `output`, `reference`,
                `context`, `messages`, ...; other names through the `field` setting), or a
                `judgecli.Case`.

        Returns:
            The verdict: score, passed, choice, the judges' reasoning, every judgement and
            what the calls cost.

        Raises:
            judgecli.errors.GradeError: The judges gave no verdict (invalid replies after
                the re-asks, or a call that failed for good): it carries every raw reply.
            judgecli.errors.JudgeUnavailableError: The judge cannot be reached or used (a
                key, a URL, a server that is down).
            judgecli.errors.BudgetExceededError: The next call would pass `max_cost`.
            judgecli.errors.DatasetError: The case lacks a field the rubric requires.
        """
        return ENGINE.run(self.agrade(case))

    async def agrade(self, case: CaseLike) -> Verdict:
        """Grade one case (see `grade`), from any event loop: the calls are made on the
        API's own loop, and awaited here.
        """
        if self.pairwise:
            raise ConfigError(
                f"rubric {self.rubric.name!r} is pairwise: it compares two answers",
                hint="call compare(old, new), or use a pointwise or binary rubric",
            )
        checked = as_case(case, field_map=self.config.field_map, requires=self.rubric.requires)
        self._check_images({"case": checked.images_shown})
        return Verdict.of(await self._judged(checked))

    def compare(self, old: CaseLike, new: CaseLike) -> Comparison:
        """Compare two answers to one case with a pairwise rubric, waiting for the verdict:
        every judge in both orders (unless flip=False), reconciled by the flip policy.

        Args:
            old: The current answer's case (a dict or `judgecli.Case`).
            new: The candidate answer's case: the same id (or none) and the same input.

        Returns:
            The comparison: the winner (Winner.NEW, OLD or TIE), whether the orders agreed,
            the judges' reasoning, every judgement and what the calls cost.

        Raises:
            judgecli.errors.GradeError: The judges gave no verdict (see `grade`).
            judgecli.errors.JudgeUnavailableError: The judge cannot be reached or used.
        """
        return ENGINE.run(self.acompare(old, new))

    async def acompare(self, old: CaseLike, new: CaseLike) -> Comparison:
        """Compare two answers (see `compare`), from any event loop."""
        if not self.pairwise:
            raise ConfigError(
                f"rubric {self.rubric.name!r} is {self.rubric.kind.value}: it grades one answer",
                hint="call grade(case), or use a pairwise rubric such as rubric='pairwise'",
            )
        pair = as_pair(old, new, field_map=self.config.field_map, requires=self.rubric.requires)
        self._check_images({"old": pair.old.images_shown, "new": pair.new.images_shown})
        return Comparison.of(await self._judged(pair))

    def _check_images(self, shown: dict[str, int]) -> None:
        """A case that shows images (`shown`: images by the name a message gives its side):
        ConfigError before any call when the rubric or a judge cannot show them
        (commands.setup.check_images), as a run checks its dataset's.
        """
        showing = [name for name, count in shown.items() if count]
        if showing:
            from judgecli.commands.setup import check_images
            from judgecli.inputs.images import ImagesShown

            check_images(self.config, self.rubric, ImagesShown(1, showing[0]))

    async def _judged(self, item: Any) -> CaseResult:
        """The item graded on the engine's loop."""
        return await ENGINE.run_async(self._graded(item))

    async def _graded(self, item: Any) -> CaseResult:
        """The item graded with the Judge's client (on the engine's loop). An unusable judge
        (the circuit breaker tripped) is raised, and the next call builds a fresh client:
        the server may be back by then.
        """
        made = self._client_made()
        try:
            return await self._grade(made.client, item)
        except JudgeUnavailableError:
            if self._made is made:
                self._made = Client(self._client(made.cache), made.cache)
            raise

    def _client_made(self) -> Client:
        """The Judge's client, made on its first call (on the engine's loop)."""
        if self._made is None:
            from judgecli.settings.config import cache_dir
            from judgecli.store.cache import ReplyCache

            cache = ReplyCache(cache_dir()) if self.config.use_cache else None
            self._made = Client(self._client(cache), cache)
        return self._made

    def _client(self, cache: ReplyCache | None) -> JudgeClient:
        """The client of a loop: the reply cache in front, the real client built at the
        first miss (so a fully cached grade never imports LiteLLM), after the checks a
        run makes before its first call (provider, key, prices).
        """
        from judgecli.judge.cached import CachedJudge
        from judgecli.judge.provider import check_endpoints
        from judgecli.running.judging import make_client

        config = self.config

        def real() -> LiteLLMClient:
            check_endpoints(config.all_models, priced=config.max_cost is not None)
            return make_client(config)

        if cache is None:
            return real()
        return CachedJudge(real, cache, config.all_models)

    async def aclose(self) -> None:
        """Close the Judge's client: its cache connection, and its judge clients' state.
        (LiteLLM's pooled connections are the process's, closed when it exits.) A call
        after this makes a new client.
        """
        await ENGINE.run_async(self._close())

    async def _close(self) -> None:
        from judgecli.api.loops import settle

        made, self._made = self._made, None
        if made is not None and made.cache is not None:
            made.cache.close()
        await settle()

    def close(self) -> None:
        """Close the Judge's client (see `aclose`)."""
        ENGINE.run(self._close())
