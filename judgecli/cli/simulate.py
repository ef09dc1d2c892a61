"""`judge simulate`: run the bundled OpenAI-compatible judge simulator in the foreground.

Its verdicts are fake: text features and seeded hashes, or, with `--truth FILE`, the labels
of that file replayed with `--noise` for the answers it holds. Never a language model.
`--profile` makes one server play several judges of different quality, told apart by the
request's model (a noisy screen and a sharp judge for a cascade).
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli import app, exits_with_code, stderr
from judgecli.errors import ConfigError, ExitCode


@app.command("simulate")
@exits_with_code
def simulate_command(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0 picks a free one).")] = 8765,
    seed: Annotated[int, typer.Option(help="Seed of the deterministic verdicts.")] = 0,
    latency_ms: Annotated[float, typer.Option(min=0, help="Delay before each reply.")] = 0.0,
    rpm: Annotated[int | None, typer.Option(min=1, help="Answer 429 above this rate.")] = None,
    error_rate: Annotated[float, typer.Option(min=0, max=1, help="Share of HTTP 500s.")] = 0.0,
    drop_rate: Annotated[
        float, typer.Option(min=0, max=1, help="Share of connections dropped without reply.")
    ] = 0.0,
    malformed_rate: Annotated[
        float, typer.Option(min=0, max=1, help="Share of replies that are not valid JSON.")
    ] = 0.0,
    rate_limit_rate: Annotated[
        float, typer.Option(min=0, max=1, help="Share of random 429s (apart from --rpm).")
    ] = 0.0,
    rate_limit_retry_after: Annotated[
        float, typer.Option(min=0, metavar="SECONDS", help="Retry-After of those random 429s.")
    ] = 1.0,
    truncate_rate: Annotated[
        float, typer.Option(min=0, max=1, help="Share of replies whose body is cut in half.")
    ] = 0.0,
    position_bias: Annotated[
        float, typer.Option(min=0, max=1, help="Pairwise: prefers answer A this often when unsure.")
    ] = 0.0,
    length_bias: Annotated[
        float, typer.Option(min=0, max=1, help="Pairwise: prefers the longer answer this often.")
    ] = 0.0,
    truth: Annotated[
        Path | None,
        typer.Option(
            "--truth",
            metavar="FILE",
            help="JSONL cases with true labels (e.g. datasets/labels.jsonl): the answers it holds "
            "get their label instead of a text-feature verdict. Pointwise and binary rubrics.",
        ),
    ] = None,
    truth_field: Annotated[
        str, typer.Option(metavar="NAME", help="The key holding the label in the --truth file.")
    ] = "label",
    noise: Annotated[
        float,
        typer.Option(
            min=0, max=1, help="With --truth: probability of answering another value (seeded)."
        ),
    ] = 0.0,
    profile: Annotated[
        list[str] | None,
        typer.Option(
            "--profile",
            metavar="NAME:KEY=VALUE,...",
            help="Repeatable: the judge a request for model NAME plays, keys noise, position-bias, "
            "length-bias, e.g. --profile cheap:noise=0.3 --profile sharp:noise=0.02.",
        ),
    ] = None,
) -> ExitCode:
    """Serve fake, deterministic judge verdicts on 127.0.0.1 — NOT a language model.

    It answers /v1/chat/completions with JSON that fits the rubric's schema, scored by simple
    text features and a seeded hash; with --truth it replays the labels of a file instead,
    wrong with probability --noise. --profile gives a model name its own noise and biases,
    so one server plays a cheap and a strong judge at once. For offline demos and tests, never
    for real grading.
    """
    from judgecli.simulator import SimulatorConfig, serve_forever
    from judgecli.simulator_config import parse_profiles

    profiles = parse_profiles(profile or [])
    noisy = [f"--profile {name}:noise" for name, p in profiles.items() if p.noise]
    if (noise or noisy) and truth is None:
        flag = "--noise" if noise else noisy[0]
        raise ConfigError(f"{flag} needs --truth FILE", hint="e.g. --truth datasets/labels.jsonl")
    faults = {"--drop-rate": drop_rate, "--error-rate": error_rate,
              "--malformed-rate": malformed_rate, "--rate-limit-rate": rate_limit_rate,
              "--truncate-rate": truncate_rate}  # fmt: skip
    if math.fsum(faults.values()) > 1:
        # Checked here too, so the message names the flags rather than the config fields.
        given = " + ".join(f"{flag} {rate:g}" for flag, rate in faults.items() if rate)
        raise ConfigError(
            f"{given} add up to {math.fsum(faults.values()):g}; at most 1 is allowed",
            hint="each request draws at most one fault, so the shares must fit in one",
        )
    config = SimulatorConfig(
        port=port, seed=seed, latency_ms=latency_ms, rpm=rpm, error_rate=error_rate,
        drop_rate=drop_rate, malformed_rate=malformed_rate, rate_limit_rate=rate_limit_rate,
        rate_limit_retry_after_s=rate_limit_retry_after, truncate_rate=truncate_rate,
        position_bias=position_bias, length_bias=length_bias, truth_file=truth,
        truth_field=truth_field, noise=noise, profiles=profiles,
    )  # fmt: skip

    def ready(url: str) -> None:
        stderr.print(f"judge simulator (fake verdicts, not a model) on {url}/v1 — Ctrl-C stops")
        if truth is not None:
            stderr.print(f"replaying the {truth_field!r} labels of {truth} with noise {noise:g}; "
                         "other answers get text-feature verdicts")  # fmt: skip
        for name, judge in profiles.items():
            given = ", ".join(
                f"{k.replace('_', '-')} {v:g}"
                for k, v in judge.model_dump(exclude_none=True).items()
            )
            stderr.print(f"requests for model {name!r} get {given or 'the defaults'}")
        stderr.print(f"try: judge score datasets/example.jsonl --rubric helpfulness "
                     f"--model openai/sim --api-base {url}/v1")  # fmt: skip

    try:
        asyncio.run(serve_forever(config, on_ready=ready))
    except KeyboardInterrupt:
        stderr.print("simulator stopped")
    return ExitCode.OK
