"""report.html in a real browser: headless Chromium (Debian's package, `make browser`) opens
a real run's page over the DevTools protocol, a screenshot is kept beside it (run/report.png),
and the case table's search box and filters are driven as a person would; a calibrate page
is driven through its "disagrees with the humans" filter and a case's collapsed text.
Skipped, saying why, only where no Chromium is installed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from judgecli.report.html import render_html
from judgecli.result import CaseResult, CaseStatus, Judgement
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.head import run_facts
from judgecli.verdict import Verdict
from tests.browser import Page, find_chromium, launch, png_distinct_bytes, png_size
from tests.integration.conftest import REPO

OLD = REPO / "datasets" / "old.jsonl"
NEW = REPO / "datasets" / "new.jsonl"
# A judge swayed by position, so that some ties are flips and some are not.
JUDGE = SimulatorConfig(position_bias=0.3)
WINDOW = (1280, 900)
DEADLINE_S = 25.0
"""For everything done in the browser; with the run, the test stays under 30 s."""

# Rows of the case table a person can see: one <tbody> per case, hidden by the filters.
VISIBLE_IDS = """Array.from(document.querySelectorAll("#cases > tbody"))
  .filter((b) => b.getClientRects().length > 0)
  .map((b) => b.querySelector("tr.case code").textContent)"""
COUNT_TEXT = 'document.getElementById("case-count").textContent'


def choose(key: str, value: str) -> str:
    """Pick `value` in the filter on data-`key`, firing `change` as a person's pick does."""
    return f"""(() => {{
  const s = document.querySelector('select[data-key="{key}"]');
  s.value = {json.dumps(value)};
  s.dispatchEvent(new Event("change", {{bubbles: true}}));
  return s.value;
}})()"""


CLEAR_SEARCH = """(() => {
  const s = document.getElementById("case-search");
  s.value = "";
  s.dispatchEvent(new Event("input", {bubbles: true}));
})()"""


@dataclass
class Seen:
    """What the page showed at each step, and every console error along the way."""

    title: str = ""
    filters_shown: bool = False
    screenshot: bytes = b""
    visible: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[int]:
    """A headless Chromium with a fresh profile; its DevTools port. Ended after the test."""
    executable = find_chromium()
    if executable is None:
        pytest.skip(
            "Chromium is not installed (no /usr/bin/chromium or chromium on PATH) and could "
            "not be: `make browser` installs Debian's package when run as root with apt-get"
        )
    with launch(executable, tmp_path / "chromium-profile", window=WINDOW) as port:
        yield port


async def look(page: Page, step: str, seen: Seen) -> None:
    seen.visible[step] = await page.evaluate(VISIBLE_IDS)
    seen.counts[step] = await page.evaluate(COUNT_TEXT)


async def drive_report(port: int, report: Path, search: str) -> Seen:
    """Open the report in light mode, screenshot it, then search and filter the cases."""
    seen = Seen()
    async with asyncio.timeout(DEADLINE_S), await Page.open(port) as page:
        await page.send(
            "Emulation.setEmulatedMedia",
            features=[{"name": "prefers-color-scheme", "value": "light"}],
        )
        await page.navigate(report.as_uri())
        seen.title = await page.evaluate("document.title")
        seen.filters_shown = await page.evaluate('!document.getElementById("case-filters").hidden')
        seen.screenshot = await page.screenshot()
        await look(page, "loaded", seen)
        await page.evaluate('document.getElementById("case-search").focus()')
        await page.type_text(search)
        await look(page, "searched", seen)
        await page.type_text("-no-such-case")
        await look(page, "searched nothing", seen)
        await page.evaluate(CLEAR_SEARCH)
        await page.evaluate(choose("winner", "tie"))
        await look(page, "ties", seen)
        await page.evaluate(choose("consistent", "no"))
        await look(page, "flipped ties", seen)
        await page.evaluate(choose("winner", ""))
        await page.evaluate(choose("consistent", ""))
        await look(page, "reset", seen)
        seen.errors = list(page.errors)
    return seen


def test_the_report_renders_without_errors_and_its_case_table_filters(run_cli, chromium):
    with SimulatorServer(JUDGE) as server:
        run = run_cli(
            server, "pairwise", str(OLD), str(NEW), "--rubric", "pairwise", "--out", "run"
        )
    assert run.exit_code == 0, run.stderr
    report = Path("run/report.html").resolve()
    results = [json.loads(line) for line in Path("run/results.jsonl").read_text().splitlines()]
    ids = [r["id"] for r in results]
    total = len(ids)
    ties = sorted(r["id"] for r in results if r["winner"] == "tie")
    flipped_ties = sorted(r["id"] for r in results if r["winner"] == "tie" and not r["consistent"])
    assert 0 < len(ties) < total, "the tie filter must hide some cases and keep some"
    assert 0 < len(flipped_ties) < len(ties), "the consistency filter must hide some ties"
    # An id no other id contains, so searching for it finds exactly its own row.
    search = next(i for i in ids if sum(i.lower() in j.lower() for j in ids) == 1)

    seen = asyncio.run(drive_report(chromium, report, search))

    screenshot = report.with_name("report.png")
    screenshot.write_bytes(seen.screenshot)
    assert seen.errors == []
    assert seen.title == "judge pairwise: pairwise (v1)"
    assert seen.filters_shown, "the script did not run: the filters stay hidden without it"
    width, height = png_size(seen.screenshot)
    assert width == WINDOW[0]
    assert height > WINDOW[1], "a full-page screenshot is taller than the window"
    assert len(seen.screenshot) > 50_000
    assert png_distinct_bytes(seen.screenshot) > 200, "the screenshot is blank"
    assert sorted(seen.visible["loaded"]) == sorted(ids)
    assert seen.counts["loaded"] == f"{total} of {total} shown"
    assert seen.visible["searched"] == [search]
    assert seen.counts["searched"] == f"1 of {total} shown"
    assert seen.visible["searched nothing"] == []
    assert sorted(seen.visible["ties"]) == ties
    assert seen.counts["ties"] == f"{len(ties)} of {total} shown"
    assert sorted(seen.visible["flipped ties"]) == flipped_ties
    assert seen.counts["reset"] == f"{total} of {total} shown"


