"""An arena's length-controlled win rates (judgecli/summary/arena_length.py; issue 29): which
comparisons enter, against which baseline, whose outcome, and what the reports show.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from judgecli.report.arena import render_arena_html, render_arena_markdown
from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.stats.instruction_difficulty import Contests, joint_length_control
from judgecli.stats.length_control import length_controlled_win_rate
from judgecli.stats.special import expit
from judgecli.summary.arena import ArenaSummary, Matched, ScheduleSummary, summarize_arena
from judgecli.summary.arena_length import METHOD_TWO_SYSTEMS
from judgecli.summary.length_control import OutcomeKind
from tests.unit.commands.test_arena import PAIRWISE

RESAMPLES = 50
CASES = 40


def comparison(case, old, new, *, y_old, lengths, probabilities=None) -> CaseResult:
    """One judged comparison: the first system's outcome y_old (1, ½, 0)."""
    winner = {1.0: Winner.OLD, 0.5: Winner.TIE, 0.0: Winner.NEW}[y_old]
    return CaseResult(
        id=f"{case}::{old}::{new}",
        status=CaseStatus.OK,
        winner=winner,
        consistent=True,
        rubric_hash="h",
        lengths={"old": lengths[0], "new": lengths[1]},
        probabilities=probabilities,
        case={"output_old": "a" * lengths[0], "output_new": "b" * lengths[1]},
    )


def arena(systems, *, seed=0, cases=CASES, weighed=False):
    """A round robin: the judge rewards length and case difficulty varies; `systems[0]` is
    the weakest. Returns the results and their matches."""
    rng = np.random.default_rng(seed)
    gamma = rng.normal(0, 1.0, cases)
    strength = {name: 0.4 * i for i, name in enumerate(systems)}
    lengths = {name: rng.integers(200, 1200, cases) for name in systems}
    results = []
    for k in range(cases):
        case = f"q{k:02d}"
        for i, a in enumerate(systems):
            for b in systems[i + 1 :]:
                da = int(lengths[a][k] - lengths[b][k])
                p = float(
                    expit(strength[a] - strength[b] + 1.2 * np.tanh(da / 500) + gamma[k] * (i == 0))
                )
                y = float(rng.random() < p)
                results.append(
                    comparison(
                        case,
                        a,
                        b,
                        y_old=y,
                        lengths=(int(lengths[a][k]), int(lengths[b][k])),
                        probabilities={"old": p, "new": 1 - p, "tie": 0.0} if weighed else None,
                    )
                )
    return results, {r.id: Matched(*r.id.split("::")) for r in results}


def summarize(results, matched, systems, **kwargs):
    settings = {
        "systems": systems,
        "files": {n: f"{n}.jsonl" for n in systems},
        "rubric": PAIRWISE,
        "models": ["openai/sim"],
        "schedule": ScheduleSummary(kind="round-robin", pairs=3, planned=len(results)),
        "anchor": None,
        "style_control": False,
        "flip": True,
        "flip_policy": "tie",
        "seed": 0,
        "resamples": RESAMPLES,
    } | kwargs
    return summarize_arena(sorted(results, key=lambda r: r.id), matched, **settings)


def baseline_contests(results, matched, systems, baseline, *, weighed=False):
    """What the fit must see: only comparisons with the baseline, from the other's side."""
    others = [s for s in systems if s != baseline]
    case_ids = sorted({m.case_id for m in matched.values()})
    rows = []
    for r in results:
        m = matched[r.id]
        if baseline not in (m.old, m.new):
            continue
        y = r.probabilities["old"] if weighed else {"old": 1.0, "tie": 0.5, "new": 0.0}[r.winner]
        first = m.old != baseline
        d = r.lengths["old"] - r.lengths["new"]
        rows.append(
            (
                others.index(m.old if first else m.new),
                case_ids.index(m.case_id),
                y if first else 1 - y,
                d if first else -d,
            )
        )
    s, c, y, d = zip(*rows, strict=True)
    return Contests.of(s, c, y, d, n_systems=len(others), n_cases=len(case_ids)), others


SYSTEMS = ["base", "a", "b", "c"]


