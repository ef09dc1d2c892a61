"""Judge shift vs system shift in pairwise runs (issue 35) through the real CLI, LiteLLM and
the simulator: two pairwise runs over two result sets, judged by different judges.

Run A is the `sharp` judge (it answers every labelled pair's true winner) on OLD vs NEW₁,
run B the `noisy` judge (another verdict with probability 0.3, a seeded draw per pair) on
the same OLD vs NEW₂. NEW₂ keeps 40 of NEW₁'s answers byte for byte (the anchors: both
outputs unchanged) and replaces 20 worse ones by better ones. The simulator's labelled
answers give each pair a true winner (no true ties: a tie's flip is not the same in both
orders), so every case's value (1 NEW wins, 0 OLD wins, ½ tie) is recomputed here from the
simulator's own draw (`judgecli.simulator.truth_runs.pair_truth`), not from drift's word.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

from judgecli.simulator.config import JudgeProfile
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from judgecli.simulator.truth_runs import pair_truth
from tests.browser import Page, find_chromium, launch
from tests.integration.conftest import write_jsonl

N_ANCHORS, N_CHANGED = 40, 20
NOISE, SEED = 0.3, 0
FLOOR = 0.5


def answer(i: int, tag: str, right: bool) -> str:
    return f"Answer {tag} {i}: the sum is {'right' if right else 'wrong'}."


def question(i: int) -> str:
    return f"What is {i} + {i}?"


# Each case: (OLD's answer and label, NEW₁'s, NEW₂'s). An anchor's NEW is the same text in
# both; a changed case's OLD (label ½) beats NEW₁ (0) and loses to NEW₂ (1).
CASES = [
    (
        (answer(i, "old", i % 3 == 0), float(i % 3 == 0)),
        (answer(i, "new", i % 3 != 0), float(i % 3 != 0)),
        (answer(i, "new", i % 3 != 0), float(i % 3 != 0)),
    )
    for i in range(1, N_ANCHORS + 1)
] + [
    ((answer(i, "old", True), 0.5), (answer(i, "new", False), 0.0), (answer(i, "newer", True), 1.0))
    for i in range(N_ANCHORS + 1, N_ANCHORS + N_CHANGED + 1)
]


def rows(side: int) -> list[dict[str, str]]:
    return [
        {"id": f"c{i}", "input": question(i), "output": case[side][0]}
        for i, case in enumerate(CASES, start=1)
    ]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pairwise_shift")
    truth = {
        (question(i), text): label for i, case in enumerate(CASES, start=1) for text, label in case
    }
    return {
        "old": write_jsonl(folder / "old.jsonl", rows(0)),
        "new1": write_jsonl(folder / "new1.jsonl", rows(1)),
        "new2": write_jsonl(folder / "new2.jsonl", rows(2)),
        "truth": write_jsonl(
            folder / "truth.jsonl",
            [{"input": q, "output": text, "label": label} for (q, text), label in truth.items()],
        ),
    }


@pytest.fixture(scope="module")
def server(files: dict[str, Path]):
    config = SimulatorConfig(
        seed=SEED,
        truth_file=files["truth"],
        profiles={"sharp": JudgeProfile(noise=0.0), "noisy": JudgeProfile(noise=NOISE)},
    )
    with SimulatorServer(config) as running:
        yield running


def value(model: str, noise: float, old: tuple[str, float], new: tuple[str, float]) -> float:
    """NEW's outcome as the simulator's draw makes `model` judge the pair (OLD shown as A;
    both orders agree, so the order does not matter)."""
    key = "\x1f".join(sorted((old[0].strip(), new[0].strip())))
    truth = pair_truth(old[1], new[1], noise=noise, seed=SEED, model=model, key=key)
    assert truth is not None
    return {"A": 0.0, "B": 1.0, "tie": 0.5}[truth.winner]


def two_runs_and_their_drift(run_cli, server, files) -> tuple[dict[str, Any], dict[str, Any]]:
    """Runs a (sharp, OLD vs NEW₁) and b (noisy, OLD vs NEW₂, gated) and their drift in d:
    B's gate and the drift's summary.
    """
    common = ["--rubric", "pairwise", "--quiet"]
    old = str(files["old"])
    a = run_cli(
        server, "pairwise", old, str(files["new1"]), *common, "--out", "a", model="openai/sharp"
    )
    assert a.exit_code == 0, a.stderr
    b = run_cli(
        server,
        "pairwise",
        old,
        str(files["new2"]),
        *common,
        "--out",
        "b",
        "--min-win-rate",
        str(FLOOR),
        model="openai/noisy",
    )
    gate = json.loads(Path("b/summary.json").read_text())["gate"]
    assert b.exit_code == (0 if gate["passed"] else 1), b.stderr

    run = run_cli(None, "drift", "a", "b", "--out", "d", "--json")
    assert run.exit_code == 0, run.stderr
    return gate, run.summary


def test_drift_of_two_pairwise_runs_by_different_judges_tells_the_judges_shift_from_the_systems(
    run_cli, server, files
):
    gate, s = two_runs_and_their_drift(run_cli, server, files)

    # The known answers: an anchor's change is the noisy judge's draw alone.
    anchor_changes = [
        value("noisy", NOISE, old_, new2) - value("sharp", 0.0, old_, new1)
        for old_, new1, new2 in CASES[:N_ANCHORS]
    ]
    system_changes = [
        value("noisy", NOISE, old_, new2) - value("sharp", 0.0, old_, new1)
        for old_, new1, new2 in CASES[N_ANCHORS:]
    ]
    assert any(anchor_changes)  # the noisy judge moved some unchanged pairs
    assert (s["n_identical"], s["n_system"], s["shift_scale"]) == (N_ANCHORS, N_CHANGED, "win_rate")
    assert s["judge_shift"] == pytest.approx(sum(anchor_changes) / N_ANCHORS)
    reference = stats.ttest_1samp(anchor_changes, 0.0).confidence_interval(0.95)
    assert s["judge_shift_ci"] == pytest.approx([reference.low, reference.high])
    assert s["system_shift"] == pytest.approx(sum(system_changes) / N_CHANGED)
    assert s["system_shift"] > 0.5  # the better answers win where the worse ones lost

    # B's win-rate gate, tested against the judge's shift on its own scale.
    explained = s["judge_shift_gate"]
    assert explained["metric"] == "win_rate"
    assert explained["margin"] == pytest.approx(gate["value"] - FLOOR)
    low, high = s["judge_shift_ci"]
    margin = explained["margin"]
    expected = high > margin if margin >= 0 else low <= margin
    assert explained["explains"] is expected
    assert any("could explain b's gate" in w for w in s["warnings"]) is expected


def split_rows(s: dict[str, Any]) -> list[list[str]]:
    """The judge-shift table's rows as report.md and report.html should show them."""
    low, high = s["judge_shift_ci"]
    margin = s["judge_shift_gate"]["margin"]
    return [
        [
            "judge (identical outputs)",
            str(N_ANCHORS),
            f"{s['judge_shift']:+.3f}",
            f"[{low:+.3f}, {high:+.3f}]",
            f"{'yes' if s['judge_shift_gate']['explains'] else 'no'} (margin {margin:+.3f})",
        ],
        ["system (changed outputs)", str(N_CHANGED), f"{s['system_shift']:+.3f}"],
    ]


