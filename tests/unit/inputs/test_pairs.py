from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from judgecli.errors import DatasetError
from judgecli.inputs.pairs import iter_pairs, scan_pairs
from judgecli.inputs.sampling import SampleSize

REQ = ["input", "output"]


def jsonl(*rows) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def row(i, answer, **kw):
    return {"id": f"p{i}", "input": f"question {i}", "output": answer, **kw}


def test_pairs_join_on_id_in_old_file_order(write):
    old = write("old.jsonl", jsonl(row(1, "o1"), row(2, "o2"), row(3, "o3")))
    new = write("new.jsonl", jsonl(row(3, "n3"), row(1, "n1"), row(2, "n2")))
    scan = scan_pairs(old, new, requires=REQ)
    pairs = list(iter_pairs(scan, requires=REQ))
    assert [(p.id, p.old.output, p.new.output) for p in pairs] == [
        ("p1", "o1", "n1"),
        ("p2", "o2", "n2"),
        ("p3", "o3", "n3"),
    ]
    assert scan.total == 3


def test_ids_in_one_file_only_are_an_error_naming_them(write):
    old = write("old.jsonl", jsonl(row(1, "o"), row(2, "o")))
    new = write("new.jsonl", jsonl(row(1, "n"), row(9, "n")))
    with pytest.raises(DatasetError) as caught:
        scan_pairs(old, new, requires=REQ)
    assert f"1 id only in {old} ('p2'); 1 id only in {new} ('p9')" in caught.value.message
    assert "'p2'" in caught.value.message
    assert "'p9'" in caught.value.message
    assert "--allow-partial" in caught.value.hint


def test_allow_partial_judges_the_shared_ids_and_warns(write):
    old = write("old.jsonl", jsonl(row(1, "o"), row(2, "o")))
    new = write("new.jsonl", jsonl(row(1, "n"), row(9, "n")))
    scan = scan_pairs(old, new, requires=REQ, allow_partial=True)
    assert [p.id for p in iter_pairs(scan, requires=REQ)] == ["p1"]
    assert (scan.only_old, scan.only_new) == (["p2"], ["p9"])
    assert "--allow-partial" in scan.warnings[0]


def test_different_inputs_for_one_id_are_an_error(write):
    old = write("old.jsonl", jsonl(row(1, "o"), row(2, "o")))
    new = write("new.jsonl", jsonl(row(1, "n"), {**row(2, "n"), "input": "another question"}))
    with pytest.raises(DatasetError, match="input differs .* for id 'p2'"):
        scan_pairs(old, new, requires=REQ)


def test_bad_lines_in_either_file_name_file_and_line(write):
    old = write("old.jsonl", jsonl(row(1, "o")))
    new = write("new.jsonl", jsonl(row(1, "n")) + "{broken\n")
    with pytest.raises(DatasetError, match=r"new.jsonl:2: invalid JSON"):
        scan_pairs(old, new, requires=REQ)


def test_no_shared_ids_at_all_is_an_error_even_with_allow_partial(write):
    old = write("old.jsonl", jsonl(row(1, "o")))
    new = write("new.jsonl", jsonl(row(2, "n")))
    with pytest.raises(DatasetError, match="no id is in both"):
        scan_pairs(old, new, requires=REQ, allow_partial=True)


def test_limit_and_sample_select_pairs(write):
    old = write("old.jsonl", jsonl(*(row(i, "o") for i in range(50))))
    new = write("new.jsonl", jsonl(*(row(i, "n") for i in reversed(range(50)))))
    limited = scan_pairs(old, new, requires=REQ, limit=4)
    assert [p.id for p in iter_pairs(limited, requires=REQ)] == ["p0", "p1", "p2", "p3"]
    sampled = scan_pairs(old, new, requires=REQ, sample=5, seed=3)
    again = scan_pairs(old, new, requires=REQ, sample=5, seed=3)
    assert sampled.pairs == again.pairs
    assert len(sampled.pairs) == 5


