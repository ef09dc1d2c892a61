from __future__ import annotations

import json

import pytest

from judgecli.errors import DatasetError
from judgecli.pairs import iter_pairs, scan_pairs

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
        ("p1", "o1", "n1"), ("p2", "o2", "n2"), ("p3", "o3", "n3"),
    ]  # fmt: skip
    assert scan.total == 3


def test_ids_in_one_file_only_are_an_error_naming_them(write):
    old = write("old.jsonl", jsonl(row(1, "o"), row(2, "o")))
    new = write("new.jsonl", jsonl(row(1, "n"), row(9, "n")))
    with pytest.raises(DatasetError) as caught:
        scan_pairs(old, new, requires=REQ)
    assert "1 id(s) only in" in caught.value.message
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
