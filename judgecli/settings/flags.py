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

The first fields, how the judge is asked, are JudgingFlags' (judging_flags.py), which
JudgeFlags extends: one table read in one order, kept in two files of a size to read.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, get_type_hints

from judgecli.settings.flag_spec import FLAG, FlagField, Role, flag
from judgecli.settings.judging_flags import DATA, OUTPUT, RUN, SCALE, JudgingFlags

if TYPE_CHECKING:
    from judgecli.inputs.sampling import SampleSize


@dataclass(frozen=True)
class JudgeFlags(JudgingFlags):
    """The shared flags as parsed, in the order `--help` lists them (a flag a command does
    not offer keeps its default).
    """

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
        "cost limits (fast local servers). Default: one per core when the run has 1,000 or "
        "more calls the reply cache cannot answer, else 1.",
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
    spec: Path | None = flag(
        "--spec",
        metavar="SPEC",
        panel=RUN,
        hidden=True,
        help="The evaluation spec this run is (judge run SPEC sets it): its files are checked "
        "and its hash recorded in run.json and summary.json.",
        roles=Role.THIS_RUN,
        sets="spec",
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


SPEC_PINS_TOO = frozenset({"limit", "sample", "spec"})
"""Shared flags an evaluation spec pins beside those of Role.VERDICTS: which cases are judged
(its n), and the spec itself (issue 35)."""


def pinned_by_spec() -> frozenset[str]:
    """The shared flags `judge run SPEC` does not take: what the spec pins."""
    verdicts = {shared.name for shared in flags_with(Role.VERDICTS)}
    return frozenset(verdicts) | SPEC_PINS_TOO