def test_the_drift_reports_show_the_judges_and_the_systems_shift_as_a_table(run_cli, server, files):
    _, s = two_runs_and_their_drift(run_cli, server, files)
    judge_row, system_row = split_rows(s)
    markdown = Path("d/report.md").read_text()
    assert "## Judge shift vs system shift" in markdown
    assert "| " + " | ".join(judge_row) + " |" in markdown
    assert "| " + " | ".join(system_row) + " | " in markdown
    # report.html: the same table, cell for cell (the browser test below renders it).
    page = Path("d/report.html").read_text()
    found = re.search(r"<h3>Judge shift vs system shift</h3>(.*?)</table>", page, re.S)
    assert found is not None
    cells = [
        [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", found.group(1), re.S)
    ]
    assert cells[1] == judge_row
    assert cells[2][:3] == system_row


SPLIT_TABLE = """(() => {
  const h = Array.from(document.querySelectorAll("h3"))
    .find((e) => e.textContent === "Judge shift vs system shift");
  const t = h.parentElement.querySelector("table");
  return [t.getClientRects().length > 0, Array.from(t.querySelectorAll("tbody tr"))
    .map((r) => Array.from(r.cells).map((c) => c.textContent))];
})()"""


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[int]:
    executable = find_chromium()
    if executable is None:
        pytest.skip("Chromium is not installed (no /usr/bin/chromium or chromium on PATH)")
    with launch(executable, tmp_path / "chromium-profile") as port:
        yield port


async def rendered_split(port: int, report: Path) -> tuple[bool, list[list[str]], list[str]]:
    async with asyncio.timeout(25.0), await Page.open(port) as page:
        await page.navigate(report.as_uri())
        shown, rows = await page.evaluate(SPLIT_TABLE)
        return shown, rows, list(page.errors)


def test_the_drift_report_html_renders_the_shift_table_in_a_browser(
    run_cli, server, files, chromium
):
    _, s = two_runs_and_their_drift(run_cli, server, files)
    shown, rows, errors = asyncio.run(rendered_split(chromium, Path("d/report.html").resolve()))
    assert errors == []
    assert shown
    judge_row, system_row = split_rows(s)
    assert rows[0] == judge_row
    assert rows[1][:3] == system_row
