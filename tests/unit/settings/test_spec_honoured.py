"""A spec's values its run cannot apply are refused, not recorded silently; the spec of a
command line with a planned n; the pins run.json keeps of the data (issue 35)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecli.errors import InputError
from judgecli.inputs.spec import Spec, StopRule, data_pins, file_sha256, spec_argv
from judgecli.settings.spec_line import (
    cases_in_data,
    check_honoured,
    labels_design,
    spec_of,
    with_planned_n,
)

DIGEST = "sha256:" + "ab" * 32


def spec(**changes: object) -> Spec:
    """A score spec of one data file, fixed n of 10, alpha 0.05."""
    planned: dict[str, object] = {
        "command": "score",
        "datasets": [{"path": "data.jsonl", "sha256": DIGEST}],
        "rubric": {"ref": "helpfulness", "hash": "sha256:df8cb5ad34fbef8a"},
        "judges": [{"model": "openai/sim"}],
        "gate": {"metric": "min-mean", "floor": 3.0},
        "stopping": {"rule": "fixed", "n": 10},
    }
    planned.update(changes)
    return Spec.model_validate(planned)


def refusal(planned: Spec) -> str:
    with pytest.raises(InputError) as raised:
        check_honoured(planned, Path("judge.yaml"))
    return raised.value.message


def test_an_alpha_a_fixed_gate_cannot_apply_is_refused_and_a_sequential_one_is_run() -> None:
    check_honoured(spec(), Path("judge.yaml"))
    assert refusal(spec(alpha=0.1)).startswith("judge.yaml: alpha: 0.1 cannot be applied")
    sequential = spec(alpha=0.1, stopping={"rule": "sequential"})
    check_honoured(sequential, Path("judge.yaml"))
    assert spec_argv(sequential)[-3:] == ["--sequential", "--alpha", "0.1"]
    assert "--alpha" not in spec_argv(spec(stopping={"rule": "sequential"}))


def test_a_category_field_the_run_does_not_read_is_refused() -> None:
    check_honoured(spec(categories={"field": "category"}), Path("judge.yaml"))
    said = refusal(spec(categories={"field": "topic"}))
    assert "categories.field: the run reads categories from the column 'category'" in said
    mapped = [{"model": "openai/sim", "settings": {"field": ["category=topic"]}}]
    check_honoured(spec(judges=mapped, categories={"field": "topic"}), Path("judge.yaml"))


def test_a_label_design_other_than_the_labels_record_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "labels.jsonl"
    plain.write_text('{"id": "a", "label": 4}\n', encoding="utf-8")
    assert labels_design(plain) == "random"
    folder = tmp_path / "labels"
    folder.mkdir()
    line = {"id": "a", "label": 4, "rater": "ann", "at": "2026-01-01T00:00:00Z"}
    line |= {"inclusion_probability": 0.5, "strategy": "disagreement", "budget": 10}
    (folder / "ann.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert labels_design(folder / "ann.jsonl") == "disagreement"
    labels = {"path": str(folder / "ann.jsonl"), "sha256": DIGEST, "design": "stratified"}
    said = refusal(spec(labels=labels))
    assert "labels.design: the run weighs these labels as drawn by 'disagreement'" in said
    check_honoured(spec(labels=labels | {"design": "disagreement"}), Path("judge.yaml"))


def test_the_planned_n_replaces_all_cases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("data.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i}", "input": "q", "output": "a"}) + "\n" for i in range(7)),
        encoding="utf-8",
    )
    line = ["data.jsonl", "--rubric", "helpfulness", "--model", "openai/sim", "--min-mean", "3"]
    planned = with_planned_n(spec_of("score", line), 40)
    assert (planned.stopping.rule, planned.stopping.n) == (StopRule.FIXED, 40)
    assert cases_in_data(["score", *line]) == 7


def test_run_json_pins_each_data_file_of_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("old.jsonl").write_text("{}\n", encoding="utf-8")
    Path("labels.jsonl").write_text("{}\n", encoding="utf-8")
    argv = ["judge", "pairwise", "old.jsonl", "hf://owner/name", "--labels", "labels.jsonl"]
    # The data words only (not the labels after the first flag), a file's bytes hashed.
    assert data_pins(argv) == [{"path": "old.jsonl", "sha256": file_sha256(Path("old.jsonl"))}]


def test_a_cap_on_a_sequential_run_is_not_dropped_from_its_spec_but_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("data.jsonl").write_text('{"id": "a", "input": "q", "output": "a"}\n', encoding="utf-8")
    line = ["data.jsonl", "--rubric", "helpfulness", "--model", "openai/sim", "--min-mean", "3"]
    assert spec_of("score", [*line, "--on", "sequential"]).stopping.rule is StopRule.SEQUENTIAL
    with pytest.raises(InputError, match="--limit with --sequential"):
        spec_of("score", [*line, "--sequential", "--limit", "9"])
