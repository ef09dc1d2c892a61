"""Regenerate docs/view-*.png (`make docs-images`): the pages of `judge view` over real runs
made against the bundled simulator (a score run and two pairwise runs of the same cases,
one by a judge swayed by position), with two raters' labels written through the viewer's
own API, rendered by headless Chromium.

Usage: python docs/view_images.py [CHROMIUM]
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

# docs/images.py, beside this script (run as `python docs/view_images.py`: its folder is
# on sys.path).
from images import headless

from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from judgecli.view.server import ViewServer

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
PAGES = {
    "view-runs.png": "/",
    "view-cases.png": "/runs/pairwise-biased?flag=orders-disagree",
    "view-case.png": "/runs/pairwise-biased/case?id=p-03",
    "view-label.png": "/runs/pairwise/label?id=p-03&rater=ann&strategy=disagreement&budget=10",
    "view-compare.png": "/compare?a=pairwise&b=pairwise-biased",
}


def judge(api_base: str, *args: str) -> None:
    """A judge command against the simulator, as a user runs it."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-docs-simulator"}
    command = [str(Path(sys.executable).with_name("judge")), *args]
    command += ["--model", "openai/sim", "--api-base", api_base, "--no-cache", "--quiet"]
    subprocess.run(command, env=env, check=True, timeout=600)


def make_runs(folder: Path) -> None:
    """The runs the screenshots show."""
    datasets = REPO / "datasets"
    old, new = str(datasets / "old.jsonl"), str(datasets / "new.jsonl")
    with SimulatorServer(SimulatorConfig()) as server:
        api = f"{server.url}/v1"
        judge(
            api,
            "score",
            str(datasets / "example.jsonl"),
            "--rubric",
            "helpfulness",
            "--out",
            str(folder / "score-helpfulness"),
        )
        judge(
            api, "pairwise", old, new, "--min-win-rate", "0.55", "--out", str(folder / "pairwise")
        )
    with SimulatorServer(SimulatorConfig(position_bias=0.4, seed=3)) as server:
        judge(f"{server.url}/v1", "pairwise", old, new, "--out", str(folder / "pairwise-biased"))


def label(view: ViewServer, run: str, labels: list[tuple[str, str, str]]) -> None:
    """Label as the page does: through the API, with the page's write token."""
    page = urllib.request.urlopen(f"{view.url}/", timeout=30).read().decode()
    token = re.search(r'name="judge-token" content="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    for rater, case_id, value in labels:
        body = {
            "id": case_id,
            "label": value,
            "rater": rater,
            "strategy": "disagreement",
            "budget": 10,
        }
        request = urllib.request.Request(
            f"{view.url}/api/runs/{run}/labels",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "X-Judge-Token": token},
        )
        urllib.request.urlopen(request, timeout=30).read()


def screenshot(chromium: str, url: str, png: Path, profile: Path) -> None:
    """Render a page headless, its scripts given two seconds to fetch what they show."""
    args = [
        *headless(chromium, png, profile),
        "--virtual-time-budget=2000",
        url,
    ]
    subprocess.run(args, check=True, timeout=300, capture_output=True)


def main() -> None:
    """Run, label, render, and say how large each PNG came out."""
    chromium = sys.argv[1] if len(sys.argv) > 1 else "chromium"
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp) / "runs"
        make_runs(runs)
        with ViewServer([runs]) as view:
            label(
                view,
                "pairwise",
                [
                    ("ann", "p-01", "A"),
                    ("ann", "p-02", "tie"),
                    ("bo", "p-01", "B"),
                    ("bo", "p-02", "tie"),
                ],
            )
            for name, path in PAGES.items():
                screenshot(chromium, f"{view.url}{path}", DOCS / name, Path(tmp) / "chromium")
                size = (DOCS / name).stat().st_size
                print(f"docs/{name}: {size / 1024:.0f} KB")  # noqa: T201 (a script, not judgecli)


if __name__ == "__main__":
    main()
