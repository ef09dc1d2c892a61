"""RunConfig: flags (with their JUDGE_* environment variables) > the rubric's `judge:` block >
built-in defaults, merged and validated once, then passed down.

Typer resolves each flag against its environment variable (both declared in
judgecli/settings/flags.py, with where the value lands here), so a value that reaches this
module as "given" came from one of those two; None means neither. The built-in defaults are
RunConfig's own.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from judgecli.errors import ConfigError
from judgecli.inputs.shard import Shard, parse_shard
from judgecli.inputs.spec import SpecRef, spec_record
from judgecli.settings.flags import JudgeFlags, flag_fields
from judgecli.settings.items_per_call import (
    ItemsPerCall,
    check_checklist_run,
    parse_items_per_call,
)
from judgecli.settings.judges import ModelSettings, model_settings
from judgecli.settings.scale_flags import check_scale_out, parse_workers
from judgecli.settings.score_mode import ScoreMode, parse_score_mode

if TYPE_CHECKING:
    from judgecli.rubric import Rubric

DEFAULT_CONCURRENCY = 16
DEFAULT_MAX_RETRIES = 4
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_TEMPERATURE = 0.0
# --repeats: more asks than this measure nothing new and multiply the bill.
MAX_REPEATS = 100
DEFAULT_MAX_TOKENS = 1024


class FailureLimit(BaseModel):
    """--max-failures: how many cases may fail before a run's numbers stop standing for a
    verdict. Over it the run is incomplete (exit 3) and its gate is not evaluated: an
    outage or a judge that cannot answer is never a pass, and never a regression.
    """

    model_config = ConfigDict(frozen=True)

    count: int | None = None
    """At most this many failed cases."""
    share: float | None = None
    """At most this share of the run's cases (rounded down)."""

    def allowed(self, total: int) -> int:
        """The most failed cases a run of `total` cases may have."""
        if self.count is not None:
            return self.count
        # The epsilon keeps 5% of 20 at 1 despite 0.05 * 20 = 0.9999...
        return math.floor((self.share or 0.0) * total + 1e-9)

    def __str__(self) -> str:
        return f"{self.share:.0%}" if self.share is not None else str(self.count)


DEFAULT_MAX_FAILURES = FailureLimit(share=0.05)
"""A run may lose at most 5% of its cases (1 in 20) and still give a verdict."""


def parse_failure_limit(text: str) -> FailureLimit:
    """`--max-failures 20` (cases) or `--max-failures 10%` (of the run's cases)."""
    value = text.strip()
    try:
        if value.endswith("%"):
            share = float(value[:-1]) / 100
            if 0 <= share <= 1:
                return FailureLimit(share=share)
        elif int(value) >= 0:
            return FailureLimit(count=int(value))
    except ValueError:
        pass
    raise ConfigError(f"--max-failures {text!r} is not N or P%", hint="e.g. --max-failures 10%")


