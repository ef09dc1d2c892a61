"""Shared flags, declared once. Each carries its JUDGE_* environment variable, so `--help`
documents it and typer resolves flag > environment before config.py sees the value.

Every option that takes a value names it (`MODEL`, `N`, `USD`): typer would otherwise show
Python types (`<list[str]>`, `<float range> [x>=0.001]`), which take half of an 80-column
help screen and tell a user less. "Greater than 0" is checked by a callback rather than by
`min=0.001`, whose range typer prints beside the metavar.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

JUDGE = "Judge"
RUN = "Run"
DATA = "Dataset"
OUTPUT = "Output"


def positive(value: float | None) -> float | None:
    """Callback: a value that must be greater than 0 (a rate, a time, a price cap)."""
    if value is not None and value <= 0:
        raise typer.BadParameter(f"{value:g} is not greater than 0")
    return value


ModelOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--model", "-m", envvar="JUDGE_MODEL", metavar="MODEL", rich_help_panel=JUDGE,
        help="LiteLLM model string, e.g. openai/gpt-4o-mini. Repeat for a panel of judges.",
    ),
]  # fmt: skip
ApiBaseOpt = Annotated[
    str | None,
    typer.Option(
        "--api-base", envvar="JUDGE_API_BASE", metavar="URL", rich_help_panel=JUDGE,
        help="Endpoint of an OpenAI-compatible server (vLLM, Ollama, a proxy, `judge simulate`).",
    ),
]  # fmt: skip
PriceOpt = Annotated[
    str | None,
    typer.Option(
        "--price", metavar="IN,OUT", rich_help_panel=JUDGE,
        help="Price in USD per million input,output tokens (for models LiteLLM has no price for).",
    ),
]  # fmt: skip
TemperatureOpt = Annotated[
    float | None,
    typer.Option("--temperature", min=0, max=2, metavar="T", rich_help_panel=JUDGE,
                 help="Sampling temperature (default: rubric's, else 0)."),
]  # fmt: skip
MaxTokensOpt = Annotated[
    int | None,
    typer.Option("--max-tokens", min=1, metavar="N", rich_help_panel=JUDGE,
                 help="Most tokens a judge reply may use (default: rubric's, else 1024)."),
]  # fmt: skip
JsonSchemaOpt = Annotated[
    bool | None,
    typer.Option(
        "--json-schema/--no-json-schema", rich_help_panel=JUDGE, show_default=False,
        help="Send the verdict schema as response_format (structured output). Default: when "
        "LiteLLM says the model supports it, or with --api-base.",
    ),
]  # fmt: skip
ConcurrencyOpt = Annotated[
    int | None,
    typer.Option("--concurrency", "-c", envvar="JUDGE_CONCURRENCY", min=1, metavar="N",
                 rich_help_panel=RUN,
                 help="Calls in flight at most (default: 16)."),
]  # fmt: skip
RpmOpt = Annotated[
    float | None,
    typer.Option("--rpm", envvar="JUDGE_RPM", callback=positive, metavar="N",
                 rich_help_panel=RUN,
                 help="Requests per minute per model (paced over ~1 s windows)."),
]  # fmt: skip
TpmOpt = Annotated[
    float | None,
    typer.Option("--tpm", envvar="JUDGE_TPM", callback=positive, metavar="N",
                 rich_help_panel=RUN,
                 help="Tokens per minute per model (prompt + max reply tokens)."),
]  # fmt: skip
MaxRetriesOpt = Annotated[
    int | None,
    typer.Option("--max-retries", min=0, metavar="N", rich_help_panel=RUN,
                 help="Retries of a transient error (429, 5xx, timeout) and re-asks of an "
                 "invalid verdict (default: 4)."),
]  # fmt: skip
TimeoutOpt = Annotated[
    float | None,
    typer.Option("--timeout", callback=positive, metavar="SECONDS", rich_help_panel=RUN,
                 help="Seconds one call may take (default: 120)."),
]  # fmt: skip
OutOpt = Annotated[
    Path | None,
    typer.Option("--out", "-o", envvar="JUDGE_OUT", metavar="DIR", rich_help_panel=OUTPUT,
                 help="Run directory (default: runs/<UTC time>-<command>-<rubric>)."),
]  # fmt: skip
QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", rich_help_panel=OUTPUT, help="No progress bar or tables.")
]
JsonOpt = Annotated[
    bool,
    typer.Option(
        "--json",
        rich_help_panel=OUTPUT,
        help="Print summary.json on stdout, and nothing else there (the tables go to stderr).",
    ),
]
LimitOpt = Annotated[
    int | None,
    typer.Option(
        "--limit", min=1, metavar="N", rich_help_panel=DATA, help="Judge at most N cases."
    ),
]
SampleOpt = Annotated[
    str | None,
    typer.Option("--sample", metavar="N|P%", rich_help_panel=DATA,
                 help="Judge a uniform random sample of N cases, or P% of them (see --seed)."),
]  # fmt: skip
SeedOpt = Annotated[
    int,
    typer.Option(
        "--seed", metavar="N", rich_help_panel=DATA, help="Seed for --sample and bootstraps."
    ),
]
FieldOpt = Annotated[
    list[str] | None,
    typer.Option("--field", metavar="NAME=COLUMN", rich_help_panel=DATA,
                 help="Read a case field from another key, e.g. --field output=answer."),
]  # fmt: skip
RubricOpt = Annotated[
    str,
    typer.Option(
        "--rubric",
        "-r",
        metavar="RUBRIC",
        help="Rubric YAML file, or the name of a library rubric.",
    ),
]
GATE = "Gate"

AllowPartialOpt = Annotated[
    bool,
    typer.Option("--allow-partial", rich_help_panel=DATA,
                 help="Judge only ids present in both files (reported) instead of failing."),
]  # fmt: skip
FlipOpt = Annotated[
    bool,
    typer.Option("--flip/--no-flip", rich_help_panel=JUDGE,
                 help="Judge each pair in both orders, cancelling position bias."),
]  # fmt: skip
FlipPolicyOpt = Annotated[
    str,
    typer.Option("--flip-policy", metavar="tie|drop|vote", rich_help_panel=JUDGE,
                 help="When a judge's two orders disagree: a tie (MT-Bench), drop the case, or "
                 "let a win beat a tie."),
]  # fmt: skip
MinWinRateOpt = Annotated[
    float | None,
    typer.Option("--min-win-rate", min=0, max=1, metavar="RATE", rich_help_panel=GATE,
                 help="Exit 1 unless NEW's win rate (ties ½) is at least this."),
]  # fmt: skip
MaxLossRateOpt = Annotated[
    float | None,
    typer.Option("--max-loss-rate", min=0, max=1, metavar="RATE", rich_help_panel=GATE,
                 help="Exit 1 if NEW loses more than this share of cases."),
]  # fmt: skip
MinConsistencyOpt = Annotated[
    float | None,
    typer.Option("--min-consistency", min=0, max=1, metavar="RATE", rich_help_panel=GATE,
                 help="Exit 1 if fewer cases than this got the same verdict in both orders."),
]  # fmt: skip
GateOnOpt = Annotated[
    str,
    typer.Option("--on", metavar="point|lower-bound", rich_help_panel=GATE,
                 help="Compare the point estimate, or the pessimistic end of its 95% interval."),
]  # fmt: skip
MinKappaOpt = Annotated[
    float | None,
    typer.Option("--min-kappa", min=-1, max=1, metavar="KAPPA", rich_help_panel=GATE,
                 help="Exit 1 unless judge-human κ (quadratic-weighted on ordinal scales) is at "
                 "least this."),
]  # fmt: skip
MinAccuracyOpt = Annotated[
    float | None,
    typer.Option("--min-accuracy", min=0, max=1, metavar="RATE", rich_help_panel=GATE,
                 help="Exit 1 unless judge-human exact agreement is at least this."),
]  # fmt: skip

NoCacheOpt = Annotated[
    bool,
    typer.Option("--no-cache", rich_help_panel=RUN,
                 help="Neither read nor write the reply cache ($JUDGE_CACHE_DIR, else "
                 "~/.cache/judge): every call is sent and paid."),
]  # fmt: skip
MaxCostOpt = Annotated[
    float | None,
    typer.Option("--max-cost", envvar="JUDGE_MAX_COST", callback=positive, metavar="USD",
                 rich_help_panel=RUN,
                 help="Stop (exit 3, resumable) before the run's spend would pass this."),
]  # fmt: skip
MaxFailuresOpt = Annotated[
    str | None,
    typer.Option("--max-failures", metavar="N|P%", rich_help_panel=RUN,
                 help="Stop (exit 3) once more than N cases, or P% of finished cases, failed."),
]  # fmt: skip
ResumeOpt = Annotated[
    Path | None,
    typer.Option("--resume", metavar="RUN_DIR", rich_help_panel=OUTPUT,
                 help="Continue an interrupted run: keep its results, judge the rest."),
]  # fmt: skip
RetryFailedOpt = Annotated[
    bool,
    typer.Option("--retry-failed", rich_help_panel=OUTPUT,
                 help="With --resume: judge the cases that failed last time again."),
]  # fmt: skip
ResumeRetryFailedOpt = Annotated[
    bool,
    typer.Option("--retry-failed", help="Judge the cases that failed last time again."),
]
ForceOpt = Annotated[
    bool,
    typer.Option("--force", rich_help_panel=OUTPUT,
                 help="Start over in an existing --out run directory: its old run's files are "
                 "deleted first."),
]  # fmt: skip
ProgressEveryOpt = Annotated[
    float,
    typer.Option("--progress-every", envvar="JUDGE_PROGRESS_EVERY", callback=positive,
                 metavar="SECONDS", rich_help_panel=OUTPUT, show_default=False,
                 help="When stderr is not a terminal (CI logs): a progress line this often "
                 "(default: 10)."),
]  # fmt: skip

CASCADE = "Cascade"

ScreenOpt = Annotated[
    str | None,
    typer.Option("--screen", metavar="MODEL", envvar="JUDGE_SCREEN", rich_help_panel=CASCADE,
                 help="A cheap judge every case goes to first; --model judges only the cases "
                 "it escalates (see --escalate)."),
]  # fmt: skip
EscalateOpt = Annotated[
    str | None,
    typer.Option("--escalate", metavar="RULE", rich_help_panel=CASCADE,
                 help='When a screened case goes on to --model, e.g. "confidence < 0.8 or score '
                 'in [2, 3]". Tests on score, confidence, passed, consistent, winner, failed '
                 "joined by and/or/not. Default: failed, or a score next to pass_at, or "
                 "confidence < 0.8 (pointwise, binary); failed or not consistent (pairwise)."),
]  # fmt: skip
ScreenPriceOpt = Annotated[
    str | None,
    typer.Option("--screen-price", metavar="IN,OUT", rich_help_panel=CASCADE,
                 help="The screen's price in USD per million input,output tokens (default: "
                 "--price, else LiteLLM's price map)."),
]  # fmt: skip
