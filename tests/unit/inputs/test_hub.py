"""Hugging Face datasets (`hf://owner/name[/config][@revision][:split]`), read with the
`datasets` library from a local folder of that name: no test reaches the Hub (issue 31)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from judgecli.errors import DatasetError
from judgecli.inputs.dataset import iter_cases, scan_dataset
from judgecli.inputs.hub import HubName, HubSource, parse_hub_name
from judgecli.inputs.pairs import iter_pairs, scan_pairs
from judgecli.inputs.rows import hub_text, shown
from tests.conftest import DATA

REQ = ["input", "output"]
HUB = DATA / "hub"


@pytest.fixture
def hub(tmp_path, monkeypatch) -> Path:
    """The test's working directory holding the local stand-in `judge-tests/cases`, the
    library's cache in the test's temporary directory and the Hub switched off."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    shutil.copytree(HUB / "judge-tests", tmp_path / "judge-tests")
    return tmp_path


def write_dataset(root: Path, name: str, files: dict[str, list[dict]], card: str = "") -> None:
    folder = root / name
    for file, rows in files.items():
        (folder / file).parent.mkdir(parents=True, exist_ok=True)
        (folder / file).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if card:
        (folder / "README.md").write_text(card, encoding="utf-8")


def cases_of(path, requires=REQ):
    scan = scan_dataset(path, requires=requires)
    return scan, list(iter_cases(scan, requires=requires))


def error_of(path, requires=REQ) -> str:
    with pytest.raises(DatasetError) as caught:
        cases_of(path, requires)
    return f"{caught.value.message}\nhint: {caught.value.hint}"


@pytest.mark.parametrize(
    ("text", "name"),
    [
        pytest.param(
            "hf://acme/evals", HubName("acme/evals", None, None, "train"), id="train-by-default"
        ),
        pytest.param(
            "hf://acme/evals:validation",
            HubName("acme/evals", None, None, "validation"),
            id="split",
        ),
        pytest.param(
            "hf://nyu-mll/glue/sst2:test",
            HubName("nyu-mll/glue", "sst2", None, "test"),
            id="config",
        ),
        pytest.param(
            "hf://acme/evals@v1.2:test", HubName("acme/evals", None, "v1.2", "test"), id="revision"
        ),
        pytest.param("hf://gsm8k", HubName("gsm8k", None, None, "train"), id="no-owner"),
    ],
)
def test_a_hub_name_gives_repository_config_revision_and_split(text, name):
    assert parse_hub_name(text) == name
    assert str(name) == (text if ":" in text[5:] else f"{text}:train")


@pytest.mark.parametrize(
    "text",
    ["hf://", "hf://acme/evals:", "hf://a/b/c/d", "hf://acme/evals:train[:10]", "hf://acme evals"],
)
def test_a_malformed_hub_name_is_an_error_with_examples(text):
    with pytest.raises(DatasetError, match="not a Hugging Face dataset name") as caught:
        parse_hub_name(text)
    assert "hf://owner/name:validation" in (caught.value.hint or "")


def test_typer_s_path_of_a_hub_name_is_the_name_again():
    # A command's DATASET argument is a Path, which folds `//` into `/`.
    assert hub_text(Path("hf://acme/evals:test")) == "hf://acme/evals:test"
    assert shown(Path("hf://acme/evals")) == "hf://acme/evals"
    assert hub_text(Path("data/hf/evals.jsonl")) is None


def test_a_split_is_read_as_cases_with_the_split_in_its_name(hub):
    scan, cases = cases_of("hf://judge-tests/cases")
    assert scan.name == "hf://judge-tests/cases:train"
    assert [(c.id, c.line) for c in cases] == [(f"q-0{i}", i) for i in range(1, 9)]
    expected = [
        json.loads(x) for x in (HUB / "judge-tests/cases/train.jsonl").read_text().split("\n") if x
    ]
    assert [c.output for c in cases] == [e["output"] for e in expected]
    _, validation = cases_of(Path("hf://judge-tests/cases:validation"))
    assert [c.id for c in validation] == ["q-09", "q-10", "q-11", "q-12"]