class RunConfig(BaseModel):
    """Everything a judging run needs to know, validated."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str
    """The judging command this run is (score, pairwise, calibrate, refine, arena): run.json
    records it, and a resume or a merge runs the same one."""
    models: list[ModelSettings] = Field(default_factory=list)
    """The judges (--model, repeatable: several are a panel), else the rubric's
    `judge: {model}`; the strong tier of a cascade. At least one, but for a rubric that
    asks no judge (it only checks tool calls), which has none."""
    temperature: float = Field(default=DEFAULT_TEMPERATURE, ge=0, le=2)
    """--temperature, else the rubric's; 0 by default, so the same prompt gives the same
    verdict where the provider allows (--repeats warns at 0: K asks would be one)."""
    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, gt=0)
    """--max-tokens, else the rubric's: the longest reply a judge may write (1024 by default).
    A reply cut off at it is re-asked, then a failed case whose hint says to raise it."""
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0)
    """--timeout: seconds one call may take before it counts as failed and is retried
    (120 by default; a local model on a CPU may need more)."""
    max_retries: int = Field(default=DEFAULT_MAX_RETRIES, ge=0)
    """--max-retries: how often a transient failure (429, 5xx, a timeout, a dropped
    connection) is retried with backoff, honouring Retry-After (4 by default)."""
    concurrency: int = Field(default=DEFAULT_CONCURRENCY, ge=1)
    """--concurrency: judge calls in flight at most, for the whole run (16 by default; with
    --workers, shared among the processes)."""
    rpm: float | None = Field(default=None, gt=0)
    """--rpm: requests per minute per model, paced client-side (None: paced by what the
    server says, its x-ratelimit headers and 429s). Shared among --workers processes."""
    tpm: float | None = Field(default=None, gt=0)
    """--tpm: tokens per minute per model, as --rpm (None: no token pace of our own)."""
    out: Path
    """The run directory (--out, else runs/<UTC time>-<command>-<rubric>); one process
    writes it at a time (store/lock.py)."""
    limit: int | None = Field(default=None, ge=1)
    """--limit N: judge only the first N cases of the dataset (None: all)."""
    sample: int | None = Field(default=None, ge=1)
    """--sample N or P%: judge a seeded uniform draw of N cases (a share is turned into a
    count once the dataset is scanned; None: all)."""
    seed: int = 0
    """--seed: the seed of every random choice of the run (the sample, the order of a
    --no-flip or --sequential run, the bootstraps), so a re-run makes the same choices."""
    field_map: dict[str, str] = Field(default_factory=dict)
    """--field NAME=COLUMN: the case field → the dataset's key it is read from."""
    use_cache: bool = True
    """The reply cache: an identical request is never paid twice (--no-cache: every call
    is made, and its reply not kept)."""
    max_cost: float | None = Field(default=None, gt=0)
    """--max-cost USD: stop cleanly before the run's spend could pass this (exit 3,
    resumable); needs a price for every judge (LiteLLM's map, or --price)."""
    max_failures: FailureLimit = DEFAULT_MAX_FAILURES
    """--max-failures N or P%: more failed cases than this and the run's numbers stand for
    no verdict (exit 3; 5% of the cases by default)."""
    resume: bool = False
    """Continue the run in `out` instead of starting a new one."""
    force: bool = False
    """Start over in `out`, replacing the judge run there (--force)."""
    retry_failed: bool = False
    """On resume, judge the cases that failed last time again."""
    screen: ModelSettings | None = None
    """Cascade: the cheap judge every case goes to first (--screen); `models` are then the
    strong judges a case escalates to."""
    escalate: str | None = None
    """Cascade: the --escalate rule as given (None: the rubric's default rule)."""
    repeats: int = Field(default=1, ge=1, le=MAX_REPEATS)
    """--repeats K: every judge asks every prompt K times, as independent samples."""
    workers: int | None = Field(default=None, ge=1)
    """--workers: processes that share the run's cases and its limits (None: not given,
    so the run decides at its start from the calls the cache cannot answer:
    running/auto_workers.py)."""
    shard: Shard | None = None
    """--shard: the share of the cases this machine judges (None: all)."""
    batch: bool = False
    """--batch: submit the calls to the provider's batch API (judge collect finishes)."""
    conclude_only: bool = False
    """Judge nothing: every case must already have its result (judge merge)."""
    spec: SpecRef | None = None
    """--spec (judge run SPEC): the evaluation spec this run is, checked and hashed."""
    score_mode: ScoreMode = ScoreMode.SAMPLE
    """--score-mode: scores from the verdict written, or from the judge's logprobs."""
    items_per_call: ItemsPerCall = ItemsPerCall.ONE
    """--items: a checklist rubric's items asked one per call, or a case's all at
    once."""
    elide_at: int | None = Field(default=None, ge=1)
    """--elide-at N: the most tokens (about four characters each) a run's turns
    may take in a prompt; a longer run's middle steps are left out with a marked elision, or
    the case fails when even that does not fit (None: every run is shown whole)."""

    @property
    def model_names(self) -> list[str]:
        """The judges' model strings, in the order given (the strong tier of a cascade)."""
        return [m.name for m in self.models]

    @property
    def screen_name(self) -> str | None:
        """The screen judge's model string, if the run has one."""
        return self.screen.name if self.screen else None

    @property
    def all_models(self) -> list[ModelSettings]:
        """Every model the run may call: the screen first, then the judges."""
        return [*([self.screen] if self.screen else []), *self.models]


