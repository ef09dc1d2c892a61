"""The flags every judging command shares (score, pairwise, calibrate, refine), declared once.

Typer has no parameter groups: a command's flags are its function's parameters. So a
command declares one `flags: JudgeFlags` parameter and `@judge_flags(...)` puts the shared
options in its place in the signature typer reads, then hands them back to the command as
one JudgeFlags. Adding a shared flag is then one field here and one declaration in
options.py, not an edit of every command.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from judgecli.cli import options, stderr

if TYPE_CHECKING:
    from judgecli.cli.progress import RunProgress
    from judgecli.dataset import SampleSize
    from judgecli.errors import ExitCode
    from judgecli.summary.run import RunSummary

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class JudgeFlags:
    """The shared flags as parsed (a flag a command does not offer keeps its default)."""

    model: list[str] | None = None
    api_base: str | None = None
    price: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    json_schema: bool | None = None
    screen: str | None = None
    escalate: str | None = None
    screen_price: str | None = None
    concurrency: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    max_retries: int | None = None
    timeout: float | None = None
    out: Path | None = None
    resume: Path | None = None
    retry_failed: bool = False
    no_cache: bool = False
    max_cost: float | None = None
    max_failures: str | None = None
    force: bool = False
    limit: int | None = None
    sample: str | None = None
    seed: int = 0
    field: list[str] | None = None
    quiet: bool = False
    json_output: bool = False
    progress_every: float = 10.0

    def run_config_args(self) -> dict[str, Any]:
        """The flags as keywords of config.build_run_config (--field is parsed apart; a
        --sample share is resolved by the dataset scan, and run.json keeps it in argv).
        """
        values = asdict(self)
        for flag in ("field", "quiet", "json_output", "progress_every"):
            del values[flag]
        values["models"] = values.pop("model")
        values["timeout_s"] = values.pop("timeout")
        values["sample"] = self.sample_size.count if self.sample_size else None
        return values

    @property
    def sample_size(self) -> SampleSize | None:
        """--sample as N cases or P% of them."""
        from judgecli.dataset import parse_sample

        return parse_sample(self.sample) if self.sample is not None else None

    def progress(self, total: int) -> RunProgress:
        """Progress on stderr (none with --quiet): a resumed run's progress starts from the
        cases it holds.
        """
        from judgecli.cli.inputs import cases_done
        from judgecli.cli.progress import RunProgress

        done = cases_done(self.resume, retry_failed=self.retry_failed) if self.resume else 0
        return RunProgress(
            stderr, total=total, enabled=not self.quiet, done=done, every=self.progress_every
        )

    def report(self, summary: RunSummary, run_dir: Path) -> ExitCode:
        """Print the finished run as asked (tables, --json) and say how to exit."""
        from judgecli.cli.render import report_outcome

        return report_outcome(summary, run_dir, quiet=self.quiet, json_output=self.json_output)


# Each flag's typer declaration (options.py), in the order --help lists them.
DECLARATIONS: dict[str, Any] = {
    "model": options.ModelOpt, "api_base": options.ApiBaseOpt, "price": options.PriceOpt,
    "temperature": options.TemperatureOpt, "max_tokens": options.MaxTokensOpt,
    "json_schema": options.JsonSchemaOpt, "screen": options.ScreenOpt,
    "escalate": options.EscalateOpt, "screen_price": options.ScreenPriceOpt,
    "concurrency": options.ConcurrencyOpt, "rpm": options.RpmOpt, "tpm": options.TpmOpt,
    "max_retries": options.MaxRetriesOpt, "timeout": options.TimeoutOpt, "out": options.OutOpt,
    "resume": options.ResumeOpt, "retry_failed": options.RetryFailedOpt,
    "force": options.ForceOpt, "no_cache": options.NoCacheOpt, "max_cost": options.MaxCostOpt,
    "max_failures": options.MaxFailuresOpt, "limit": options.LimitOpt,
    "sample": options.SampleOpt, "seed": options.SeedOpt, "field": options.FieldOpt,
    "quiet": options.QuietOpt, "json_output": options.JsonOpt,
    "progress_every": options.ProgressEveryOpt,
}  # fmt: skip
CASCADE = frozenset({"screen", "escalate", "screen_price"})
SUBSET = frozenset({"limit", "sample"})


def judge_flags(*, without: frozenset[str] = frozenset()) -> Callable[[F], F]:
    """Replace a command's `flags: JudgeFlags` parameter by the shared options (all but
    `without`), and call the command with them gathered into one JudgeFlags.
    """
    defaults = {f.name: f.default for f in fields(JudgeFlags)}
    names = [name for name in DECLARATIONS if name not in without]

    def decorate(command: F) -> F:
        signature = inspect.signature(command, eval_str=True)
        params: list[inspect.Parameter] = []
        for param in signature.parameters.values():
            if param.name != "flags":
                params.append(param.replace(kind=inspect.Parameter.KEYWORD_ONLY))
                continue
            params += [
                inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                  annotation=DECLARATIONS[name], default=defaults[name])
                for name in names
            ]  # fmt: skip

        @functools.wraps(command)
        def with_flags(**kwargs: Any) -> Any:
            shared = {name: kwargs.pop(name) for name in names}
            return command(**kwargs, flags=JudgeFlags(**shared))

        with_flags.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        with_flags.__annotations__ = {p.name: p.annotation for p in params}
        return with_flags  # type: ignore[return-value]

    return decorate
