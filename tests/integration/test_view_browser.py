"""`judge view` in a real browser (headless Chromium over the DevTools protocol, as
test_report_browser.py): browsing the runs and a filter, labelling with the keyboard, the
blind A/B order (what the rater pressed is stored as the winner the page hid), a reload
mid-labelling (the order stays, undo still works), and two raters labelling at once.
Skipped, saying why, only where no Chromium is installed. Issue 33.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from judgecli.view.server import ViewServer
from tests.browser import Page, find_chromium, launch
from tests.integration.test_view_api import make_runs

DEADLINE_S = 60.0
ANSWER_A = 'document.querySelector("#answer-a pre").textContent'
CASE_ID = "document.querySelector('main').dataset.id"
ROW_IDS = 'Array.from(document.querySelectorAll("tr.case-row")).map((r) => r.dataset.id)'


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_runs(tmp_path_factory.mktemp("view-browser") / "runs")


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[int]:
    executable = find_chromium()
    if executable is None:
        pytest.skip(
            "Chromium is not installed (no /usr/bin/chromium or chromium on PATH) and could "
            "not be: `make browser` installs Debian's package when run as root with apt-get"
        )
    with launch(executable, tmp_path / "chromium-profile") as port:
        yield port


async def second_page(port: int) -> Page:
    """A second tab: a page target of its own, attached as Page.open attaches the first."""
    session = aiohttp.ClientSession(base_url=f"http://127.0.0.1:{port}")
    async with session.put("/json/new?about:blank") as reply:
        target = await reply.json()
    ws = await session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0)
    page = Page(session, ws)
    for domain in ("Page", "Runtime", "Log"):
        await page.send(f"{domain}.enable")
    return page


async def focused(page: Page) -> Page:
    """A tab that takes keys though another tab is in front (two raters at one browser)."""
    await page.send("Emulation.setFocusEmulationEnabled", enabled=True)
    return page


async def press(page: Page, key: str, *, navigates: bool = False) -> None:
    """A key as the keyboard sends it; with `navigates`, wait for the page it leads to."""
    loaded = page.expect("Page.loadEventFired") if navigates else None
    await page.send("Input.dispatchKeyEvent", type="keyDown", key=key, text=key)
    await page.send("Input.dispatchKeyEvent", type="keyUp", key=key)
    if loaded is not None:
        async with asyncio.timeout(15):
            await loaded


async def click(page: Page, selector: str) -> None:
    """Click an element and wait for the page the click loads."""
    loaded = page.expect("Page.loadEventFired")
    await page.evaluate(f"document.querySelector({json.dumps(selector)}).click()")
    async with asyncio.timeout(15):
        await loaded


def results_of(runs: Path, run: str) -> dict[str, dict]:
    lines = (runs / run / "results.jsonl").read_text().splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def standing(runs: Path, run: str, rater: str) -> dict[str, object]:
    path = runs / run / "labels" / f"{rater}.jsonl"
    found: dict[str, object] = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        record = json.loads(line)
        found[record["id"]] = record["label"]
    return {k: v for k, v in found.items() if v is not None}


def winner_of(pressed: str, answer_a: str, case: dict) -> str:
    """What a rater's A or B means in the run's terms, from what the page showed as A."""
    new_is_a = answer_a.strip() == case["case"]["output_new"].strip()
    assert new_is_a or answer_a.strip() == case["case"]["output_old"].strip()
    if pressed == "t":
        return "tie"
    return "new" if (pressed == "a") == new_is_a else "old"


def test_browsing_the_runs_and_filtering_a_runs_cases(runs: Path, chromium: int):
    results = results_of(runs, "pair-biased")
    flipped = sorted(i for i, r in results.items() if r.get("consistent") is False)

    async def drive() -> tuple[list[str], list[str], list[str], list[str]]:
        with ViewServer([runs]) as view:
            async with asyncio.timeout(DEADLINE_S), await Page.open(chromium) as page:
                await page.navigate(f"{view.url}/")
                await click(page, 'a[href="/runs/pair-biased"]')
                every = await page.evaluate(ROW_IDS)
                loaded = page.expect("Page.loadEventFired")
                await page.evaluate(
                    """(() => { const box = document.querySelector(
                      'input[name=flag][value="orders-disagree"]');
                      box.checked = true; box.dispatchEvent(new Event("change")); })()"""
                )
                async with asyncio.timeout(15):
                    await loaded
                shown = await page.evaluate(ROW_IDS)
                await click(page, f'a[href="/runs/pair-biased/case?id={shown[0]}"]')
                heading = await page.evaluate("document.querySelector('h1').textContent")
                return every, shown, [heading], list(page.errors)

    every, shown, heading, errors = asyncio.run(drive())
    assert errors == []
    assert sorted(every) == sorted(results)
    assert sorted(shown) == flipped
    assert 0 < len(flipped) < len(results)
    assert shown[0] in heading[0]


def test_labelling_with_the_keyboard_blind_and_a_reload_mid_labelling(runs: Path, chromium: int):
    results = results_of(runs, "pair")

    async def drive() -> dict[str, object]:
        seen: dict[str, object] = {}
        with ViewServer([runs]) as view:
            start = f"{view.url}/runs/pair/label?rater=kim&strategy=uniform&budget=8"
            async with asyncio.timeout(DEADLINE_S), await Page.open(chromium) as page:
                await page.navigate(start)  # redirected to the plan's first case
                first, first_a = await page.evaluate(CASE_ID), await page.evaluate(ANSWER_A)
                await press(page, "a", navigates=True)  # saved, then on to the next case
                second, second_a = await page.evaluate(CASE_ID), await page.evaluate(ANSWER_A)
                await press(page, "b", navigates=True)
                third, third_a = await page.evaluate(CASE_ID), await page.evaluate(ANSWER_A)
                seen["labelled"] = standing(runs, "pair", "kim")
                # A reload mid-labelling: the same case, the same blind order, undo still there.
                loaded = page.expect("Page.loadEventFired")
                await page.send("Page.reload")
                async with asyncio.timeout(15):
                    await loaded
                seen["after reload"] = (await page.evaluate(CASE_ID), await page.evaluate(ANSWER_A))
                await press(page, "u", navigates=True)  # undoes the second case's label
                seen["undone on"] = await page.evaluate(CASE_ID)
                seen["chosen after undo"] = await page.evaluate(
                    'document.querySelectorAll("button.chosen").length'
                )
                seen["after undo"] = standing(runs, "pair", "kim")
                seen["errors"] = list(page.errors)
        seen["cases"] = [(first, first_a), (second, second_a), (third, third_a)]
        return seen

    seen = asyncio.run(drive())
    assert seen["errors"] == []
    (first, first_a), (second, second_a), (third, third_a) = seen["cases"]
    assert len({first, second, third}) == 3
    assert seen["labelled"] == {
        first: winner_of("a", first_a, results[first]),
        second: winner_of("b", second_a, results[second]),
    }
    assert seen["after reload"] == (third, third_a)
    assert seen["undone on"] == second
    assert seen["chosen after undo"] == 0
    assert seen["after undo"] == {first: winner_of("a", first_a, results[first])}
    lines = (runs / "pair" / "labels" / "kim.jsonl").read_text().splitlines()
    assert all(0 < json.loads(line).get("inclusion_probability", 1) <= 1 for line in lines)
    assert json.loads(lines[0])["strategy"] == "uniform"


def test_two_raters_label_at_once_and_see_their_agreement(runs: Path, chromium: int):
    async def rate(page: Page, url: str, keys: str) -> list[str]:
        await page.navigate(url)
        done = []
        for key in keys:
            done.append(await page.evaluate(CASE_ID))
            await press(page, key, navigates=True)
        return done

    async def drive() -> tuple[list[str], list[str], str, list[str]]:
        with ViewServer([runs]) as view:
            base = f"{view.url}/runs/score/label?strategy=uniform&budget=6&rater="
            async with asyncio.timeout(DEADLINE_S), await Page.open(chromium) as one:
                two = await focused(await second_page(chromium))
                await focused(one)
                async with two:
                    lee, max_ = await asyncio.gather(
                        rate(one, base + "lee", "3421"), rate(two, base + "max", "3321")
                    )
                    await one.evaluate("new Promise((done) => setTimeout(done, 300))")
                    table = await one.evaluate('document.getElementById("agreement").textContent')
                    return lee, max_, table, [*one.errors, *two.errors]

    lee, max_, table, errors = asyncio.run(drive())
    assert errors == []
    assert lee == max_, "both raters follow one plan"
    assert standing(runs, "score", "lee") == dict(zip(lee, [3.0, 4.0, 2.0, 1.0], strict=True))
    assert standing(runs, "score", "max") == dict(zip(max_, [3.0, 3.0, 2.0, 1.0], strict=True))
    assert "lee" in table
    assert "max" in table
    assert "judge" in table