def test_unicode_and_crlf_lines_are_read_back_at_their_offsets(write):
    old = write(
        "old.jsonl", ("\ufeff" + jsonl(row(1, "café ☕"), row(2, "日本"))).replace("\n", "\r\n")
    )
    new = write("new.jsonl", jsonl(row(2, "二"), row(1, "thé")))
    pairs = list(iter_pairs(scan_pairs(old, new, requires=REQ), requires=REQ))
    assert [(p.old.output, p.new.output) for p in pairs] == [("café ☕", "thé"), ("日本", "二")]


# Regression (review 2026-11-23, finding 21): "0 only in new5.jsonl ()" named an empty side.
def test_ids_missing_from_one_side_only_name_that_side(write):
    old = write("old.jsonl", jsonl(row(1, "o"), row(2, "o"), row(3, "o")))
    new = write("new.jsonl", jsonl(row(1, "n")))
    with pytest.raises(DatasetError) as caught:
        scan_pairs(old, new, requires=REQ)
    assert f"2 ids only in {old} ('p2', 'p3')" in caught.value.message
    assert "0 " not in caught.value.message
    assert "()" not in caught.value.message


# Regression (issue 13 §4, review finding 10): an empty answer was refused as "missing".
def test_empty_outputs_on_either_side_are_judged_and_counted(write):
    old = write("old.jsonl", jsonl(row(1, ""), row(2, "o"), row(3, "")))
    new = write("new.jsonl", jsonl(row(1, "n"), row(2, "  "), row(3, "n")))
    scan = scan_pairs(old, new, requires=REQ)
    assert [(p.old.output, p.new.output) for p in iter_pairs(scan, requires=REQ)] == [
        ("", "n"),
        ("o", "  "),
        ("", "n"),
    ]
    assert f'{old}: 2 cases have an empty "output" (judged as given)' in scan.warnings
    assert f'{new}: 1 case has an empty "output" (judged as given)' in scan.warnings
    assert len(scan.warnings) == 2  # the shared inputs are not counted twice


def test_empty_outputs_are_counted_among_the_sampled_pairs_only(write):
    old = write("old.jsonl", jsonl(*(row(i, "" if i < 5 else "o") for i in range(10))))
    new = write("new.jsonl", jsonl(*(row(i, "n") for i in range(10))))
    scan = scan_pairs(old, new, requires=REQ, limit=3)
    assert scan.warnings == [f'{old}: 3 cases have an empty "output" (judged as given)']


def link_to(path: Path) -> Path:
    link = path.with_name("link.jsonl")
    link.symlink_to(path)
    return link


@pytest.mark.parametrize(
    "second",
    [
        pytest.param(lambda old: old, id="the-same-path"),
        pytest.param(link_to, id="a-link-to-it"),
        pytest.param(lambda old: Path(os.path.relpath(old)), id="relative-and-absolute"),
    ],
)
def test_the_same_file_twice_is_a_warning_not_a_comparison(write, second):
    old = write("old.jsonl", jsonl(row(1, "o"), row(2, "p")))
    scan = scan_pairs(old, second(old), requires=REQ)
    assert len(scan.pairs) == 2
    assert any("same file" in w and "version with itself" in w for w in scan.warnings)


def test_two_files_with_the_same_outputs_are_a_warning(write):
    old = write("old.jsonl", jsonl(row(1, "o"), row(2, "p")))
    new = write("new.jsonl", jsonl(row(2, "p"), row(1, "o", category="x")))
    scan = scan_pairs(old, new, requires=REQ)
    assert any("the same output for every id" in w for w in scan.warnings)


def test_one_differing_output_is_no_warning(write):
    old = write("old.jsonl", jsonl(row(1, "o"), row(2, "p")))
    new = write("new.jsonl", jsonl(row(1, "o"), row(2, "q")))
    assert scan_pairs(old, new, requires=REQ).warnings == []


def test_sample_as_a_share_of_the_pairs(write):
    old = write("old.jsonl", jsonl(*(row(i, "o") for i in range(40))))
    new = write("new.jsonl", jsonl(*(row(i, "n") for i in range(40))))
    scan = scan_pairs(old, new, requires=REQ, sample=SampleSize(percent=25), seed=1)
    assert len(scan.pairs) == 10
    assert scan.pairs == sorted(scan.pairs, key=lambda p: p[0].line)
