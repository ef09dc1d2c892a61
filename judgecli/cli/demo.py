"""`judge demo`: the offline demo — start the bundled simulator and run real commands on it,
on the example datasets the package ships (cli/demo_data.py), from any folder.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from judgecli.cli.app import app, exits_with_code, stdout
from judgecli.cli.demo_data import shown_path
from judgecli.errors import ExitCode


def demo_steps(api_base: str, out: Path, datasets: Path) -> list[tuple[str, list[str], set[int]]]:
    """(title, judge arguments, exit codes that mean the step worked) for each demo step, on
    the example files in `datasets`, writing run directories under `out`.
    """
    sim = ["--model", "openai/sim", "--api-base", api_base]
    return [
        (
            "Grade 24 answers for helpfulness (pointwise 1-4, pass at 3)",
            [
                "score",
                str(datasets / "example.jsonl"),
                "--rubric",
                "helpfulness",
                *sim,
                "--out",
                str(out / "score"),
            ],
            {0},
        ),
        (
            "Is NEW better than OLD? Both orders, gate at 55% (expect PASS, exit 0)",
            [
                "pairwise",
                str(datasets / "old.jsonl"),
                str(datasets / "new.jsonl"),
                *sim,
                "--min-win-rate",
                "0.55",
                "--out",
                str(out / "pairwise-pass"),
            ],
            {0},
        ),
        (
            "Tiered: a cheap screen judges every pair, the strong judge only the pairs the "
            "screen is unsure of",
            [
                "pairwise",
                str(datasets / "old.jsonl"),
                str(datasets / "new.jsonl"),
                *sim,
                "--screen",
                "openai/sim-mini",
                "--price",
                "2.5,10",
                "--screen-price",
                "0.15,0.6",
                "--no-cache",
                "--out",
                str(out / "pairwise-tiered"),
            ],
            {0},
        ),
        (
            "A regressed candidate against the same gate (expect FAIL, exit 1)",
            [
                "pairwise",
                str(datasets / "old.jsonl"),
                str(datasets / "regressed.jsonl"),
                *sim,
                "--min-win-rate",
                "0.55",
                "--out",
                str(out / "pairwise-fail"),
            ],
            {1},
        ),
        (
            "Agents: is version B's agent better than A's? Their runs of the same 20 tasks, "
            "compared whole (tool calls, results, answers), both orders, gate at 55%",
            [
                "pairwise",
                str(datasets / "agent-a.jsonl"),
                str(datasets / "agent-b.jsonl"),
                "--rubric",
                "trajectory-pairwise",
                *sim,
                "--min-win-rate",
                "0.55",
                "--out",
                str(out / "agents"),
            ],
            {0},
        ),
        (
            "How far can we trust this judge? Agreement with two human raters (gate: κ ≥ 0.6)",
            [
                "calibrate",
                str(datasets / "labels.jsonl"),
                "--rubric",
                "helpfulness",
                *sim,
                "--min-kappa",
                "0.6",
                "--out",
                str(out / "calibrate"),
            ],
            {0},
        ),
        (
            "Is the judge itself stable? Each case asked 3 times of a sampling judge (gate: "
            "the same verdict on at least half the cases)",
            [
                "score",
                str(datasets / "example.jsonl"),
                "--rubric",
                "helpfulness",
                "--model",
                "openai/sim-sampled",
                "--api-base",
                api_base,
                "--repeats",
                "3",
                "--temperature",
                "0.7",
                "--min-stability",
                "0.5",
                "--out",
                str(out / "repeats"),
            ],
            {0},
        ),
        (
            "Self-refine: regenerate answers below the bar with the judge's feedback",
            [
                "refine",
                str(datasets / "example.jsonl"),
                "--rubric",
                "helpfulness",
                "--generator",
                "openai/gen-sim",
                *sim,
                "--max-attempts",
                "3",
                "--out",
                str(out / "refine"),
            ],
            {0},
        ),
        (
            "Re-check the first comparison's summary with a stricter gate, no judge calls",
            [
                "gate",
                str(out / "pairwise-pass" / "summary.json"),
                "--min-win-rate",
                "0.55",
                "--on",
                "lower-bound",
            ],
            {0, 1},
        ),
    ]


@app.command("demo")
@exits_with_code
def demo_command(
    out: Annotated[
        Path,
        typer.Option(
            help="Where the demo's run directories go: a folder named <UTC time>-demo in it."
        ),
    ] = Path("runs"),
    latency_ms: Annotated[float, typer.Option(help="Simulated judge latency.")] = 30.0,
) -> ExitCode:
    """Run the offline demo: the bundled judge simulator (fake verdicts) and real judge runs
    on the example datasets judge ships; works from any folder.
    """
    from judgecli.cli.demo_data import demo_datasets
    from judgecli.simulator.config import JudgeProfile
    from judgecli.simulator.server import SimulatorConfig, SimulatorServer

    datasets = demo_datasets()
    target = out / f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-demo"
    # A little position bias, so the demo shows what judging both orders catches; and the
    # human labels of datasets/labels.jsonl replayed with 20% noise, so calibrate has a
    # judge that is good but not perfect. The cheap screen of the tiered step, sim-mini, is
    # much more position-biased than sim; sim-sampled answers at random one call in five.
    config = SimulatorConfig(
        latency_ms=latency_ms,
        latency_jitter_ms=latency_ms / 3,
        position_bias=0.25,
        truth_file=datasets / "labels.jsonl",
        noise=0.2,
        # sim-sampled guesses on 20% of its calls: what --repeats measures.
        profiles={
            "sim-mini": JudgeProfile(position_bias=0.6),
            "sim-sampled": JudgeProfile(jitter=0.2),
        },
    )
    with SimulatorServer(config) as sim:
        stdout.print(
            f"[bold]judge simulator[/] on {sim.url} — deterministic fake verdicts, not a model\n"
        )
        for title, args, expected in demo_steps(f"{sim.url}/v1", target, datasets):
            stdout.rule(title)
            stdout.print(f"[dim]$ judge {escape(shlex.join(args))}[/]")
            code = subprocess.run([sys.executable, "-m", "judgecli", *args], check=False).returncode
            verdict = "as expected" if code in expected else "UNEXPECTED"
            stdout.print(f"exit code {code} ({verdict})\n")
            if code not in expected:
                return ExitCode.INCOMPLETE
    for line in next_steps(target, datasets):
        stdout.print(line, soft_wrap=True)
    return ExitCode.OK


def next_steps(target: Path, datasets: Path) -> list[str]:
    """The demo's last words: where its runs are, which report to open, what to try next
    (on the example files in `datasets`).
    """

    def data(name: str) -> str:
        return shlex.quote(shown_path(datasets / name))

    report = shown_path(target / "pairwise-pass" / "report.html")
    real = "--model openai/gpt-4o-mini"
    return [
        f"demo runs are in {escape(shown_path(target))}",
        f"open {escape(report)}  (the comparison that passed its gate: verdicts, the "
        "interval, both orders of every case)",
        "",
        "next, with a real judge (export OPENAI_API_KEY=..., or pick another LiteLLM model; "
        "--api-base URL for vLLM, Ollama or a proxy):",
        escape(f"  judge score {data('example.jsonl')} --rubric helpfulness {real}"),
        escape(
            f"  judge pairwise {data('old.jsonl')} {data('new.jsonl')} {real} --min-win-rate 0.55"
        ),
        escape(f"  judge calibrate {data('labels.jsonl')} --rubric helpfulness {real}"),
        escape(
            f"  judge pairwise {data('agent-a.jsonl')} {data('agent-b.jsonl')} "
            f"--rubric trajectory-pairwise {real}    (agents: docs/agents.md)"
        ),
        "  judge rubrics list    (the rubric library; `judge rubrics show NAME` to start your own)",
    ]