async def errors_of(port: int, page_url: str) -> list[str]:
    async with asyncio.timeout(DEADLINE_S), await Page.open(port) as page:
        await page.navigate(page_url)
        await page.evaluate("new Promise((done) => setTimeout(done, 50))")
        return list(page.errors)


def test_the_browser_client_hears_console_errors_exceptions_and_failed_loads(
    chromium, tmp_path: Path
):
    # Without this, `seen.errors == []` above could pass because nothing was listening.
    page = tmp_path / "broken.html"
    page.write_text(
        '<!doctype html><title>broken</title><img src="missing.png">'
        '<script>console.error("said out loud"); null.property;</script>'
    )
    errors = asyncio.run(errors_of(chromium, page.as_uri()))
    assert any(e.startswith("console.error: said out loud") for e in errors), errors
    assert any(e.startswith("uncaught exception: TypeError") for e in errors), errors
    assert any("missing.png" in e for e in errors), errors


# (judge's score, human label) per case: c-1 and c-4 are the disagreements.
CALIBRATED = [(3, 3), (1, 4), (2, 2), (4, 4), (2, 3), (3, 3)]
ANSWER_WORD = "zanzibar"
"""A word only in c-2's answer, which sits collapsed behind the row's <details>."""
# checkVisibility, not getClientRects: Chromium still lays out a closed <details>'s content
# (hidden by content-visibility), so it has boxes while nobody can see it.
CASE_TEXT_SHOWN = """Array.from(document.querySelectorAll("#cases pre"))
  .filter((p) => p.textContent.includes("ANSWER") && p.checkVisibility()).length"""
OPEN_C2 = """(() => {
  const row = Array.from(document.querySelectorAll("#cases > tbody"))
    .find((b) => b.querySelector("tr.case code").textContent === "c-2");
  row.querySelector("summary").click();
})()"""


def calibrate_page(path: Path) -> Path:
    """A calibrate run's report.html, built from results with labels (no judge needed)."""
    rows = [
        CaseResult(
            id=f"c-{i}",
            status=CaseStatus.OK,
            score=float(score),
            rubric_hash="h",
            human_labels=[float(label)],
            agrees=score == label,
            case={
                "input": f"question {i}",
                "output": f"answer {i}" + (f" about {ANSWER_WORD}" if i == 2 else ""),
            },
            judgements=[
                Judgement(
                    model="m",
                    raw="{}",
                    attempts=1,
                    verdict=Verdict(reasoning="r", score=float(score)),
                )
            ],
        )
        for i, (score, label) in enumerate(CALIBRATED)
    ]
    summary = CalibrateSummary(
        **run_facts(rows, rubric=None, models=["m"]),
        n_labels=len(rows),
        n_labelled_cases=len(rows),
        n_labels_total=len(rows),
        n_unmatched_labels=0,
        accuracy=4 / 6,
    )
    path.write_text(render_html(summary, rows))
    return path


async def drive_calibrate_report(port: int, report: Path) -> Seen:
    """Filter the disagreements, then find a case by its answer and open its text."""
    seen = Seen()
    shown = CASE_TEXT_SHOWN.replace("ANSWER", ANSWER_WORD)
    async with asyncio.timeout(DEADLINE_S), await Page.open(port) as page:
        await page.navigate(report.as_uri())
        await look(page, "loaded", seen)
        await page.evaluate(choose("agrees", "no"))
        await look(page, "disagrees", seen)
        await page.evaluate(choose("agrees", "yes"))
        await look(page, "agrees", seen)
        await page.evaluate(choose("agrees", ""))
        await page.evaluate('document.getElementById("case-search").focus()')
        await page.type_text(ANSWER_WORD)
        await look(page, "searched an answer", seen)
        seen.counts["text shown before opening"] = str(await page.evaluate(shown))
        await page.evaluate(OPEN_C2)
        seen.counts["text shown after opening"] = str(await page.evaluate(shown))
        seen.errors = list(page.errors)
    return seen


# Regression (review 2026-11-23, findings 7 and 8): no human label, no way to list the
# disagreements, and no case text in the report.
def test_a_calibrate_report_filters_the_disagreements_and_opens_a_case_text(
    chromium, tmp_path: Path
):
    report = calibrate_page(tmp_path / "report.html")
    seen = asyncio.run(drive_calibrate_report(chromium, report))
    assert seen.errors == []
    assert seen.counts["loaded"] == "6 of 6 shown"
    assert sorted(seen.visible["disagrees"]) == ["c-1", "c-4"]
    assert seen.counts["disagrees"] == "2 of 6 shown"
    assert sorted(seen.visible["agrees"]) == ["c-0", "c-2", "c-3", "c-5"]
    assert seen.visible["searched an answer"] == ["c-2"]
    assert seen.counts["text shown before opening"] == "0", "case text must start collapsed"
    assert seen.counts["text shown after opening"] == "1"
