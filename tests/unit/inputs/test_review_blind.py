"""Blind pairwise labelling sheets: A/B columns, a code per row, the run's key (issue 13 §4:
the sheet said which answer was the candidate)."""

from __future__ import annotations

import json

import pytest

from judgecli.errors import ConfigError, DatasetError, InputError
from judgecli.inputs.dataset import Case
from judgecli.inputs.labels import LabelSpace, read_labels
from judgecli.inputs.review import Blinding, Pick, ReviewKey, build_sheet
from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.rubric import RubricKind
from judgecli.store.sheets import SheetFormat, read_review_key, render_sheet, write_sheet

SCALE = LabelSpace(kind=RubricKind.POINTWISE, scale=(1, 4))


def pairwise_picks(n: int = 12) -> tuple[list[Pick], tuple[dict, dict]]:
    picks = [
        Pick(
            CaseResult(
                id=f"p{i}",
                status=CaseStatus.OK,
                winner=Winner.NEW,
                consistent=False,
                rubric_hash="h",
            ),
            ("sample", "inconsistent"),
        )
        for i in range(n)
    ]
    old = {f"p{i}": Case(id=f"p{i}", input=f"q{i}", output=f"old answer {i}") for i in range(n)}
    new = {f"p{i}": Case(id=f"p{i}", input=f"q{i}", output=f"new answer {i}") for i in range(n)}
    return picks, (old, new)


def blind_sheet(salt: str = "s" * 32, seed: int = 0, show_verdict: bool = False):
    picks, cases = pairwise_picks()
    return build_sheet(
        picks,
        cases,
        note="A, B or tie",
        show_verdict=show_verdict,
        blinding=Blinding(salt=salt, seed=seed),
    )


def test_a_pairwise_sheet_shows_a_and_b_and_nothing_that_tells_them_apart():
    sheet = blind_sheet()
    assert sheet.columns == [
        "id",
        "code",
        "category",
        "input",
        "output_a",
        "output_b",
        "label",
        "annotator",
    ]
    text = render_sheet(sheet, SheetFormat.CSV) + render_sheet(sheet, SheetFormat.JSONL)
    for hint in ("old", "new", "inconsistent", "reason", "sample"):
        assert hint not in text.replace("old answer", "").replace("new answer", "")
    # Each row's order comes from the key; over 12 rows both orders occur.
    orders = set()
    for row in sheet.rows:
        entry = sheet.key[row["code"]]
        assert entry.id == row["id"]
        assert entry.reasons == ("sample", "inconsistent")
        new_column = "output_a" if entry.new == "A" else "output_b"
        assert row[new_column].startswith("new answer")
        orders.add(entry.new)
    assert orders == {"A", "B"}


def test_the_blind_order_is_fixed_by_salt_and_seed():
    assert blind_sheet().rows == blind_sheet().rows
    assert blind_sheet(seed=1).rows != blind_sheet().rows
    assert blind_sheet(salt="t" * 32).rows != blind_sheet().rows
    assert all(code.startswith("k") for code in blind_sheet().key)


def test_a_shown_pairwise_verdict_is_a_letter_too():
    sheet = blind_sheet(show_verdict=True)
    assert all(row["verdict"] == sheet.key[row["code"]].new for row in sheet.rows)


def test_pairwise_cases_need_a_blinding_and_pointwise_ones_none():
    picks, cases = pairwise_picks(1)
    with pytest.raises(ValueError, match="blinding"):
        build_sheet(picks, cases, note=None, show_verdict=False)


def key_of(sheet, tmp_path) -> ReviewKey:
    write_sheet(
        tmp_path / "sheet.csv",
        sheet,
        SheetFormat.CSV,
        key=ReviewKey(tmp_path / "key.json", "s" * 32, {}),
    )
    return read_review_key(tmp_path / "key.json")


def test_the_key_is_written_with_the_sheet_and_grows_with_every_sheet(tmp_path):
    first, second = blind_sheet(), blind_sheet(seed=9)
    key = key_of(first, tmp_path)
    assert key.codes == first.key
    write_sheet(tmp_path / "again.csv", second, SheetFormat.CSV, key=key)
    assert read_review_key(tmp_path / "key.json").codes == first.key | second.key
    assert len(first.key | second.key) == 24


