"""deciding/verify: each way a finished run can depart from its evaluation spec, named
(issue 35)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgecli.deciding.verify import RunRecord, flag_given, verify, verify_spec
from judgecli.inputs.spec import Spec, spec_hash

DIGEST = "sha256:" + "ab" * 32


def spec_of(**changes: Any) -> Spec:
    """A score spec of one data file, pinned settings, a gate and a fixed n of 10."""
    planned: dict[str, Any] = {
        "command": "score",
        "datasets": [{"path": "data.jsonl", "sha256": DIGEST}],
        "rubric": {"ref": "helpfulness", "hash": "sha256:df8cb5ad34fbef8a"},
        "judges": [{"model": "openai/sim", "settings": {"temperature": 0.0, "max-tokens": 600}}],
        "gate": {"metric": "min-mean", "floor": 3.0},
        "stopping": {"rule": "fixed", "n": 10},
    }
    planned.update(changes)
    return Spec.model_validate(planned).with_base(Path("/plans"))


def record_of(*extra: str, summary: dict[str, Any] | None = None, **info: Any) -> RunRecord:
    """A run of that spec as planned, with `extra` words on its command line and run.json
    keys replaced by `info`."""
    made: dict[str, Any] = {
        "command": "score",
        "argv": ["judge", "score", "/plans/data.jsonl", "--limit", "10", "--min-mean", "3"],
        "cwd": "/plans",
        "models": [{"name": "openai/sim", "api_base": None}],
        "rubric": {"name": "helpfulness", "hash": "sha256:df8cb5ad34fbef8a"},
        "config": {"temperature": 0.0, "max_tokens": 600, "limit": 10, "concurrency": 4},
    }
    made.update(info)
    made["argv"] = [*made["argv"], *extra]
    return RunRecord(
        info=made,
        summary=summary or {"n_cases": 10},
        data_hashes={Path("/plans/data.jsonl"): DIGEST},
        cwd=Path("/plans"),
    )


def keys(spec: Spec, run: RunRecord) -> list[str]:
    return [d.key for d in verify_spec(spec, run).departures]


def test_a_run_made_as_planned_has_no_departures() -> None:
    checked = verify_spec(spec_of(), record_of())
    assert checked.kept
    assert checked.as_json()["departures"] == []


def test_other_data_bytes_or_no_data_file_of_the_spec_is_a_departure() -> None:
    moved = record_of()
    other = RunRecord(moved.info, moved.summary, {Path("/plans/data.jsonl"): "cd" * 32})
    assert keys(spec_of(), other) == ["datasets[0].sha256"]
    assert keys(spec_of(), RunRecord(moved.info, moved.summary, {})) == ["datasets[0].path"]


def test_each_changed_setting_of_a_judge_is_named() -> None:
    config = {"temperature": 0.7, "max_tokens": 900, "limit": 10}
    assert keys(spec_of(), record_of(config=config)) == [
        "judges[0].settings.temperature",
        "judges[0].settings.max-tokens",
    ]


def test_a_setting_the_run_does_not_record_is_unverified_not_a_departure() -> None:
    judges = [{"model": "openai/sim", "settings": {"json-schema": True}}]
    checked = verify_spec(spec_of(judges=judges), record_of())
    assert checked.kept
    assert checked.unverified == ["judges[0].settings.json-schema"]


def test_a_setting_the_run_left_unset_departs_from_a_pinned_value() -> None:
    judges = [{"model": "openai/sim", "settings": {"elide-at": 2000, "field": "output=answer"}}]
    config = {"elide_at": None, "field_map": {"output": "answer"}, "limit": 10}
    checked = verify_spec(spec_of(judges=judges), record_of(config=config))
    assert [d.key for d in checked.departures] == ["judges[0].settings.elide-at"]
    assert checked.unverified == ["judges[0].settings.field"]


def test_another_judge_a_rubric_or_a_command_is_a_departure() -> None:
    run = record_of(
        command="pairwise",
        models=[{"name": "openai/other"}],
        rubric={"hash": "sha256:0000"},
    )
    assert keys(spec_of(), run) == ["command", "rubric.hash", "judges"]


def test_another_gate_floor_or_on_is_a_departure() -> None:
    run = record_of("--min-mean", "2.5", "--on", "lower-bound")
    assert keys(spec_of(), run) == ["gate.floor", "gate.on"]


def test_a_fixed_spec_run_with_another_n_or_sequentially_departs() -> None:
    assert keys(spec_of(), record_of(config={"temperature": 0.0, "max_tokens": 600})) == [
        "stopping.n"
    ]
    assert keys(spec_of(), record_of("--sequential")) == ["stopping.rule"]


def sequential(decided_after: int | None, judged: int) -> dict[str, Any]:
    return {"n_cases": 100, "sequential": {"decided_after": decided_after, "judged": judged}}


def test_a_sequential_run_that_judged_beyond_its_stop_departs() -> None:
    planned = spec_of(stopping={"rule": "sequential"})
    config = {"temperature": 0.0, "max_tokens": 600, "limit": None, "concurrency": 4}
    kept = record_of("--sequential", config=config, summary=sequential(40, 44))
    assert keys(planned, kept) == []
    # Cases in flight at the stop are kept; a resumed run that went on looked beyond it.
    beyond = record_of("--sequential", config=config, summary=sequential(40, 45))
    assert keys(planned, beyond) == ["stopping.rule"]
    undecided = record_of("--sequential", config=config, summary=sequential(None, 100))
    assert keys(planned, undecided) == []


def test_an_undeclared_correction_or_labels_depart() -> None:
    assert keys(spec_of(), record_of("--fdr")) == ["categories.correction"]
    fdr = spec_of(categories={"correction": "fdr"})
    assert keys(fdr, record_of()) == ["categories.correction"]
    assert keys(spec_of(), record_of("--labels", "labels.jsonl")) == ["labels"]


def test_declared_labels_must_be_given_with_their_bytes() -> None:
    labelled = spec_of(labels={"path": "labels.jsonl", "sha256": DIGEST})
    assert keys(labelled, record_of()) == ["labels"]
    run = record_of("--labels", "labels.jsonl")
    assert keys(labelled, run) == ["labels.sha256"]
    hashes = {**run.data_hashes, Path("/plans/labels.jsonl"): DIGEST}
    assert keys(labelled, RunRecord(run.info, run.summary, hashes, run.cwd)) == []


def test_a_run_made_from_another_spec_names_its_hash() -> None:
    planned = spec_of()
    run = record_of(spec={"path": "judge.yaml", "hash": "sha256:" + "0" * 64})
    assert keys(planned, run) == ["spec.hash"]
    same = record_of(spec={"path": "judge.yaml", "hash": spec_hash(planned)})
    assert keys(planned, same) == []


def test_a_flag_is_read_as_given_last_with_or_without_its_value() -> None:
    argv = ["--fdr", "--limit", "3", "--limit=5"]
    assert flag_given(argv, "--limit") == "5"
    assert flag_given(argv, "--fdr") is True
    assert flag_given(argv, "--labels") is None


def test_an_empty_spec_plans_all_cases_so_a_limited_run_departs() -> None:
    assert [d.key for d in verify({}, record_of(), spec_dir=Path(".")).departures] == ["stopping.n"]


# Issue 35: run.json records the bytes judged; a run made before is hashed now, and says so.
def test_data_hashed_now_for_a_run_that_records_none_is_unverified() -> None:
    made = record_of()
    old_run = RunRecord(
        made.info, made.summary, made.data_hashes, made.cwd, hashed_now=frozenset(made.data_hashes)
    )
    checked = verify_spec(spec_of(), old_run)
    assert (checked.kept, checked.unverified) == (True, ["datasets[0].sha256"])
    edited = RunRecord(
        made.info,
        made.summary,
        {Path("/plans/data.jsonl"): "cd" * 32},
        made.cwd,
        hashed_now=frozenset(made.data_hashes),
    )
    [departure] = verify_spec(spec_of(), edited).departures
    assert "hashed now" in departure.message


def test_a_sequential_run_at_another_alpha_departs_by_alpha() -> None:
    sequence = {"alpha": 0.05, "decided_after": 8, "judged": 9}
    run = record_of("--sequential", summary={"sequential": sequence})
    planned = spec_of(stopping={"rule": "sequential"}, alpha=0.1)
    assert keys(planned, run) == ["alpha"]
    assert keys(spec_of(stopping={"rule": "sequential"}, alpha=0.05), run) == []