def build_run_config(
    *, command: str, rubric: Rubric, flags: JudgeFlags, default_out: Path
) -> RunConfig:
    """Merge the shared flags, the rubric's judge block and the defaults into one RunConfig
    (how each flag lands is declared with it, in judgecli/settings/flags.py).
    """
    from judgecli.inputs.dataset import parse_field_map

    field_map = parse_field_map(flags.field or [])
    sample = flags.sample_size
    if flags.resume is not None and flags.out is not None and flags.out != flags.resume:
        raise ConfigError(
            "--out and --resume name different directories",
            hint="--resume RUN_DIR continues the run in RUN_DIR; drop --out",
        )
    if flags.retry_failed and flags.resume is None:
        raise ConfigError("--retry-failed goes with --resume RUN_DIR")
    default_model = [rubric.judge.model] if rubric.judge.model else []
    # A rubric that only checks tool calls asks no judge: a model given (JUDGE_MODEL set for
    # every run of a CI job, say) is not used, and none is needed.
    names = list(dict.fromkeys(flags.model or default_model)) if rubric.asks_judge else []
    if not names and rubric.asks_judge:
        raise ConfigError(
            "no judge model",
            hint="pass --model (e.g. --model openai/gpt-4o-mini), set JUDGE_MODEL, "
            "or give the rubric a judge: {model: ...} block",
        )
    check_cascade(
        names, screen=flags.screen, escalate=flags.escalate, screen_price=flags.screen_price
    )
    screen = None
    if flags.screen is not None:
        [screen] = model_settings(
            [flags.screen],
            api_base=flags.api_base,
            price=flags.screen_price or flags.price,
            json_schema=flags.json_schema,
        )
    models = model_settings(
        names, api_base=flags.api_base, price=flags.price, json_schema=flags.json_schema
    )
    max_failures = flags.max_failures
    check_scale_out(flags)
    config = RunConfig(
        command=command,
        models=models,
        screen=screen,
        out=flags.resume or flags.out or default_out,
        resume=flags.resume is not None,
        # A --sample share is resolved by the dataset scan, which knows the total.
        sample=sample.count if sample else None,
        field_map=field_map,
        use_cache=not flags.no_cache,
        max_failures=parse_failure_limit(max_failures) if max_failures else DEFAULT_MAX_FAILURES,
        workers=parse_workers(flags.workers) if flags.workers else None,
        shard=parse_shard(flags.shard, os.environ) if flags.shard else None,
        score_mode=parse_score_mode(flags.score_mode, rubric),
        items_per_call=parse_items_per_call(flags.items_per_call, rubric),
        # A merge only concludes (--conclude-only): its shards checked the files they judged,
        # and the machine that merges need not hold the data.
        spec=spec_record(flags.spec, check=not flags.conclude_only) if flags.spec else None,
        **given_settings(flags, rubric),
    )
    check_checklist_run(
        rubric,
        command=command,
        judges=len(config.models),
        repeats=config.repeats,
        screen=config.screen is not None,
        score_mode=config.score_mode,
    )
    return config


def given_settings(flags: JudgeFlags, rubric: Rubric) -> dict[str, Any]:
    """The RunConfig fields the flags declared with `to=` set: the flag (or its environment
    variable), else the rubric's `judge:` value for a flag declared with `rubric=True`;
    a field neither gives is left to RunConfig's default.
    """
    settings: dict[str, Any] = {}
    for shared in flag_fields():
        to = shared.flag.to
        if to is None:
            continue
        value = getattr(flags, shared.name)
        if value is None and shared.flag.rubric:
            value = getattr(rubric.judge, to)
        if value is not None:
            settings[to] = value
    return settings


def check_cascade(
    judges: list[str], *, screen: str | None, escalate: str | None, screen_price: str | None
) -> None:
    """--escalate and --screen-price only mean something with a --screen judge, and a
    screen that is also a strong judge would decide every case twice at the same price.
    """
    if screen is None:
        for flag, value in (("--escalate", escalate), ("--screen-price", screen_price)):
            if value is not None:
                raise ConfigError(
                    f"{flag} goes with --screen MODEL",
                    hint="e.g. --screen openai/gpt-4o-mini --model openai/gpt-4o",
                )
    elif screen in judges:
        raise ConfigError(
            f"--screen {screen} is also a --model judge",
            hint="the screen is the cheap first judge; --model names the strong one(s)",
        )


def debug_enabled() -> bool:
    """JUDGE_DEBUG=1: let errors raise with a full traceback (for bug reports)."""
    return os.environ.get("JUDGE_DEBUG", "") not in ("", "0")


def step_summary_path() -> Path | None:
    """$GITHUB_STEP_SUMMARY: where GitHub Actions shows a job's markdown summary."""
    value = os.environ.get("GITHUB_STEP_SUMMARY")
    return Path(value) if value else None


def cache_dir() -> Path:
    """Where the reply cache lives: $JUDGE_CACHE_DIR, else $XDG_CACHE_HOME/judge, else
    ~/.cache/judge.
    """
    explicit = os.environ.get("JUDGE_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "judge"


def rubric_dirs() -> list[Path]:
    """Where rubric names are looked up: the folders of $JUDGE_RUBRICS_PATH (colon-separated),
    then the bundled library.
    """
    from judgecli.inputs.rubric_library import LIBRARY_DIR

    extra = os.environ.get("JUDGE_RUBRICS_PATH", "")
    return [Path(p).expanduser() for p in extra.split(os.pathsep) if p] + [LIBRARY_DIR]
