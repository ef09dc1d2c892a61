"""inputs.judge_sets: the bundled judge sets and a user's own, read and checked before any
call (issue 34)."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from judgecli.errors import ConfigError, DatasetError
from judgecli.inputs.judge_sets import bundled_sets, bundled_sets_dir, read_sets
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.result import Winner

PAIRWISE = parse_rubric(
    "name: pw\nkind: pairwise\nprompt:\n  user: '{input} {output_a} {output_b}'\n", source="pw"
)
POINTWISE = parse_rubric(
    "name: pt\nkind: pointwise\nscale: {min: 1, max: 5}\nprompt:\n  user: '{input} {output}'\n",
    source="pt",
)
ROW = {"id": "1", "input": "q", "output_a": "x", "output_b": "y", "label": "a"}


def test_the_bundled_sets_are_balanced_pairwise_sets_with_their_licence_and_checksums():
    assert bundled_sets() == ["llmbar-adversarial", "llmbar-natural", "mt-bench-human"]
    folder = bundled_sets_dir()
    source = (folder / "SOURCE.md").read_text(encoding="utf-8")
    assert "MIT" in (folder / "LICENSE-LLMBar").read_text(encoding="utf-8")
    sets = {s.name: s for s in read_sets([], PAIRWISE)}
    assert {name: s.n_cases for name, s in sets.items()} == {
        "llmbar-adversarial": 96,
        "llmbar-natural": 100,
        "mt-bench-human": 100,
    }
    for s in sets.values():
        # SOURCE.md lists each file's SHA-256: the files are the ones it describes.
        assert re.search(rf"{s.sha256}\s+{s.path.name}", source), s.name
        assert hashlib.sha256(s.path.read_bytes()).hexdigest() == s.sha256
        assert {label.value for label in s.labels} == {Winner.OLD.value, Winner.NEW.value}
        assert all(label.id.startswith(f"{s.name}/") for label in s.labels)
    mt = sets["mt-bench-human"]
    assert sum(label.value == "old" for label in mt.labels) == 50


def test_a_users_set_reads_a_as_old_and_b_as_new_and_its_raters_each_as_a_label(write):
    rows = [ROW, ROW | {"label": "B"}, ROW | {"id": "2", "label": "tie", "annotator": "kim"}]
    path = write("mine.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    (s,) = read_sets([str(path)], PAIRWISE)
    assert s.name == "mine"
    assert [item.id for item in s.items] == ["mine/1", "mine/2"]
    assert [(x.id, x.value, x.annotator) for x in s.labels] == [
        ("mine/1", "old", None),
        ("mine/1", "new", None),
        ("mine/2", "tie", "kim"),
    ]
    pair = s.items[0]
    assert (pair.old.output, pair.new.output) == ("x", "y")


@pytest.mark.parametrize(
    ("second", "said"),
    [
        pytest.param(
            {k: v for k, v in ROW.items() if k != "label"}, 'missing "label"', id="no-label"
        ),
        pytest.param(ROW | {"label": "maybe"}, "label 'maybe' is not one of", id="bad-label"),
        pytest.param(
            {k: v for k, v in ROW.items() if k != "output_b"}, 'missing "output_b"', id="no-b"
        ),
        pytest.param(ROW | {"output": "z"}, 'not "output"', id="output-on-a-pair"),
        pytest.param(
            ROW | {"output_a": "other"}, "other texts than on line 1", id="rater-texts-differ"
        ),
        pytest.param({k: v for k, v in ROW.items() if k != "id"}, 'missing "id"', id="no-id"),
    ],
)
def test_a_bad_pairwise_row_names_file_and_line(write, second, said):
    path = write("bad.jsonl", json.dumps(ROW) + "\n" + json.dumps(second) + "\n")
    with pytest.raises(DatasetError) as raised:
        read_sets([str(path)], PAIRWISE)
    assert str(raised.value).startswith(f"{path}:2: ")
    assert said in str(raised.value)


@pytest.mark.parametrize(
    ("row", "said"),
    [
        pytest.param(
            {"id": "1", "input": "q", "output": "x", "label": 7},
            "not a number from 1 to 5",
            id="off-scale",
        ),
        pytest.param(ROW, 'one "output", not output_a and output_b', id="pair-on-pointwise"),
    ],
)
def test_a_bad_pointwise_row_names_file_and_line(write, row, said):
    path = write("bad.jsonl", json.dumps(row) + "\n")
    with pytest.raises(DatasetError, match=re.escape(f"{path}:1: ")) as raised:
        read_sets([str(path)], POINTWISE)
    assert said in str(raised.value)


def test_a_pointwise_rubric_has_no_bundled_set():
    with pytest.raises(ConfigError, match="bundled judge sets are pairwise"):
        read_sets([], POINTWISE)


def test_an_unknown_set_name_lists_the_bundled_ones():
    with pytest.raises(ConfigError) as raised:
        read_sets(["llmbar-natral"], PAIRWISE)
    assert "llmbar-natural" in (raised.value.hint or "")


def test_a_set_given_twice_is_refused():
    with pytest.raises(ConfigError, match="already given"):
        read_sets(["llmbar-natural", "llmbar-natural"], PAIRWISE)