def filled(sheet, tmp_path, answers, *, columns=None) -> object:
    """The CSV sheet with each row labelled by answers(entry) (a letter said for NEW)."""
    columns = columns or sheet.columns
    lines = [",".join(columns)]
    for row in sheet.rows:
        values = row | {"label": answers(sheet.key[row["code"]])}
        lines.append(",".join(values[c] for c in columns))
    path = tmp_path / "filled.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


PAIRWISE = LabelSpace(kind=RubricKind.PAIRWISE)


def test_a_filled_blind_sheet_reads_back_as_old_new_and_tie(tmp_path):
    sheet = blind_sheet()
    key = key_of(sheet, tmp_path)

    # The rater prefers NEW on even rows, OLD on odd ones (as letters), and ties row 0.
    def said(entry):
        number = int(entry.id[1:])
        if number == 0:
            return "tie"
        old = "B" if entry.new == "A" else "A"
        return entry.new.lower() if number % 2 == 0 else old

    labels = read_labels(filled(sheet, tmp_path, said), PAIRWISE, key=key)
    expected = {f"p{i}": "tie" if i == 0 else ("new" if i % 2 == 0 else "old") for i in range(12)}
    assert {x.id: x.value for x in labels} == expected


def test_a_sheet_handed_back_as_id_code_and_label_only_is_still_read_through_the_key(tmp_path):
    sheet = blind_sheet()
    key = key_of(sheet, tmp_path)
    path = filled(sheet, tmp_path, lambda e: e.new, columns=["id", "code", "label"])
    assert {x.value for x in read_labels(path, PAIRWISE, key=key)} == {"new"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param("no-key", "blind pairwise sheet", id="without-its-key"),
        pytest.param("other-key", "is not in", id="another-run's-key"),
        pytest.param("swapped-ids", "is the code of id", id="ids-edited"),
        pytest.param("bad-label", "is not A, B or tie", id="not-a-letter"),
        pytest.param("pointwise", "blind pairwise sheet, but the labels must be", id="pointwise"),
    ],
)
def test_a_blind_sheet_is_never_read_without_its_right_key(tmp_path, change, message):
    sheet = blind_sheet()
    key = key_of(sheet, tmp_path)
    answers = (lambda e: "C") if change == "bad-label" else (lambda e: "A")
    path = filled(sheet, tmp_path, answers)
    if change == "swapped-ids":
        text = path.read_text().replace("p0,", "p#,").replace("p1,", "p0,").replace("p#,", "p1,")
        path.write_text(text)
    used = {"no-key": None, "other-key": ReviewKey(key.path, key.salt, {})}.get(change, key)
    space = SCALE if change == "pointwise" else PAIRWISE
    with pytest.raises(DatasetError) as caught:
        read_labels(path, space, key=used)
    assert message in caught.value.message
    assert caught.value.message.startswith(f"{path}:2: ")


def test_label_map_cannot_translate_a_blind_sheet(tmp_path):
    sheet = blind_sheet()
    key = key_of(sheet, tmp_path)
    path = filled(sheet, tmp_path, lambda e: "A")
    with pytest.raises(ConfigError, match="--label-map"):
        read_labels(path, PAIRWISE, key=key, label_map={"a": "old", "b": "new"})


@pytest.mark.parametrize(
    "text", ["{oops", '{"codes": {}}', '{"salt": "s", "codes": {"k1": {"id": "a", "new": "C"}}}']
)
def test_a_broken_key_file_is_an_input_error(tmp_path, text):
    path = tmp_path / "review-key.json"
    path.write_text(text)
    with pytest.raises(InputError, match="not a review key"):
        read_review_key(path)


def test_a_filled_jsonl_blind_sheet_reads_back_too(tmp_path):
    sheet = blind_sheet()
    key = key_of(sheet, tmp_path)
    rows = [json.loads(line) for line in render_sheet(sheet, SheetFormat.JSONL).splitlines()]
    assert rows[0]["label_scale"] == "A, B or tie"
    for row in rows:
        row["label"] = "B" if key.codes[row["code"]].new == "A" else "A"  # always OLD
    path = tmp_path / "filled.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert {x.value for x in read_labels(path, PAIRWISE, key=key)} == {"old"}
