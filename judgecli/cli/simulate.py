"""`judge simulate`: run the bundled OpenAI-compatible judge simulator in the foreground.

Its verdicts are fake: text features and seeded hashes, or, with `--truth FILE`, the labels
of that file replayed with `--noise` for the answers it holds. Never a language model.
`--jitter` makes a share of calls random guesses, drawn anew for each identical request, so
repeated judging (`--repeats`) has known per-call noise to measure.
`--style` and `--formats` make it answer as real judges and servers do (think blocks, prose,
llama-cpp-python refusing json_schema); `--profile` gives one model name its own settings,
so one server plays several judges at once (a noisy screen and a sharp judge for a cascade).
It also serves OpenAI's Files and Batch APIs; `--batch-steps`, `--batch-fail-rate` and
`--batch-expire` set how its batches progress and fail.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import typer

from judgecli.cli.app import app, exits_with_code, stderr
from judgecli.errors import ConfigError, ExitCode
from judgecli.gc_pause import resume_gc

MAX_PORT = 65535
# Panels keep each options table narrow enough that no flag name is cut at 80 columns.
_LIMIT, _FAULTS, _JUDGES, _BATCHES = "Rate limit", "Faults", "Judges", "Batches"


def _option(text: str, panel: str | None = None, *names: str, **settings: Any) -> Any:
    return typer.Option(*names, help=text, rich_help_panel=panel, **settings)


def _share(text: str, panel: str = _FAULTS, metavar: str = "SHARE") -> Any:
    return _option(text, panel, min=0, max=1, metavar=metavar)


_Port = Annotated[int, _option("Port on 127.0.0.1 (0 picks a free one).", metavar="N")]
_Seed = Annotated[int, _option("Seed of the deterministic verdicts.", metavar="N")]
_Latency = Annotated[float, _option("Delay before each reply.", min=0, metavar="MS")]
_Rpm = Annotated[
    int | None, _option("Answer 429 above N requests per window.", _LIMIT, min=1, metavar="N")
]
_Window = Annotated[
    float,
    _option(
        "Length of the --rpm window; 6 runs a per-minute limit 10x faster.",
        _LIMIT,
        metavar="SECONDS",
    ),
]
_Prefill = Annotated[
    bool,
    _option(
        "Start with the --rpm window full, as if another job had just used the key.",
        _LIMIT,
        "--rate-limit-prefill",
        show_default=False,
    ),
]
# One flag, not a --x/--no-x pair: the pair's second column would squeeze the help to 80.
_NoHeaders = Annotated[
    bool,
    _option(
        "Send no x-ratelimit-* headers with --rpm, only Retry-After.",
        _LIMIT,
        "--no-rate-limit-headers",
        show_default=False,
    ),
]
_RetryAfter = Annotated[
    float, _option("Retry-After of the random 429s.", _LIMIT, min=0, metavar="SECONDS")
]
_Style = Annotated[
    str,
    _option(
        "How verdicts are worded: json, think, think-unopened, "
        "reasoning-content, fenced, prose or truncated.",
        _JUDGES,
        metavar="STYLE",
    ),
]
_Formats = Annotated[
    str,
    _option(
        "response_format types accepted: all, llama-cpp, none, ignored, "
        "or types joined by + (json_schema, json_object, text).",
        _JUDGES,
        metavar="SPEC",
    ),
]
_Truth = Annotated[
    Path | None,
    _option(
        "JSONL cases with true labels (e.g. datasets/labels.jsonl):"
        " the answers it holds get their label. Pointwise and "
        "binary rubrics.",
        _JUDGES,
        metavar="FILE",
    ),
]
_TruthField = Annotated[
    str, _option("The key holding the label in the --truth file.", _JUDGES, metavar="NAME")
]
_BlindSpot = Annotated[
    str | None,
    _option(
        "With --truth: a binary judge passes answers holding PHRASE whatever their label, "
        "until its instructions quote three words of it (judge align's known answer).",
        _JUDGES,
        metavar="PHRASE",
    ),
]
_IgnoresPrompt = Annotated[
    bool,
    _option(
        "With --blind-spot: no instruction fixes it (the judge ignores its prompt).",
        _JUDGES,
        "--ignores-prompt",
        show_default=False,
    ),
]
_Profile = Annotated[
    list[str] | None,
    _option(
        "Repeatable: the judge model NAME plays; keys noise, position-bias, length-bias, jitter, "
        "style, formats, e.g. --profile r1:style=think --profile local:formats=llama-cpp.",
        _JUDGES,
        metavar="NAME:K=V,...",
    ),
]
_BatchSteps = Annotated[
    int,
    _option(
        "Retrieves a batch takes to complete (0: at once); counted, never timed.",
        _BATCHES,
        min=0,
        metavar="N",
    ),
]
_BatchExpire = Annotated[
    bool,
    _option(
        "Batches expire with half their lines answered, the rest batch_expired.",
        _BATCHES,
        "--batch-expire",
        show_default=False,
    ),
]
_HELP = (
    "Serve fake, deterministic judge verdicts on 127.0.0.1 — NOT a language model.\n\n"
    "It answers /v1/chat/completions with JSON that fits the rubric's schema, scored by simple "
    "text features and a seeded hash; with --truth it replays the labels of a file instead, "
    "wrong with probability --noise; --jitter makes a share of calls random guesses, drawn "
    "anew for each identical request. --style and --formats play real judges and servers "
    "(think blocks, prose, llama-cpp-python refusing json_schema); --profile gives one model "
    "name its own settings. For offline demos and tests, never for real grading."
)


@app.command("simulate", help=_HELP)
@exits_with_code
def simulate_command(
    port: _Port = 8765,
    seed: _Seed = 0,
    latency_ms: _Latency = 0.0,
    rpm: _Rpm = None,
    rate_limit_window: _Window = 60.0,
    rate_limit_prefill: _Prefill = False,
    hide_rate_limit_headers: _NoHeaders = False,
    rate_limit_rate: Annotated[float, _share("Share of random 429s, besides --rpm.", _LIMIT)] = 0.0,
    rate_limit_retry_after: _RetryAfter = 1.0,
    error_rate: Annotated[float, _share("Share of HTTP 500s.")] = 0.0,
    drop_rate: Annotated[float, _share("Share of connections dropped without reply.")] = 0.0,
    malformed_rate: Annotated[float, _share("Share of replies that are not JSON.")] = 0.0,
    truncate_rate: Annotated[float, _share("Share of replies whose body is cut in half.")] = 0.0,
    style: _Style = "json",
    formats: _Formats = "all",
    position_bias: Annotated[
        float, _share("Pairwise: prefers answer A this often when unsure.", _JUDGES, "P")
    ] = 0.0,
    length_bias: Annotated[
        float, _share("Pairwise: prefers the longer answer this often.", _JUDGES, "P")
    ] = 0.0,
    padding_bias: Annotated[
        float, _share("judge probe: prefers an answer padded with filler this often.", _JUDGES, "P")
    ] = 0.0,
    verbosity_bias: Annotated[
        float,
        _share("judge probe: prefers an answer restated at 2x length this often.", _JUDGES, "P"),
    ] = 0.0,
    self_bias: Annotated[
        float,
        _share("judge probe: prefers its own model family's answer this often.", _JUDGES, "P"),
    ] = 0.0,
    self_answers: Annotated[
        list[Path] | None,
        _option(
            "JSONL answers naming their generator (output, and generator or model), for "
            "--self-bias; repeatable.",
            _JUDGES,
            metavar="FILE",
        ),
    ] = None,
    truth: _Truth = None,
    truth_field: _TruthField = "label",
    noise: Annotated[
        float, _share("With --truth: probability of answering another value.", _JUDGES, "P")
    ] = 0.0,
    jitter: Annotated[
        float,
        _share("Share of verdicts that are random guesses, new for each repeat.", _JUDGES, "P"),
    ] = 0.0,
    blind_spot: _BlindSpot = None,
    ignores_prompt: _IgnoresPrompt = False,
    profile: _Profile = None,
    batch_steps: _BatchSteps = 2,
    batch_fail_rate: Annotated[
        float, _share("Share of each batch's lines that fail with HTTP 500.", _BATCHES)
    ] = 0.0,
    batch_expire: _BatchExpire = False,
) -> ExitCode:
    """Run the simulator in the foreground until Ctrl-C (its help is `_HELP`)."""
    # Imported here so `judge --help` stays fast.
    import asyncio

    from judgecli.simulator.profiles import parse_profiles, parse_server_settings
    from judgecli.simulator.server import SimulatorConfig, serve_forever

    if not 0 <= port <= MAX_PORT:
        raise ConfigError(
            f"--port {port} is not a TCP port (0 to {MAX_PORT})",
            hint="e.g. --port 8765 (0 picks a free one)",
        )
    profiles = parse_profiles(profile or [])
    reply_style, accepted = parse_server_settings(style, formats)
    noisy = [f"--profile {name}:noise" for name, p in profiles.items() if p.noise]
    if (noise or noisy) and truth is None:
        flag = "--noise" if noise else noisy[0]
        raise ConfigError(f"{flag} needs --truth FILE", hint="e.g. --truth datasets/labels.jsonl")
    if blind_spot is not None and truth is None:
        raise ConfigError(
            "--blind-spot needs --truth FILE", hint="e.g. --truth datasets/align.jsonl"
        )
    if self_bias and not self_answers:
        raise ConfigError(
            "--self-bias needs --self-answers FILE (who wrote each answer)",
            hint="e.g. --self-answers datasets/old.jsonl --self-answers datasets/new.jsonl",
        )
    if self_answers:
        from judgecli.simulator.probes import generators

        generators(tuple(self_answers))  # a missing or malformed file: exit 2 now
    if ignores_prompt and blind_spot is None:
        raise ConfigError(
            "--ignores-prompt needs --blind-spot PHRASE", hint="e.g. --blind-spot 'I guarantee'"
        )
    if rate_limit_window <= 0:
        raise ConfigError(
            f"--rate-limit-window must be more than 0, not {rate_limit_window:g}",
            hint="e.g. --rate-limit-window 6: a per-minute limit, 10x faster",
        )
    if rate_limit_prefill and rpm is None:
        raise ConfigError("--rate-limit-prefill needs --rpm N", hint="e.g. --rpm 30")
    faults = {
        "--drop-rate": drop_rate,
        "--error-rate": error_rate,
        "--malformed-rate": malformed_rate,
        "--rate-limit-rate": rate_limit_rate,
        "--truncate-rate": truncate_rate,
    }
    if math.fsum(faults.values()) > 1:
        # Checked here too, so the message names the flags rather than the config fields.
        given = " + ".join(f"{flag} {rate:g}" for flag, rate in faults.items() if rate)
        raise ConfigError(
            f"{given} add up to {math.fsum(faults.values()):g}; at most 1 is allowed",
            hint="each request draws at most one fault, so the shares must fit in one",
        )
    config = SimulatorConfig(
        port=port,
        seed=seed,
        latency_ms=latency_ms,
        rpm=rpm,
        error_rate=error_rate,
        drop_rate=drop_rate,
        malformed_rate=malformed_rate,
        rate_limit_rate=rate_limit_rate,
        rate_limit_retry_after_s=rate_limit_retry_after,
        truncate_rate=truncate_rate,
        rate_limit_window_s=rate_limit_window,
        rate_limit_prefill=rate_limit_prefill,
        rate_limit_headers=not hide_rate_limit_headers,
        position_bias=position_bias,
        length_bias=length_bias,
        padding_bias=padding_bias,
        verbosity_bias=verbosity_bias,
        self_bias=self_bias,
        self_answers=tuple(self_answers or ()),
        truth_file=truth,
        truth_field=truth_field,
        noise=noise,
        jitter=jitter,
        blind_spot=blind_spot,
        ignores_prompt=ignores_prompt,
        style=reply_style,
        formats=accepted,
        profiles=profiles,
        batch_steps=batch_steps,
        batch_fail_rate=batch_fail_rate,
        batch_expire=batch_expire,
    )

    def ready(url: str) -> None:
        stderr.print(f"judge simulator (fake verdicts, not a model) on {url}/v1 — Ctrl-C stops")
        for line in config.describe():
            stderr.print(line)
        import shlex

        from judgecli.cli.demo_data import bundled_datasets

        # The example ships in the package; named whole, the command works from any folder
        # (issue 29).
        example = shlex.quote(str(bundled_datasets() / "example.jsonl"))
        stderr.print(
            f"try: judge score {example} --rubric helpfulness "
            f"--model openai/sim --api-base {url}/v1"
        )

    resume_gc()  # a server runs for hours: it collects its garbage (gc_pause.py)
    try:
        asyncio.run(serve_forever(config, on_ready=ready))
    except KeyboardInterrupt:
        stderr.print("simulator stopped")
    return ExitCode.OK
