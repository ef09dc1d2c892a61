"""The flags every judging command shares (score, pairwise, calibrate, refine), declared once.

Each field of JudgeFlags is one flag: its type, its default, and a `flag(...)` (flag_spec.py)
giving its spellings, its JUDGE_* environment variable, its help and where `--help` lists
it, its bounds, where its value lands in RunConfig, and its roles. cli/flags.py makes every
judging command's typer options from these fields, and config.build_run_config the
RunConfig:

* `to="name"`: the value sets RunConfig's field `name` as given. With `rubric=True` the
  rubric's `judge:` block stands in when neither the flag nor its variable is given, and
  when nothing is given RunConfig's own default applies: flag > env > rubric > default.
* no `to`: build_run_config makes the field `sets` names of the value (use_cache of
  --no-cache), combines it with others' (--model, --api-base, --price and --json-schema
  make the judges' settings), or only the command reads it (--quiet).

`roles` (flag_spec.Role) says what the value means to the stages that never parse it (a
merge's shards, drift, a re-judged anchor set, --workers): each reads its list off this
table (`flags_with`). So a new judging flag is one field here, its roles decided, plus a
RunConfig field when it is a new setting of the run. Nothing here imports typer.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, get_type_hints

from judgecli.settings.flag_spec import FLAG, FlagField, Role, flag

if TYPE_CHECKING:
    from judgecli.inputs.sampling import SampleSize

# The panels `--help` groups the flags in.
JUDGE = "Judge"
CASCADE = "Cascade"
RUN = "Run"
OUTPUT = "Output"
DATA = "Dataset"
SCALE = "Scale"


@dataclass(frozen=True)
class JudgeFlags:
    """The shared flags as parsed, in the order `--help` lists them (a flag a command does
    not offer keeps its default).
    """

    model: list[str] | None = flag(
        "--model",
        "-m",
        env="JUDGE_MODEL",
        metavar="MODEL",
        panel=JUDGE,
        help="LiteLLM model string, e.g. openai/gpt-4o-mini. Repeat for a panel of judges.",
        roles=Role.VERDICTS,
        sets="models",
    )
    api_base: str | None = flag(
        "--api-base",
        env="JUDGE_API_BASE",
        metavar="URL",
        panel=JUDGE,
        help="Endpoint of an OpenAI-compatible server (vLLM, Ollama, a proxy, `judge simulate`).",
        roles=Role.VERDICTS,
    )
    price: str | None = flag(
        "--price",
        metavar="IN,OUT",
        panel=JUDGE,
        help="Price in USD per million input,output tokens (for models LiteLLM has no price for).",
        roles=Role.NONE,
    )
    temperature: float | None = flag(
        "--temperature",
        min=0,
        max=2,
        metavar="T",
        panel=JUDGE,
        help="Sampling temperature (default: rubric's, else 0).",
        to="temperature",
        rubric=True,
        roles=Role.VERDICTS,
    )
    max_tokens: int | None = flag(
        "--max-tokens",
        min=1,
        metavar="N",
        panel=JUDGE,
        help="Most tokens a judge reply may use (default: rubric's, else 1024).",
        to="max_tokens",
        rubric=True,
        roles=Role.VERDICTS,
    )
    repeats: int | None = flag(
        "--repeats",
        env="JUDGE_REPEATS",
        min=1,
        max=100,
        metavar="K",
        panel=JUDGE,
        show_default=False,
        help="Ask every judge each prompt K times, as independent samples (each its own "
        "cached reply): each case's verdict is their aggregate, and the run measures the "
        "judge's stability. Use a temperature above 0. Default: 1.",
        to="repeats",
        roles=Role.VERDICTS,
    )
    score_mode: str | None = flag(
        "--score-mode",
        env="JUDGE_SCORE_MODE",
        metavar="sample|logprob",
        panel=JUDGE,
        show_default=False,
        help="sample: a judgement is the verdict the judge wrote. logprob: also ask for token "
        "log-probabilities, and score each case by the expected score over the scale (G-Eval), "
        "reporting the probability of each score, choice or winner; needs a server that "
        "returns logprobs (exit 2 otherwise). Default: sample.",
        roles=Role.VERDICTS,
        sets="score_mode",
    )
    elide_at: int | None = flag(
        "--elide-at",
        env="JUDGE_ELIDE_AT",
        min=1,
        metavar="N",
        panel=JUDGE,
        show_default=False,
        help="Elide an agent's run or a conversation longer than N tokens (about 4 characters "
        "each) in the prompt: its task and its last steps are kept, its middle steps left "
        "out with a marked elision that says what was left out; a case that cannot fit even "
        "so fails, with the reason. Default: every run is shown whole.",
        to="elide_at",
        roles=Role.VERDICTS,
    )
    items_per_call: str | None = flag(
        "--items",
        metavar="one|all",
        panel=JUDGE,
        show_default=False,
        help="A checklist rubric: ask the judge about one of a case's rubric_items per call, "
        "or all of them in one call (cheaper; for judges that handle a long structured "
        "reply). Default: one.",
        roles=Role.VERDICTS,
        sets="items_per_call",
    )
    json_schema: bool | None = flag(
        "--json-schema/--no-json-schema",
        panel=JUDGE,
        show_default=False,
        help="Send the verdict schema as response_format (structured output). Default: when "
        "LiteLLM says the model supports it, or with --api-base.",
        roles=Role.VERDICTS,
    )
    screen: str | None = flag(
        "--screen",
        metavar="MODEL",
        env="JUDGE_SCREEN",
        panel=CASCADE,
        help="A cheap judge every case goes to first; --model judges only the cases it "
        "escalates (see --escalate).",
        roles=Role.VERDICTS,
        sets="screen",
    )
    escalate: str | None = flag(
        "--escalate",
        metavar="RULE",
        panel=CASCADE,
        help='When a screened case goes on to --model, e.g. "confidence < 0.8 or score in '
        '[2, 3]". Tests on score, confidence, passed, consistent, winner, failed joined by '
        "and/or/not. Default: failed, or a score next to pass_at, or confidence < 0.8 "
        "(pointwise, binary); failed or not consistent (pairwise).",
        to="escalate",
        roles=Role.VERDICTS,
    )
    screen_price: str | None = flag(
        "--screen-price",
        metavar="IN,OUT",
        panel=CASCADE,
        help="The screen's price in USD per million input,output tokens (default: --price, "
        "else LiteLLM's price map).",
        roles=Role.NONE,
    )
    concurrency: int | None = flag(
        "--concurrency",
        "-c",
        env="JUDGE_CONCURRENCY",
        min=1,
        metavar="N",
        panel=RUN,
        help="Calls in flight at most (default: 16).",
        to="concurrency",
        roles=Role.PER_MACHINE | Role.SHARED,
    )
    rpm: float | None = flag(
        "--rpm",
        env="JUDGE_RPM",
        positive=True,
        metavar="N",
        panel=RUN,
        help="Requests per minute per model (paced over ~1 s windows).",
        to="rpm",
        roles=Role.PER_MACHINE | Role.SHARED,
    )
    tpm: float | None = flag(
        "--tpm",
        env="JUDGE_TPM",
        positive=True,
        metavar="N",
        panel=RUN,
        help="Tokens per minute per model (prompt + max reply tokens).",
        to="tpm",
        roles=Role.PER_MACHINE | Role.SHARED,
    )
    max_retries: int | None = flag(
        "--max-retries",
        min=0,
        metavar="N",
        panel=RUN,
        help="Retries of a transient error (429, 5xx, timeout) and re-asks of an invalid "
        "verdict (default: 4).",
        to="max_retries",
        roles=Role.NONE,
    )
    timeout: float | None = flag(
        "--timeout",
        positive=True,
        metavar="SECONDS",
        panel=RUN,
        help="Seconds one call may take (default: 120).",
        to="timeout_s",
        roles=Role.NONE,
    )
    out: Path | None = flag(
        "--out",
        "-o",
        env="JUDGE_OUT",
        metavar="DIR",
        panel=OUTPUT,
        help="Run directory (default: runs/<UTC time>-<command>-<rubric>).",
        roles=Role.PER_MACHINE | Role.THIS_RUN,
        sets="out",
    )
    resume: Path | None = flag(
        "--resume",
        metavar="RUN_DIR",
        panel=OUTPUT,
        help="Continue an interrupted run: keep its results, judge the rest.",
        roles=Role.PER_MACHINE | Role.THIS_RUN,
        sets="resume",
    )
    retry_failed: bool = flag(
        "--retry-failed",
        default=False,
        panel=OUTPUT,
        help="With --resume: judge the cases that failed last time again.",
        to="retry_failed",
        roles=Role.PER_MACHINE | Role.THIS_RUN,
    )
    force: bool = flag(
        "--force",
        default=False,
        panel=OUTPUT,
        help="Start over in an existing --out run directory: its old run's files are deleted "
        "first.",
        to="force",
        roles=Role.PER_MACHINE | Role.THIS_RUN,
    )
    no_cache: bool = flag(
        "--no-cache",
        default=False,
        panel=RUN,
        help="Neither read nor write the reply cache ($JUDGE_CACHE_DIR, else ~/.cache/judge): "
        "every call is sent and paid.",
        roles=Role.PER_MACHINE,
        sets="use_cache",
    )
    max_cost: float | None = flag(
        "--max-cost",
        env="JUDGE_MAX_COST",
        positive=True,
        metavar="USD",
        panel=RUN,
        help="Stop (exit 3, resumable) before the run's spend would pass this.",
        to="max_cost",
        roles=Role.PER_MACHINE | Role.SHARED,
    )
    workers: str | None = flag(
        "--workers",
        env="JUDGE_WORKERS",
        metavar="N|auto",
        panel=SCALE,
        help="Judge in N processes (auto: one per core), sharing --concurrency, --rpm, --tpm "
        "and --max-cost evenly, one cache and one results file. For runs LiteLLM's CPU "
        "cost limits (fast local servers); default: 1.",
        roles=Role.PER_MACHINE,
        sets="workers",
    )
    shard: str | None = flag(
        "--shard",
        env="JUDGE_SHARD",
        metavar="i/N|auto",
        panel=SCALE,
        help="Judge only the cases whose id hashes to shard i of N (0-based), one machine of "
        "N; auto: from a Slurm array, a Kubernetes Indexed Job or JUDGE_SHARD_INDEX/COUNT. "
        "Join the shards with judge merge (the gate runs there).",
        roles=Role.PER_MACHINE | Role.THIS_RUN,
        sets="shard",
    )
    batch: bool = flag(
        "--batch",
        default=False,
        panel=SCALE,
        help="Submit every call to the provider's batch API (half price, results within "
        "24 h; openai/ models) and exit; finish with judge collect RUN.",
        to="batch",
        roles=Role.PER_MACHINE | Role.THIS_RUN,
    )
    conclude_only: bool = flag(
        "--conclude-only",
        default=False,
        panel=SCALE,
        hidden=True,
        help="Judge nothing: conclude from the results the run holds (judge merge).",
        to="conclude_only",
        roles=Role.THIS_RUN,
    )
    max_failures: str | None = flag(
        "--max-failures",
        metavar="N|P%",
        panel=RUN,
        help="Stop (exit 3) once more than N cases, or P% of finished cases, failed.",
        roles=Role.NONE,
        sets="max_failures",
    )
    limit: int | None = flag(
        "--limit",
        min=1,
        metavar="N",
        panel=DATA,
        help="Judge at most N cases.",
        to="limit",
        roles=Role.THIS_RUN,
    )
    sample: str | None = flag(
        "--sample",
        metavar="N|P%",
        panel=DATA,
        help="Judge a uniform random sample of N cases, or P% of them (see --seed).",
        roles=Role.THIS_RUN,
        sets="sample",
    )
    seed: int = flag(
        "--seed",
        default=0,
        metavar="N",
        panel=DATA,
        help="Seed for --sample and bootstraps.",
        to="seed",
        roles=Role.NONE,
    )
    field: list[str] | None = flag(
        "--field",
        metavar="NAME=COLUMN",
        panel=DATA,
        help="Read a case field from another key, e.g. --field output=answer.",
        roles=Role.VERDICTS,
        sets="field_map",
    )
    quiet: bool = flag(
        "--quiet",
        "-q",
        default=False,
        panel=OUTPUT,
        help="No progress bar or tables.",
        roles=Role.PER_MACHINE | Role.THIS_RUN,
    )
    json_output: bool = flag(
        "--json",
        default=False,
        panel=OUTPUT,
        help="Print summary.json on stdout, and nothing else there (the tables go to stderr).",
        roles=Role.PER_MACHINE | Role.THIS_RUN,
    )
    progress_every: float = flag(
        "--progress-every",
        default=10.0,
        env="JUDGE_PROGRESS_EVERY",
        positive=True,
        metavar="SECONDS",
        panel=OUTPUT,
        show_default=False,
        help="When stderr is not a terminal (CI logs): a progress line this often (default: 10).",
        roles=Role.PER_MACHINE,
    )

    @property
    def sample_size(self) -> SampleSize | None:
        """--sample as N cases or P% of them."""
        from judgecli.inputs.sampling import parse_sample

        return parse_sample(self.sample) if self.sample is not None else None


# Flags some commands leave out: calibrate judges every labelled case with one judge tier.
CASCADE_FLAGS = frozenset({"screen", "escalate", "screen_price"})
SUBSET_FLAGS = frozenset({"limit", "sample"})
# Refine judges each new answer to decide the next step: one sampled verdict per answer
# (no repeats, no logprob scores).
REPEAT_FLAGS = frozenset({"repeats", "score_mode"})
# Flags of the commands whose cases are judged once each, from a dataset (score, pairwise):
# a shard or a batch of calibrate's or refine's work has no merge or collect yet.
SCALE_OUT_FLAGS = frozenset({"shard", "batch", "conclude_only"})
# A checklist rubric is graded by `judge score` alone (settings.items_per_call): the other
# commands leave out the flags of its grading.
CHECKLIST_FLAGS = frozenset({"items_per_call"})


@cache
def flag_fields() -> tuple[FlagField, ...]:
    """Every shared flag, in JudgeFlags' order."""
    types = get_type_hints(JudgeFlags)
    return tuple(
        FlagField(f.name, types[f.name], f.default, f.metadata[FLAG]) for f in fields(JudgeFlags)
    )


def flags_with(role: Role) -> tuple[FlagField, ...]:
    """The shared flags that play `role`, in JudgeFlags' order."""
    return tuple(shared for shared in flag_fields() if role in shared.flag.roles)
