"""Regenerate docs/report.png (`make docs-images`): a real pairwise run of the example
datasets against the bundled simulator, its report.html rendered by headless Chromium.

Usage: python docs/images.py [CHROMIUM]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from judgecli.simulator.server import SimulatorConfig, SimulatorServer

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
# Wide enough for the report's two chart columns, tall enough to show the verdict and the
# first two rows of charts; the PNG stays near 150 KB.
WINDOW = "1200,900"


def judge_pairwise(api_base: str, out: Path) -> None:
    """The README's first run: NEW against OLD, both orders, gate at 55%."""
    judge = Path(sys.executable).with_name("judge")
    datasets = REPO / "datasets"
    # The simulator takes any key; LiteLLM's openai/ route only insists that one is set.
    env = {**os.environ, "OPENAI_API_KEY": "sk-docs-simulator"}
    args = [
        str(judge),
        "pairwise",
        str(datasets / "old.jsonl"),
        str(datasets / "new.jsonl"),
        "--rubric",
        "pairwise",
        "--model",
        "openai/sim",
        "--api-base",
        api_base,
        "--min-win-rate",
        "0.55",
        "--no-cache",
        "--quiet",
        "--out",
        str(out),
    ]
    subprocess.run(args, env=env, check=True, timeout=600)


def headless(chromium: str, png: Path, profile: Path) -> list[str]:
    """Chromium's command line for one screenshot of WINDOW's size into `png`, headless; a
    profile of its own keeps the user's browser state out (docs/view_images.py too).
    """
    return [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        f"--user-data-dir={profile}",
        f"--window-size={WINDOW}",
        f"--screenshot={png}",
    ]


def screenshot(chromium: str, page: Path, png: Path, profile: Path) -> None:
    """Render `page` headless."""
    args = [*headless(chromium, png, profile), page.as_uri()]
    subprocess.run(args, check=True, timeout=300, capture_output=True)


def main() -> None:
    """Run, render, and say how large the PNG came out (README wants it under 300 KB)."""
    chromium = sys.argv[1] if len(sys.argv) > 1 else "chromium"
    with tempfile.TemporaryDirectory() as tmp, SimulatorServer(SimulatorConfig()) as server:
        run = Path(tmp) / "run"
        judge_pairwise(f"{server.url}/v1", run)
        screenshot(chromium, run / "report.html", DOCS / "report.png", Path(tmp) / "chromium")
    size = (DOCS / "report.png").stat().st_size
    print(f"docs/report.png: {size / 1024:.0f} KB")  # noqa: T201 (a script, not judgecli)


if __name__ == "__main__":
    main()
