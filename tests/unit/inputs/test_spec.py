"""The evaluation spec file: read strictly with file:line errors, hashed stably, and the
command line it runs, round trip with the spec of a command line (issue 35)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from judgecli.errors import InputError
from judgecli.inputs.spec import (
    Correction,
    GateOn,
    StopRule,
    check_files,
    read_spec,
    rubric_hash,
    spec_argv,
    spec_hash,
)
from judgecli.settings.spec_line import check_overrides, check_settings, spec_of
from judgecli.store.spec import write_spec


@pytest.fixture
def data(tmp_path: Path) -> tuple[Path, Path]:
    old = tmp_path / "old.jsonl"
    new = tmp_path / "new.jsonl"
    old.write_text('{"id": "a", "output": "one"}\n', encoding="utf-8")
    new.write_text('{"id": "a", "output": "two"}\n', encoding="utf-8")
    return old, new


def sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def spec_text(old: Path, new: Path, *, comment: str = "") -> str:
    indent = "  "
    return f"""{comment}
command: pairwise
datasets:
- path: {old.name}
{indent}sha256: {sha(old)}
- path: {new.name}
{indent}sha256: {sha(new)}
rubric:
{indent}ref: pairwise
{indent}hash: {rubric_hash("pairwise")}
judges:
- model: openai/a
{indent}settings: {{temperature: 0, api-base: "http://127.0.0.1:1/v1"}}
- model: openai/b
{indent}settings: {{temperature: 0, api-base: "http://127.0.0.1:1/v1"}}
gate: {{metric: min-win-rate, floor: 0.55, on: lower-bound}}
stopping: {{rule: fixed, n: 200}}
categories: {{correction: fdr}}
"""


def test_a_spec_file_is_read_with_every_block(tmp_path: Path, data: tuple[Path, Path]) -> None:
    path = tmp_path / "judge.yaml"
    path.write_text(spec_text(*data), encoding="utf-8")
    spec = read_spec(path)
    assert [d.path for d in spec.datasets] == ["old.jsonl", "new.jsonl"]
    assert [j.model for j in spec.judges] == ["openai/a", "openai/b"]
    assert spec.gate is not None
    assert spec.gate.on is GateOn.LOWER_BOUND
    assert spec.gate.floor == 0.55
    assert spec.stopping.rule is StopRule.FIXED
    assert spec.stopping.n == 200
    assert spec.categories is not None
    assert spec.categories.correction is Correction.FDR
    assert spec.alpha == 0.05
    check_files(spec)  # the files are as pinned: no error


def test_the_hash_ignores_formatting_comments_and_key_order(
    tmp_path: Path, data: tuple[Path, Path]
) -> None:
    one, two = tmp_path / "one.yaml", tmp_path / "two.yaml"
    one.write_text(spec_text(*data), encoding="utf-8")
    rubric = f"rubric:\n  ref: pairwise\n  hash: {rubric_hash('pairwise')}\n"
    flow = f"rubric: {{hash: '{rubric_hash('pairwise')}', ref: pairwise}}  # the library's\n\n"
    reformatted = spec_text(*data, comment="# planned on Monday").replace(rubric, flow)
    assert reformatted != spec_text(*data)
    two.write_text(reformatted + "alpha: 0.05\n", "utf-8")  # the default, written out
    assert spec_hash(read_spec(one)) == spec_hash(read_spec(two))
    three = tmp_path / "three.yaml"
    three.write_text(spec_text(*data).replace("floor: 0.55", "floor: 0.6"), encoding="utf-8")
    assert spec_hash(read_spec(three)) != spec_hash(read_spec(one))


@pytest.mark.parametrize(
    ("change", "line", "words"),
    [
        (("gate: {", "gate: {bogus: 1, "), 16, "gate.bogus: unknown key"),
        (("floor: 0.55", 'floor: "0.55"'), 16, "gate.floor"),
        (("rule: fixed, n: 200", "rule: sequential, n: 200"), 17, "stopping"),
        (("command: pairwise", "command: arena"), 2, "command"),
        (("- model: openai/b", "- model: openai/b\n  extra: 1"), 15, "judges.1.extra"),
    ],
)
def test_a_bad_key_or_value_is_an_error_naming_file_and_line(
    tmp_path: Path, data: tuple[Path, Path], change: tuple[str, str], line: int, words: str
) -> None:
    path = tmp_path / "judge.yaml"
    path.write_text(spec_text(*data).replace(*change), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_spec(path)
    assert caught.value.message.startswith(f"{path}:{line}: {words}")
    assert caught.value.hint


def test_yaml_a_spec_cannot_hold_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "judge.yaml"
    path.write_text("command: score\ncommand: pairwise\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"judge.yaml:2: invalid YAML: duplicate key"):
        read_spec(path)
    path.write_text("- a list\n", encoding="utf-8")
    with pytest.raises(InputError, match="must be a YAML mapping"):
        read_spec(path)
    with pytest.raises(InputError, match="no such spec file"):
        read_spec(tmp_path / "missing.yaml")


def test_a_dataset_whose_bytes_changed_is_refused_by_name(
    tmp_path: Path, data: tuple[Path, Path]
) -> None:
    path = tmp_path / "judge.yaml"
    path.write_text(spec_text(*data), encoding="utf-8")
    spec = read_spec(path)
    data[1].write_text('{"id": "a", "output": "three"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"new.jsonl: its bytes changed"):
        check_files(spec)


def test_the_spec_of_a_command_line_runs_that_command_line(
    tmp_path: Path, data: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = [
        "old.jsonl",
        "new.jsonl",
        "--rubric",
        "pairwise",
        "--model",
        "openai/a",
        "--model=openai/b",
        "--temperature",
        "0.2",
        "--no-json-schema",
        "--min-win-rate",
        "0.55",
        "--on",
        "lower-bound",
        "--sequential",
        "--fdr",
        "--out",
        "runs/x",
        "--concurrency",
        "4",
    ]
    spec = spec_of("pairwise", argv)
    assert spec.judges[0].settings == {"temperature": 0.2, "json-schema": False}
    assert spec.stopping.rule is StopRule.SEQUENTIAL
    assert spec_argv(spec) == [
        "old.jsonl",
        "new.jsonl",
        "--rubric",
        "pairwise",
        "--model",
        "openai/a",
        "--model",
        "openai/b",
        "--no-json-schema",
        "--temperature",
        "0.2",
        "--min-win-rate",
        "0.55",
        "--on",
        "lower-bound",
        "--sequential",
        "--fdr",
    ]
    # Written and read back: the same spec, the same hash, the same command line.
    written = write_spec(spec, tmp_path / "judge.yaml")
    again = read_spec(written)
    assert spec_hash(again) == spec_hash(spec)
    # The command line it runs is its own spec's (paths now from the spec file's folder).
    assert spec_argv(spec_of("pairwise", spec_argv(again))) == spec_argv(again)
    assert spec_of("pairwise", spec_argv(again)).judges == spec.judges


def test_a_command_line_a_spec_cannot_pin_is_refused(
    tmp_path: Path, data: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    base = ["old.jsonl", "new.jsonl", "--model", "openai/a", "--rubric", "pairwise"]
    with pytest.raises(InputError, match="one gate"):
        spec_of("pairwise", [*base, "--min-win-rate", "0.5", "--max-loss-rate", "0.2"])
    with pytest.raises(InputError, match="--sample"):
        spec_of("pairwise", [*base, "--sample", "10"])
    with pytest.raises(InputError, match="not `judge arena`"):
        spec_of("arena", base)
    with pytest.raises(InputError, match="--bogus: not a flag"):
        spec_of("pairwise", [*base, "--bogus"])


@pytest.mark.parametrize(
    "flag", ["--model", "--temperature=0.5", "--min-win-rate", "--on", "--limit", "--fdr", "-r"]
)
def test_judge_run_refuses_a_flag_that_would_change_the_spec(flag: str) -> None:
    with pytest.raises(InputError, match="the spec pins"):
        check_overrides([flag, "x"])


def test_judge_run_takes_the_flags_of_where_and_how_it_runs() -> None:
    check_overrides(["--out", "runs/x", "--concurrency", "4", "--quiet", "--force", "--json"])


def test_judge_run_refuses_a_second_positional_argument() -> None:
    with pytest.raises(InputError, match="takes one SPEC"):
        check_overrides(["--out", "runs/x", "other.jsonl"])


def test_a_judge_setting_no_flag_takes_is_refused_by_its_key(
    tmp_path: Path, data: tuple[Path, Path]
) -> None:
    path = tmp_path / "judge.yaml"
    path.write_text(spec_text(*data).replace("temperature: 0,", "temprature: 0,"), "utf-8")
    with pytest.raises(InputError, match=r"judges.0.settings.temprature: not a setting"):
        check_settings(read_spec(path), path)
    path.write_text(spec_text(*data), encoding="utf-8")
    check_settings(read_spec(path), path)
