"""The shared flags of how the judge is asked (the Judge, Cascade and Run panels of
`--help`): the first part of settings/flags.py's JudgeFlags, which adds where a run goes,
what it prints and which cases it judges. See flags.py for what a field declares.
"""

from __future__ import annotations

from dataclasses import dataclass

from judgecli.settings.flag_spec import Role, flag

# The panels `--help` groups the flags in.
JUDGE = "Judge"
CASCADE = "Cascade"
RUN = "Run"
OUTPUT = "Output"
DATA = "Dataset"
SCALE = "Scale"


@dataclass(frozen=True)
class JudgingFlags:
    """The flags of how the judge is asked, in the order `--help` lists them."""

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