def test_each_system_is_fitted_against_the_first_system_on_its_comparisons_with_it_only():
    results, matched = arena(SYSTEMS)
    lc = summarize(results, matched, SYSTEMS).length_controlled
    assert lc.baseline == "base"
    assert lc.outcome is OutcomeKind.VERDICT
    contests, others = baseline_contests(results, matched, SYSTEMS, "base")
    fit = joint_length_control(contests, resamples=RESAMPLES, seed=0)
    by_name = {x.name: x for x in lc.standings}
    for m, name in enumerate(others):
        x = by_name[name]
        assert x.win_rate == pytest.approx(fit.win_rate[m], abs=1e-12)
        assert x.win_rate_ci == pytest.approx(fit.win_rate_ci[m], abs=1e-12)
        assert x.coefficient == pytest.approx(fit.coefficient[m], abs=1e-12)
        assert x.n == CASES
        assert x.win_rate_raw == pytest.approx(contests.outcome[contests.system == m].mean())
    rates = [x.win_rate for x in lc.standings]
    assert rates == sorted(rates, reverse=True)
    assert lc.instruction_difficulty.n_cases == CASES
    assert lc.win_rate_matrix["base"]["a"] == pytest.approx(1 - by_name["a"].win_rate, abs=1e-9)
    assert set(lc.win_rate_matrix) == set(SYSTEMS)


def test_the_baseline_is_the_one_given():
    results, matched = arena(SYSTEMS)
    lc = summarize(results, matched, SYSTEMS, anchor="b").length_controlled
    assert lc.baseline == "b"
    assert {x.name for x in lc.standings} == {"base", "a", "c"}


def test_the_judges_probabilities_are_fitted_when_the_run_has_them():
    results, matched = arena(SYSTEMS, weighed=True)
    lc = summarize(results, matched, SYSTEMS).length_controlled
    assert lc.outcome is OutcomeKind.PROBABILITY
    contests, others = baseline_contests(results, matched, SYSTEMS, "base", weighed=True)
    fit = joint_length_control(contests, resamples=RESAMPLES, seed=0)
    got = {x.name: x.win_rate for x in lc.standings}
    assert [got[name] for name in others] == pytest.approx(fit.win_rate, abs=1e-12)


def test_with_one_system_besides_the_baseline_it_is_the_two_system_fit():
    systems = ["base", "a"]
    results, matched = arena(systems)
    lc = summarize(results, matched, systems).length_controlled
    assert lc.instruction_difficulty is None
    assert lc.win_rate_matrix is None
    assert lc.method == METHOD_TWO_SYSTEMS
    contests, _ = baseline_contests(results, matched, systems, "base")
    two = length_controlled_win_rate(
        contests.outcome, contests.difference, resamples=RESAMPLES, seed=0
    )
    [a] = lc.standings
    assert a.win_rate == two.win_rate
    assert a.loading is None


def test_under_ten_comparisons_with_the_baseline_there_is_none():
    results, matched = arena(SYSTEMS, cases=9)
    assert summarize(results, matched, SYSTEMS).length_controlled is None


def test_the_summary_keeps_it_and_the_reports_show_it():
    results, matched = arena(SYSTEMS)
    s = summarize(results, matched, SYSTEMS)
    written = json.loads(s.model_dump_json(exclude_none=True))
    assert set(written["length_controlled"]) == {
        "baseline",
        "outcome",
        "standings",
        "win_rate_matrix",
        "instruction_difficulty",
        "method",
    }
    assert set(written["length_controlled"]["standings"][0]) == {
        "name",
        "win_rate",
        "win_rate_ci",
        "win_rate_raw",
        "coefficient",
        "coefficient_ci",
        "loading",
        "n",
        "reason",
    }
    assert ArenaSummary.model_validate_json(s.model_dump_json(exclude_none=True)) == s
    top = s.length_controlled.standings[0]
    for text in (render_arena_markdown(s), render_arena_html(s)):
        assert "length-controlled win rate against base" in text.lower()
        assert f"{top.win_rate:.1%}" in text
        assert "instruction-difficulty term" in text
