"""judge arena's core: naming and joining the systems' files, the schedules (round robin,
baseline, adaptive), the summary of synthetic verdicts, the gate and the reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecli.commands.arena.ending import incomplete_reason, sweep_warnings
from judgecli.commands.arena.gate import ArenaGateSpec, evaluate_arena_gate
from judgecli.commands.arena.schedule import Matchup, Planner, Schedule, check_linked
from judgecli.commands.arena.setup import chosen_schedule
from judgecli.commands.arena.systems import join_files, system_names
from judgecli.errors import ConfigError, DatasetError
from judgecli.inputs.rubric_file import load_rubric
from judgecli.report.arena import arena_headline, render_arena_html, render_arena_markdown
from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.settings.config import DEFAULT_MAX_FAILURES, FailureLimit
from judgecli.summary.arena import ArenaSummary, ScheduleSummary, summarize_arena
from judgecli.summary.arena_length import Matched
from judgecli.summary.arena_style import markdown_density, style_of

REPO = Path(__file__).resolve().parents[3]
PAIRWISE = load_rubric(REPO / "rubrics" / "pairwise.yaml")


def write_system(path: Path, ids: list[str], answer: str = "an answer") -> Path:
    lines = [{"id": i, "input": f"question {i}", "output": f"{answer} to {i}"} for i in ids]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def systems(tmp_path: Path, n: int, cases: int = 6) -> list[Path]:
    ids = [f"c{k}" for k in range(cases)]
    return [write_system(tmp_path / f"s{k}.jsonl", ids, f"answer {k}") for k in range(n)]


def joined(paths: list[Path], kind: Schedule, baseline: int | None = None, **kwargs):
    from judgecli.commands.arena.schedule import system_pairs

    names = system_names(paths, None)
    pairs = system_pairs(kind, len(names), baseline)
    return join_files(paths, names, pairs, requires=["input", "output"], **kwargs)


# ── names and files ──────────────────────────────────────────────────────────────────────


def test_systems_are_named_after_their_files_or_by_name(tmp_path):
    paths = [tmp_path / "a" / "base.jsonl", tmp_path / "tuned.jsonl"]
    assert system_names(paths, None) == ["base", "tuned"]
    assert system_names(paths, ["v1", "v2"]) == ["v1", "v2"]


@pytest.mark.parametrize(
    ("stems", "names", "message"),
    [
        pytest.param(["a", "a"], None, "two systems are named 'a'", id="same-stem"),
        pytest.param(["a", "b"], ["x", "x"], "two systems are named 'x'", id="same-name"),
        pytest.param(["a", "b"], ["x"], "1 --name for 2 files", id="too-few-names"),
        pytest.param(["a"], None, "2 or more systems", id="one-file"),
    ],
)
def test_bad_names_are_refused_before_anything_runs(tmp_path, stems, names, message):
    paths = [tmp_path / f"{k}" / f"{s}.jsonl" for k, s in enumerate(stems)]
    with pytest.raises(ConfigError, match=message):
        system_names(paths, names)


def test_ids_missing_in_one_file_are_an_error_naming_it(tmp_path):
    paths = systems(tmp_path, 3)
    write_system(paths[2], ["c0", "c1", "c2", "c3", "c4"])
    with pytest.raises(DatasetError, match=r"1 id only in .*s0\.jsonl \('c5'\)") as caught:
        joined(paths, Schedule.ROUND_ROBIN)
    assert "--allow-partial" in (caught.value.hint or "")


def test_allow_partial_joins_each_pair_on_the_ids_both_files_hold(tmp_path):
    paths = systems(tmp_path, 3)
    write_system(paths[1], ["c0", "c1", "c2"])
    write_system(paths[2], ["c2", "c3", "c4", "c5"])
    files = joined(paths, Schedule.ROUND_ROBIN, allow_partial=True)
    assert sorted(files.located[(0, 1)]) == ["c0", "c1", "c2"]
    assert sorted(files.located[(0, 2)]) == ["c2", "c3", "c4", "c5"]
    assert sorted(files.located[(1, 2)]) == ["c2"]
    assert any("--allow-partial" in w for w in files.warnings)


def test_limit_chooses_the_same_cases_for_every_pair(tmp_path):
    files = joined(systems(tmp_path, 3, cases=10), Schedule.ROUND_ROBIN, limit=4)
    assert files.case_ids == ["c0", "c1", "c2", "c3"]
    assert all(sorted(found) == files.case_ids for found in files.located.values())


def test_a_comparison_reads_both_answers_under_its_own_id(tmp_path):
    files = joined(systems(tmp_path, 2), Schedule.ROUND_ROBIN)
    pair = files.pair((0, 1), "c3", "c3::s0::s1")
    assert (pair.id, pair.old.output, pair.new.output) == (
        "c3::s0::s1",
        "answer 0 to c3",
        "answer 1 to c3",
    )


# ── schedules ────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("asked", "n", "baseline", "expected"),
    [
        pytest.param(None, 4, None, Schedule.ROUND_ROBIN, id="four-systems-round-robin"),
        pytest.param(None, 5, None, Schedule.ADAPTIVE, id="five-systems-adaptive"),
        pytest.param(None, 6, 2, Schedule.BASELINE, id="a-baseline-given"),
        pytest.param(Schedule.ROUND_ROBIN, 6, 2, Schedule.ROUND_ROBIN, id="asked-for"),
    ],
)
def test_the_default_schedule_depends_on_the_systems(asked, n, baseline, expected):
    assert chosen_schedule(asked, n, baseline) is expected


def test_the_baseline_schedule_needs_a_baseline():
    with pytest.raises(ConfigError, match="--baseline NAME"):
        chosen_schedule(Schedule.BASELINE, 3, None)


def test_round_robin_compares_every_pair_on_every_case(tmp_path):
    files = joined(systems(tmp_path, 4), Schedule.ROUND_ROBIN)
    planned = Planner(files, Schedule.ROUND_ROBIN).first_round()
    assert len(planned) == 6 * 6
    assert planned[0] == Matchup("c0::s0::s1", "c0", (0, 1))
    assert Planner(files, Schedule.ROUND_ROBIN).next_round(planned, []) == []


def test_the_baseline_schedule_compares_every_system_with_the_baseline_only(tmp_path):
    files = joined(systems(tmp_path, 4), Schedule.BASELINE, baseline=2)
    planned = Planner(files, Schedule.BASELINE, baseline=2).first_round()
    assert len(planned) == 3 * 6
    assert {m.systems for m in planned} == {(0, 2), (1, 2), (2, 3)}


def test_a_schedule_that_cannot_link_every_system_is_refused(tmp_path):
    files = joined(systems(tmp_path, 4), Schedule.ROUND_ROBIN)
    split = [Matchup("c0::s0::s1", "c0", (0, 1)), Matchup("c0::s2::s3", "c0", (2, 3))]
    with pytest.raises(ConfigError, match=r"do not link every system \(s0, s1 \| s2, s3\)"):
        check_linked(files, split)


def verdicts(planned: list[Matchup], strength: list[float]) -> list[CaseResult]:
    """The stronger system of each comparison wins; equal strengths tie."""
    out = []
    for m in planned:
        a, b = (strength[i] for i in m.systems)
        winner = Winner.TIE if a == b else (Winner.OLD if a > b else Winner.NEW)
        out.append(CaseResult(id=m.id, status=CaseStatus.OK, winner=winner, rubric_hash="h"))
    return out


def adaptive(tmp_path: Path, **kwargs) -> Planner:
    files = joined(systems(tmp_path, 4, cases=40), Schedule.ADAPTIVE)
    return Planner(files, Schedule.ADAPTIVE, **kwargs)


def run_adaptive(planner: Planner, strength: list[float]) -> list[list[Matchup]]:
    rounds, planned = [], []
    batch = planner.first_round()
    while batch:
        rounds.append(batch)
        planned += batch
        batch = planner.next_round(planned, verdicts(planned, strength))
    return rounds


def test_the_adaptive_warm_up_is_a_round_robin_on_a_seeded_subset_of_cases(tmp_path):
    planner = adaptive(tmp_path, budget=96, seed=5)
    warmup = planner.first_round()
    assert planner.warmup_cases == 96 // (4 * 6)
    cases = {m.case_id for m in warmup}
    assert len(cases) == 4
    assert len(warmup) == 4 * 6
    assert all(sum(m.case_id == c for m in warmup) == 6 for c in cases)
    assert cases == set(planner.order()[:4])
    assert cases != {m.case_id for m in adaptive(tmp_path, budget=96, seed=6).first_round()}


def test_the_adaptive_schedule_spends_its_budget_on_the_closest_pairs(tmp_path):
    planner = adaptive(tmp_path, budget=96, seed=1)
    # s1 and s2 are almost equal (they tie); s0 and s3 are far apart from everyone.
    rounds = run_adaptive(planner, [0.0, 5.0, 5.0, 10.0])
    planned = [m for r in rounds for m in r]
    assert len(planned) == 96
    assert len({m.id for m in planned}) == 96
    later = [m.systems for r in rounds[1:] for m in r]
    assert later.count((1, 2)) == max(later.count(p) for p in set(later))
    assert run_adaptive(adaptive(tmp_path, budget=96, seed=1), [0.0, 5.0, 5.0, 10.0]) == rounds


def test_the_adaptive_schedule_respects_the_cap_per_case(tmp_path):
    planner = adaptive(tmp_path, budget=120, max_pairs_per_case=2, seed=2)
    planned = [m for r in run_adaptive(planner, [0.0, 1.0, 2.0, 3.0]) for m in r]
    per_case: dict[str, int] = {}
    for m in planned:
        per_case[m.case_id] = per_case.get(m.case_id, 0) + 1
    assert max(per_case.values()) == 2
    assert len(planned) == 80  # 40 cases × 2 pairs: the cap, not the budget, ran out


def test_the_adaptive_budget_defaults_to_half_a_round_robin(tmp_path):
    planner = adaptive(tmp_path)
    assert planner.planned_budget == 40 * 6 // 2
    assert planner.capacity == 120


# ── the summary, the gate and the reports ───────────────────────────────────────────────

NAMES = ["base", "mid", "top"]
SCHEDULE = ScheduleSummary(kind="round-robin", pairs=3, planned=0)


def result(case: str, old: str, new: str, winner: Winner | None, **extra) -> CaseResult:
    return CaseResult(
        id=f"{case}::{old}::{new}",
        status=CaseStatus.OK if winner is not None or "error" not in extra else CaseStatus.FAILED,
        winner=winner,
        consistent=True,
        rubric_hash="h",
        case={"output_old": f"{old} says", "output_new": f"{new} says more"},
        **extra,
    )


def synthetic(cases: int = 30) -> tuple[list[CaseResult], dict[str, Matched]]:
    """top beats mid 2 cases in 3, mid beats base 2 in 3, top beats base always."""
    results = []
    for k in range(cases):
        c = f"q{k:02d}"
        results += [
            result(c, "base", "mid", Winner.NEW if k % 3 else Winner.OLD),
            result(c, "mid", "top", Winner.NEW if k % 3 else Winner.TIE),
            result(c, "base", "top", Winner.NEW),
        ]
    matched = {r.id: Matched(*r.id.split("::")) for r in results}
    return results, matched


def summarize(results, matched, **kwargs) -> ArenaSummary:
    settings = {
        "systems": NAMES,
        "files": {n: f"{n}.jsonl" for n in NAMES},
        "rubric": PAIRWISE,
        "models": ["openai/sim"],
        "schedule": SCHEDULE,
        "anchor": None,
        "style_control": False,
        "flip": True,
        "flip_policy": "tie",
        "seed": 0,
        "resamples": 200,
    } | kwargs
    return summarize_arena(sorted(results, key=lambda r: r.id), matched, **settings)


def test_the_leaderboard_orders_the_systems_best_first():
    s = summarize(*synthetic())
    assert [x.name for x in s.leaderboard] == ["top", "mid", "base"]
    top = s.leaderboard[0]
    assert (top.wins, top.losses, top.ties, top.n) == (50, 0, 10, 60)
    assert top.rank == 1
    low, high = top.score_ci
    assert low is not None
    assert high is not None
    assert low <= top.score <= high
    assert sum(x.score for x in s.leaderboard) / 3 == pytest.approx(1000.0)
    assert s.win_rate_matrix["top"]["mid"] == pytest.approx((20 + 5) / 30)
    assert s.win_rate_matrix["mid"]["top"] == pytest.approx(5 / 30)
    assert s.comparisons["base"]["top"] == 30
    assert s.above_share["top"]["base"] == 1.0
    assert (s.n_cases, s.n_comparisons, s.consistency) == (30, 90, 1.0)


def test_a_baseline_anchor_scores_the_baseline_1000():
    s = summarize(*synthetic(), anchor="mid")
    mid = next(x for x in s.leaderboard if x.name == "mid")
    assert mid.score == pytest.approx(1000.0)
    assert s.anchor == "mid"


def test_failed_and_dropped_comparisons_stay_out_of_the_fit():
    results, matched = synthetic()
    failed = result("q99", "base", "top", None, error="boom")
    dropped = result("q98", "base", "top", None)
    for extra in (failed, dropped):
        matched[extra.id] = Matched(*extra.id.split("::"))
    s = summarize([*results, failed, dropped], matched)
    assert (s.n_comparisons, s.n_failed, s.dropped) == (92, 1, 1)
    assert s.leaderboard[0].n == 60
    assert incomplete_reason(s, DEFAULT_MAX_FAILURES, 92) is None
    reason = incomplete_reason(s, FailureLimit(count=0), 95)
    assert reason is not None
    assert "could not grade 1 of 92" in reason
    assert "3 comparisons not judged" in reason


def test_comparisons_that_do_not_link_every_system_give_no_leaderboard():
    results = [result(f"q{k}", "base", "mid", Winner.NEW) for k in range(5)]
    matched = {r.id: Matched(*r.id.split("::")) for r in results}
    s = summarize(results, matched)
    assert s.leaderboard == []
    assert s.disconnected_groups == [["base", "mid"], ["top"]]
    assert "do not link every system (base, mid | top)" in (
        incomplete_reason(s, DEFAULT_MAX_FAILURES, 5) or ""
    )


def test_style_control_reports_the_coefficients_and_a_second_leaderboard():
    s = summarize(*synthetic(), style_control=True)
    assert s.style_control is not None
    assert set(s.style_control.covariates) == {"length", "markdown"}
    assert s.style_control.covariates["length"].estimate is not None
    # No answer has markdown: that coefficient is not estimable, and says so.
    assert s.style_control.covariates["markdown"].estimate is None
    assert [x.name for x in s.style_control.leaderboard] != []


@pytest.mark.parametrize(
    ("text", "density"),
    [
        pytest.param("", 0.0, id="empty"),
        pytest.param("plain words only", 0.0, id="plain"),
        pytest.param("# Title\n- one\n- two\n**bold**", 1000.0 * 4 / 28, id="four-elements"),
    ],
)
def test_markdown_density_counts_headers_bold_and_list_items(text, density):
    assert markdown_density(text) == pytest.approx(density)


def test_style_is_the_first_answer_minus_the_second():
    r = result("q", "a", "b", Winner.TIE)
    length, markdown = style_of(r)
    assert length == pytest.approx((len("a says") - len("b says more")) / 17)
    assert markdown == 0.0


def test_the_gate_checks_beats_and_rank():
    s = summarize(*synthetic())
    passed = evaluate_arena_gate(s, ArenaGateSpec(beats=("base", "mid"), min_rank=1).checked(NAMES))
    assert passed is not None
    assert passed.passed
    assert passed.system == "top"
    assert [c.check for c in passed.checks] == ["beats", "beats", "min_rank"]
    failed = evaluate_arena_gate(s, ArenaGateSpec(system="mid", beats=("top",)).checked(NAMES))
    assert failed is not None
    assert not failed.passed
    assert failed.checks[0].value == s.above_share["mid"]["top"]
    assert evaluate_arena_gate(s, ArenaGateSpec().checked(NAMES)) is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param(ArenaGateSpec(beats=("nobody",)), "--beats 'nobody'", id="unknown"),
        pytest.param(ArenaGateSpec(beats=("top",)), "that is the system gated", id="itself"),
        pytest.param(ArenaGateSpec(min_rank=4), "ranks run from 1 to 3", id="rank"),
        pytest.param(ArenaGateSpec(system="x", min_rank=1), "--for 'x'", id="for"),
    ],
)
def test_bad_gate_flags_are_refused(spec, message):
    with pytest.raises(ConfigError, match=message):
        spec.checked(NAMES)


def test_a_sweep_is_warned_of():
    results, matched = synthetic()
    swept = [r.model_copy(update={"winner": Winner.NEW}) if "top" in r.id else r for r in results]
    said = sweep_warnings(summarize(swept, matched))
    assert [w.split(":")[0] for w in said] == ["top won every one of its 60 decided comparisons"]


def test_the_reports_lead_with_the_leaderboard_and_escape_names():
    results, matched = synthetic()
    s = summarize(results, matched)
    gated = s.model_copy(
        update={"gate": evaluate_arena_gate(s, ArenaGateSpec(beats=("mid",)).checked(NAMES))}
    )
    line = arena_headline(gated)
    assert line.startswith("PASS — top: beats mid (")
    assert "1. top" in line
    markdown = render_arena_markdown(gated)
    assert markdown.splitlines()[2].startswith("**PASS")
    assert "## Leaderboard" in markdown
    assert "## Win rate of row against column" in markdown
    hostile = s.model_copy(update={"systems": NAMES, "warnings": ["<script>x</script>"]})
    html = render_arena_html(hostile)
    assert "<script>x" not in html
    assert "&lt;script&gt;" in html
    assert html.count("<svg") == 2  # the scores' forest plot and the win-rate heat map


def test_the_schedule_option_offers_exactly_the_schedules():
    from judgecli.cli.arena import ScheduleChoice

    assert [c.value for c in ScheduleChoice] == [s.value for s in Schedule]
