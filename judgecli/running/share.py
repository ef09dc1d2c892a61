"""A share of a run's judging: the limits one --workers process runs under (each shared
limit of the run divided among them: `worker_config`), and how a share ended: the whole
run's, judged in this process, or one --workers process's cases (`ShareEnd`), with the error
that stopped it carried to the parent (`Stop`). Apart from workers.py, which forks the
processes: a run in one process (most runs) then imports neither multiprocessing nor the
workers' machinery.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field

from judgecli import errors
from judgecli.errors import JudgeError, RunIncompleteError
from judgecli.settings.config import RunConfig
from judgecli.settings.flag_spec import Role
from judgecli.settings.flags import flags_with
from judgecli.usage import CallSpend


def shared_limits() -> list[tuple[str, str]]:
    """(spelling, RunConfig field) of each limit of the whole run that workers divide among
    them: the flags declared with Role.SHARED (--concurrency, --rpm, --tpm, --max-cost).
    """
    return [
        (shared.flag.names[0], shared.flag.lands_in)
        for shared in flags_with(Role.SHARED)
        if shared.flag.lands_in is not None
    ]


def worker_config(config: RunConfig, count: int) -> RunConfig:
    """One worker's share of the run's limits: each shared limit divided by the number of
    workers (a whole number stays whole, at least 1: one call in flight each).
    """
    if count == 1:
        return config

    def share(value: float | None) -> float | None:
        if value is None:
            return None
        return max(1, value // count) if isinstance(value, int) else value / count

    return config.model_copy(
        update={field: share(getattr(config, field)) for _, field in shared_limits()}
    )


def describe_shares(config: RunConfig, count: int) -> str:
    """What each worker runs under, said once at the start of the run."""
    each = worker_config(config, count)
    limits = [
        f"{flag} {value:g}"
        for flag, field in shared_limits()
        if (value := getattr(each, field)) is not None
    ]
    return f"--workers {count}: each process judges its share of the cases with " + ", ".join(
        limits
    )


@dataclass
class ShareEnd:
    """How one share's judging ended: what it warned of, the response format each judge
    ended with, the calls of the cases it did not finish, and the error that stopped a
    worker (None: it judged all it was given).
    """

    warnings: list[str] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)
    unpriced: list[str] = field(default_factory=list)
    unfinished: CallSpend = field(default_factory=CallSpend)
    stop: Stop | None = None


@dataclass(frozen=True)
class Stop:
    """An error that ended a worker, carried to the parent (exceptions of ours do not all
    pickle: DatasetError's constructor takes other arguments).
    """

    kind: str
    message: str
    hint: str | None = None

    @classmethod
    def of(cls, error: BaseException) -> Stop:
        """The error as a Stop; a crash (a bug) keeps its traceback."""
        if isinstance(error, JudgeError):
            return cls(errors_class(type(error)).__name__, error.message, error.hint)
        if isinstance(error, KeyboardInterrupt):  # Terminated too
            return cls("RunInterruptedError", "interrupted: finished cases are saved")
        text = "".join(traceback.format_exception(error)).rstrip()
        return cls("crash", f"a worker crashed:\n{text}")

    def error(self) -> BaseException:
        """The error again, as its own class."""
        kind = getattr(errors, self.kind, None)
        if not (isinstance(kind, type) and issubclass(kind, JudgeError)):
            return RuntimeError(self.message)
        rebuilt = kind.__new__(kind)
        JudgeError.__init__(rebuilt, self.message, hint=self.hint)
        return rebuilt

    @property
    def drains(self) -> bool:
        """Whether the other workers finish their cases in flight (see RunIncompleteError)."""
        error = self.error()
        return isinstance(error, RunIncompleteError) and error.drains


def errors_class(kind: type[JudgeError]) -> type[JudgeError]:
    """The class of judgecli.errors an error is, or is a kind of (`judge.halt.Halted` is a
    RunInterruptedError): the parent rebuilds it by that name.
    """
    return next(
        (base for base in kind.__mro__ if getattr(errors, base.__name__, None) is base),
        JudgeError,
    )
