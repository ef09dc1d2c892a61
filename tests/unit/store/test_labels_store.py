"""The label files `judge view` writes (store/labels.py): whole lines, appended under a lock,
read back with the later-line-replaces and withdrawn rules; a torn tail never glues itself to
the next label; writers in threads and processes lose nothing. Issue 33.
"""

from __future__ import annotations

import json
import multiprocessing
import threading
from pathlib import Path

import pytest

from judgecli.errors import DatasetError, InputError
from judgecli.store.labels import (
    append_label,
    blind_salt,
    check_rater,
    label_line,
    latest_labels,
)
from judgecli.store.sheets import REVIEW_KEY

WRITERS = 4
LABELS_EACH = 40


def lines_of(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n"), "the file ends in half a line"
    return [json.loads(line) for line in text.splitlines()]


def test_a_label_is_one_whole_line_with_the_keys_of_the_format(tmp_path: Path) -> None:
    line = label_line(
        "q1",
        "new",
        "alice",
        note="both fine",
        inclusion_probability=0.25,
        strategy="uniform",
        budget=8,
    )
    path = append_label(tmp_path, line)
    assert path == tmp_path / "labels" / "alice.jsonl"
    (stored,) = lines_of(path)
    assert stored == line
    assert set(stored) == {
        "id",
        "label",
        "rater",
        "at",
        "note",
        "inclusion_probability",
        "strategy",
        "budget",
    }
    assert stored["at"].endswith("Z")
    assert "T" in stored["at"]


def test_optional_keys_are_left_out_when_not_given(tmp_path: Path) -> None:
    assert set(label_line("q1", 3.0, "bob")) == {"id", "label", "rater", "at"}


@pytest.mark.parametrize("probability", [0.0, -0.1, 1.5])
def test_an_inclusion_probability_outside_zero_to_one_is_refused(probability: float) -> None:
    with pytest.raises(ValueError, match="inclusion probability"):
        label_line("q1", 3.0, "bob", inclusion_probability=probability)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("../escape", id="parent-folder"),
        pytest.param("a/b", id="slash"),
        pytest.param("..", id="dot-dot"),
        pytest.param(".", id="dot"),
        pytest.param("", id="empty"),
        pytest.param("two words", id="space"),
        pytest.param("x" * 65, id="too-long"),
        pytest.param("ali\x00ce", id="nul"),
    ],
)
def test_a_rater_name_that_is_no_safe_file_name_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputError, match="not a usable name"):
        check_rater(name)
    with pytest.raises(InputError):
        append_label(tmp_path, {"id": "q1", "label": 1, "rater": name, "at": "x"})
    assert not list(tmp_path.rglob("*.jsonl"))


@pytest.mark.parametrize("name", ["alice", "rater-2", "A.B_c", "x" * 64])
def test_letters_digits_dash_underscore_and_dot_make_a_rater_name(name: str) -> None:
    assert check_rater(name) == name


def test_a_later_line_replaces_an_earlier_one_and_null_withdraws(tmp_path: Path) -> None:
    for case_id, value in [("q1", 2.0), ("q2", 4.0), ("q1", 3.0), ("q2", None)]:
        append_label(tmp_path, label_line(case_id, value, "alice"))
    append_label(tmp_path, label_line("q2", 1.0, "bob"))
    standing = latest_labels(tmp_path)
    assert {
        rater: {i: line["label"] for i, line in done.items()} for rater, done in standing.items()
    } == {
        "alice": {"q1": 3.0},
        "bob": {"q2": 1.0},
    }


def test_a_torn_last_line_is_cut_before_the_next_label_is_appended(tmp_path: Path) -> None:
    append_label(tmp_path, label_line("q1", 2.0, "alice"))
    path = tmp_path / "labels" / "alice.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"id": "q2", "label": 4, "ra')  # a writer killed mid-line
    assert list(latest_labels(tmp_path)["alice"]) == ["q1"]  # readers skip it
    append_label(tmp_path, label_line("q3", 1.0, "alice"))
    assert [line["id"] for line in lines_of(path)] == ["q1", "q3"]


def test_a_file_that_is_one_torn_line_is_emptied_first(tmp_path: Path) -> None:
    (tmp_path / "labels").mkdir()
    (tmp_path / "labels" / "bob.jsonl").write_text('{"id": "q', encoding="utf-8")
    append_label(tmp_path, label_line("q9", 2.0, "bob"))
    assert [line["id"] for line in lines_of(tmp_path / "labels" / "bob.jsonl")] == ["q9"]


def test_writers_in_threads_lose_no_label_and_tear_no_line(tmp_path: Path) -> None:
    def write(rater: str, worker: int) -> None:
        for n in range(LABELS_EACH):
            append_label(
                tmp_path, label_line(f"w{worker}-{n}", float(n % 5), rater, note="x" * 300)
            )

    threads = [threading.Thread(target=write, args=("shared", w)) for w in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = [line["id"] for line in lines_of(tmp_path / "labels" / "shared.jsonl")]
    assert sorted(ids) == sorted(f"w{w}-{n}" for w in range(WRITERS) for n in range(LABELS_EACH))


def write_from_process(run_dir: str, worker: int) -> None:
    for n in range(LABELS_EACH):
        append_label(Path(run_dir), label_line(f"p{worker}-{n}", "new", "shared", note="y" * 500))


def test_writers_in_processes_lose_no_label_and_tear_no_line(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=write_from_process, args=(str(tmp_path), w)) for w in range(WRITERS)
    ]
    for p in processes:
        p.start()
    for p in processes:
        p.join(timeout=60)
        assert p.exitcode == 0
    ids = [line["id"] for line in lines_of(tmp_path / "labels" / "shared.jsonl")]
    assert sorted(ids) == sorted(f"p{w}-{n}" for w in range(WRITERS) for n in range(LABELS_EACH))


def test_a_bad_line_in_the_middle_is_named_by_file_and_line(tmp_path: Path) -> None:
    # One reader for the viewer and for --labels: a hand-edit that broke a line is said
    # where it is, not skipped in the viewer and refused later by calibrate.
    (tmp_path / "labels").mkdir()
    (tmp_path / "labels" / "c.jsonl").write_text(
        '{"id": "q1", "label": 1}\nnot json\n{"id": "q2", "label": 2}\n', encoding="utf-8"
    )
    with pytest.raises(DatasetError, match="not a JSON object") as raised:
        latest_labels(tmp_path)
    assert "c.jsonl:2:" in raised.value.message


def test_the_blind_salt_is_made_once_and_then_read_back(tmp_path: Path) -> None:
    salt = blind_salt(tmp_path)
    assert len(salt) == 32
    assert blind_salt(tmp_path) == salt
    assert json.loads((tmp_path / REVIEW_KEY).read_text()) == {"salt": salt, "codes": {}}
    assert [p.name for p in tmp_path.iterdir()] == [REVIEW_KEY]  # no temporary file left


def test_the_blind_salt_of_an_existing_review_key_is_kept(tmp_path: Path) -> None:
    key = {"salt": "s3cret", "codes": {"kabc": {"id": "q1", "new": "A", "reasons": ["sample"]}}}
    (tmp_path / REVIEW_KEY).write_text(json.dumps(key), encoding="utf-8")
    assert blind_salt(tmp_path) == "s3cret"
    assert json.loads((tmp_path / REVIEW_KEY).read_text()) == key