def test_a_bad_row_is_named_by_split_and_row(hub):
    rows = [{"id": "a", "input": "q", "output": "x"}, {"id": "b", "input": "q", "output": None}]
    write_dataset(hub, "acme/evals", {"test.jsonl": rows})
    said = error_of("hf://acme/evals:test")
    assert said.startswith('hf://acme/evals:test row 2: "output" is null'), said


def test_lists_and_structs_of_a_hub_row_are_the_case_fields(hub):
    turns = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    rows = [
        {"id": "a", "input": "q", "output": "x", "context": ["p1", "p2"], "messages": None},
        {"id": "b", "input": None, "output": None, "context": None, "messages": turns},
    ]
    write_dataset(hub, "acme/chats", {"train.jsonl": rows})
    _, cases = cases_of("hf://acme/chats", requires=["output"])
    assert cases[0].context == ["p1", "p2"]
    assert cases[1].field_text("output") == "Hello"


@pytest.mark.parametrize(
    ("text", "says", "hint"),
    [
        pytest.param(
            "hf://judge-tests/cases:test",
            "hf://judge-tests/cases:test: no split 'test' (its splits: train, validation)",
            "hf://judge-tests/cases:train",
            id="unknown-split",
        ),
        pytest.param(
            "hf://acme/two:test",
            "hf://acme/two:test: it has several configs (its configs: easy, hard)",
            "hf://acme/two/easy:test",
            id="config-missing",
        ),
        pytest.param(
            "hf://acme/two/medium:test",
            "hf://acme/two/medium:test: no config 'medium' (its configs: easy, hard)",
            "hf://acme/two/easy:test",
            id="unknown-config",
        ),
        pytest.param(
            "hf://acme/not-here",
            "hf://acme/not-here:train: not in the cache, and HF_HUB_OFFLINE keeps the Hub",
            "unset HF_HUB_OFFLINE",
            id="offline-and-not-cached",
        ),
    ],
)
def test_a_dataset_that_cannot_be_loaded_says_why_and_the_fix(hub, text, says, hint):
    card = (
        "---\nconfigs:\n"
        + "".join(
            f"- config_name: {c}\n  data_files:\n  - split: test\n    path: {c}/test.jsonl\n"
            for c in ("easy", "hard")
        )
        + "---\n"
    )
    row = [{"id": "a", "input": "q", "output": "x"}]
    write_dataset(hub, "acme/two", {"easy/test.jsonl": row, "hard/test.jsonl": row}, card)
    said = error_of(text)
    assert said.startswith(says), said
    assert hint in said.split("\nhint: ")[1]
    _, cases = cases_of("hf://acme/two/hard:test")
    assert [c.id for c in cases] == ["a"]


def test_the_hub_is_read_once_and_the_cases_judged_are_the_rows_checked(hub):
    source = HubSource("hf://judge-tests/cases:validation")
    scan = scan_dataset(source, requires=REQ)
    # The dataset goes away (or changes) after the scan: the run reads the rows it checked.
    shutil.rmtree(hub / "judge-tests")
    assert [c.id for c in iter_cases(scan, requires=REQ)] == ["q-09", "q-10", "q-11", "q-12"]


def test_two_splits_pair_on_id(hub):
    rows = [{"id": f"c{i}", "input": f"q{i}", "output": f"x{i}"} for i in range(5)]
    new = [dict(r, output=r["output"].upper()) for r in reversed(rows)]
    write_dataset(hub, "acme/pairs", {"train.jsonl": rows, "test.jsonl": new})
    scan = scan_pairs("hf://acme/pairs", "hf://acme/pairs:test", requires=REQ)
    pairs = list(iter_pairs(scan, requires=REQ))
    assert [(p.id, p.old.output, p.new.output) for p in pairs] == [
        (f"c{i}", f"x{i}", f"X{i}") for i in range(5)
    ]


def test_a_file_of_the_dataset_that_breaks_mid_way_is_an_error_naming_the_dataset(hub, capsys):
    folder = hub / "acme" / "broken"
    folder.mkdir(parents=True)
    (folder / "train.jsonl").write_text('{"id": "a", "input": "q", "output": "x"}\n{oops\n')
    said = error_of("hf://acme/broken")
    assert said.startswith("hf://acme/broken:train: cannot read its rows ("), said
    # The library's own log line of it is not printed beside judge's error.
    assert capsys.readouterr().err == ""
