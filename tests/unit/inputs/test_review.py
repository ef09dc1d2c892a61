from __future__ import annotations

import csv
import io
import json
from collections import Counter

import pytest

from judgecli.errors import ConfigError, DatasetError, InputError
from judgecli.inputs.dataset import Case
from judgecli.inputs.labels import LabelSpace, read_labels
from judgecli.inputs.review import (
    Group,
    Pick,
    SampleSize,
    build_sheet,
    choose_cases,
    groups_of,
    parse_groups,
    parse_sample,
    stratified_sample,
    stratum_of,
)
from judgecli.result import CaseResult, CaseStatus, Judgement, Winner
from judgecli.rubric import RubricKind, Scale
from judgecli.store.sheets import SheetFormat, render_sheet, write_sheet
from judgecli.verdict import Verdict

SCALE = LabelSpace(kind=RubricKind.POINTWISE, scale=(1, 4))


def scored(case_id: str, score: float | None, category: str = "c", **extra) -> CaseResult:
    status = CaseStatus.OK if score is not None else CaseStatus.FAILED
    return CaseResult(
        id=case_id, status=status, score=score, category=category, rubric_hash="h", **extra
    )


def judged(model: str, score: float) -> Judgement:
    return Judgement(model=model, verdict=Verdict(reasoning="r", score=score))


def population() -> list[CaseResult]:
    """100 cases: categories a (60) and b (40), scores 1-4 in fixed shares, 4 failed."""
    results = []
    for i in range(100):
        category = "a" if i < 60 else "b"
        score = None if i % 25 == 0 else float(1 + i % 4)
        results.append(scored(f"id-{i:03d}", score, category))
    return results


@pytest.mark.parametrize(
    ("text", "total", "expected"),
    [
        pytest.param("10", 100, 10, id="count"),
        pytest.param("10%", 100, 10, id="percent"),
        pytest.param("10%", 24, 3, id="percent-rounds-up"),
        pytest.param("500", 24, 24, id="count-capped-at-the-run"),
        pytest.param("0", 24, 0, id="zero"),
        pytest.param(None, 24, 0, id="none-no-sample"),
    ],
)
def test_sample_sizes_are_counts_or_percentages(text, total, expected):
    assert parse_sample(text).of(total) == expected


@pytest.mark.parametrize("text", ["x", "-3", "1.5", "150%", "10 %%"])
def test_bad_sample_sizes_are_config_errors(text):
    with pytest.raises(ConfigError):
        parse_sample(text)


def test_unknown_groups_are_config_errors_naming_the_choices():
    assert parse_groups("failed, inconsistent,failed") == [Group.FAILED, Group.INCONSISTENT]
    with pytest.raises(ConfigError) as caught:
        parse_groups("failed,hard")
    assert "'hard'" in caught.value.message
    assert "borderline" in (caught.value.hint or "")


@pytest.mark.parametrize("n", [1, 7, 10, 33, 96, 100])
def test_the_sample_has_the_requested_size_and_is_proportional_per_stratum(n):
    results = population()
    chosen = stratified_sample(results, n, seed=7)
    assert len(chosen) == n
    sizes = Counter(stratum_of(r) for r in results)
    got = Counter(stratum_of(r) for r in results if r.id in chosen)
    for stratum, size in sizes.items():
        share = n * size / len(results)
        # largest remainder: every stratum gets the floor or the ceiling of its share
        assert int(share) <= got[stratum] <= int(share) + 1, stratum


def test_every_stratum_is_represented_when_the_sample_allows():
    results = population()
    strata = {stratum_of(r) for r in results}
    chosen = stratified_sample(results, 50, seed=1)
    assert {stratum_of(r) for r in results if r.id in chosen} == strata


def test_the_sample_is_reproducible_from_the_seed_whatever_the_results_order():
    results = population()
    first = stratified_sample(results, 20, seed=7)
    assert stratified_sample(list(reversed(results)), 20, seed=7) == first
    assert stratified_sample(results, 20, seed=8) != first


@pytest.mark.parametrize(
    ("result", "centre", "groups"),
    [
        pytest.param(scored("a", None), 3, {Group.FAILED}, id="failed"),
        pytest.param(scored("a", 2.0), 3, {Group.BORDERLINE}, id="last-failing-score"),
        pytest.param(scored("a", 3.0), 3, {Group.BORDERLINE}, id="first-passing-score"),
        pytest.param(scored("a", 4.0), 3, set(), id="clear-pass"),
        pytest.param(scored("a", 1.0), 3, set(), id="clear-fail"),
        pytest.param(scored("a", 1.0), None, set(), id="no-centre-no-borderline"),
        pytest.param(
            scored("a", 4.0, judgements=[judged("x", 4), judged("y", 2)]),
            3,
            {Group.DISAGREEMENT},
            id="panel-disagrees",
        ),
        pytest.param(
            scored("a", 4.0, judgements=[judged("x", 4), judged("y", 4)]),
            3,
            set(),
            id="panel-agrees",
        ),
        pytest.param(
            CaseResult(
                id="p",
                status=CaseStatus.OK,
                winner=Winner.TIE,
                consistent=False,
                judge_winners={"x": Winner.NEW, "y": Winner.OLD},
                rubric_hash="h",
            ),
            None,
            {Group.INCONSISTENT, Group.DISAGREEMENT},
            id="pairwise-inconsistent-panel",
        ),
        pytest.param(
            scored("a", 4.0, passed=True, tier="strong", screen=scored("a", 2.0, passed=False)),
            3,
            {Group.DISAGREEMENT},
            id="screen-and-strong-disagree-on-pass",
        ),
        pytest.param(
            scored("a", 4.0, passed=True, tier="strong", screen=scored("a", 3.0, passed=True)),
            3,
            set(),
            id="screen-and-strong-agree-on-pass",
        ),
        pytest.param(
            scored("a", 4.0, passed=True, tier="strong", screen=scored("a", None)),
            3,
            set(),
            id="failed-screen-is-no-disagreement",
        ),
        pytest.param(
            CaseResult(
                id="p",
                status=CaseStatus.OK,
                winner=Winner.NEW,
                consistent=True,
                rubric_hash="h",
                tier="strong",
                screen=CaseResult(
                    id="p",
                    status=CaseStatus.OK,
                    winner=Winner.TIE,
                    consistent=False,
                    rubric_hash="h",
                ),
            ),
            None,
            {Group.DISAGREEMENT},
            id="screen-tie-strong-new",
        ),
    ],
)
def test_groups_of_a_case(result, centre, groups):
    assert groups_of(result, centre=centre) == groups


def test_every_case_of_an_included_group_is_present_once_with_all_its_reasons():
    results = population()
    picks = choose_cases(
        results,
        sample=SampleSize(count=10),
        seed=3,
        include=[Group.FAILED, Group.BORDERLINE],
        pass_at=3,
    )
    ids = [p.result.id for p in picks]
    assert len(ids) == len(set(ids))
    wanted = {r.id for r in results if r.status is CaseStatus.FAILED or r.score in (2.0, 3.0)}
    assert wanted <= set(ids)
    assert sum("sample" in p.reasons for p in picks) == 10
    assert all(set(p.reasons) - {"sample"} or "sample" in p.reasons for p in picks)
    assert ids == [r.id for r in results if r.id in set(ids)]  # results order


def test_borderline_without_pass_at_is_measured_from_the_median_score():
    results = [scored(str(i), float(s)) for i, s in enumerate([1, 1, 1, 2, 2])]  # median 1
    picks = choose_cases(results, sample=SampleSize(count=0), include=[Group.BORDERLINE], seed=0)
    assert [p.result.score for p in picks] == [1.0, 1.0, 1.0]


def sheet_rows(show_verdict: bool, fmt: SheetFormat = SheetFormat.CSV):
    picks = [
        Pick(scored("a", 3.0, category="x"), ("sample",)),
        Pick(scored("b", None), ("failed",)),
    ]
    cases = {
        "a": Case(id="a", input="q é", output="ans, with comma"),
        "b": Case(id="b", input="q2", output="a2", reference="ref"),
    }
    sheet = build_sheet(picks, cases, note="1-4; pass at 3", show_verdict=show_verdict)
    return render_sheet(sheet, fmt)


def test_the_csv_sheet_has_a_bom_the_scale_in_the_label_header_and_no_verdict():
    text = sheet_rows(show_verdict=False)
    assert text.startswith("\ufeff")
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    assert rows[0] == [
        "id",
        "category",
        "input",
        "output",
        "reference",
        "reason",
        "label (1-4; pass at 3)",
        "annotator",
    ]
    assert rows[1] == ["a", "x", "q é", "ans, with comma", "", "sample", "", ""]
    assert "verdict" not in text


def test_the_verdict_column_is_there_only_when_asked_for():
    rows = list(csv.reader(io.StringIO(sheet_rows(show_verdict=True).lstrip("\ufeff"))))
    assert rows[0][6] == "verdict"
    assert [r[6] for r in rows[1:]] == ["3", "failed"]


def test_the_jsonl_sheet_has_null_labels_and_the_scale_note():
    first = json.loads(sheet_rows(show_verdict=False, fmt=SheetFormat.JSONL).splitlines()[0])
    assert first["label"] is None
    assert first["label_scale"] == "1-4; pass at 3"
    assert "verdict" not in first


def test_a_case_missing_from_the_dataset_is_an_input_error():
    with pytest.raises(InputError, match="'a'"):
        build_sheet([Pick(scored("a", 1.0), ("sample",))], {}, note=None, show_verdict=False)


def test_write_sheet_never_replaces_an_existing_file(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("labels a rater typed")
    sheet = build_sheet([], {}, note=None, show_verdict=False)
    with pytest.raises(InputError, match="already exists"):
        write_sheet(path, sheet, SheetFormat.CSV)
    assert path.read_text() == "labels a rater typed"


# Reading a sheet back: labels.read_labels accepts the CSV (issue 7).
def test_a_filled_csv_sheet_reads_back_as_labels_blank_ones_skipped(write):
    path = write(
        "sheet.csv",
        "\ufeffid,input,label (1-4; pass at 3),annotator,extra\r\n"
        'a,"multi\nline",3,ann,x\r\nb,q,,,\r\nc,q,4,,\r\n',
    )
    labels = read_labels(path, SCALE)
    # Issue 31: a CSV's rows are numbered as a spreadsheet shows them (a cell's line break
    # starts no row): "c" is row 4, though on the file's fifth line.
    assert [(x.id, x.value, x.annotator, x.line) for x in labels] == [
        ("a", 3.0, "ann", 2),
        ("c", 4.0, None, 4),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "id,label\na,3\nb,9\n",
            "sheet.csv:3: label 9.0 is not a number from 1 to 4",
            id="off-scale-names-the-line",
        ),
        pytest.param(
            "id,label\na,good\n", "sheet.csv:2: label 'good' is not a number", id="not-a-number"
        ),
        pytest.param("name,label\na,3\n", 'sheet.csv:1: the header needs an "id"', id="no-id"),
        pytest.param("id,label\na,3\na,2\n", "labelled twice", id="duplicate"),
        pytest.param("id,label\na,\n", "no labels", id="all-blank"),
    ],
)
def test_bad_csv_sheets_name_file_and_line(write, text, message):
    with pytest.raises(DatasetError) as caught:
        read_labels(write("sheet.csv", text), SCALE)
    assert message in caught.value.message


def test_a_jsonl_sheet_with_null_labels_skips_them(write):
    path = write("sheet.jsonl", '{"id": "a", "label": null}\n{"id": "b", "label": 2}\n')
    assert [x.id for x in read_labels(path, SCALE)] == ["b"]


@pytest.mark.parametrize(
    ("score", "expected"), [(0.3, False), (0.59, False), (0.6, True), (0.79, True), (0.8, False)]
)
def test_borderline_on_a_continuous_scale_is_a_tenth_of_the_scale(score, expected):
    # 0-1 scale, pass_at 0.7: band 0.1, as the --screen cascade's default rule has it.
    band = Scale(min=0, max=1, integer=False).borderline_band
    assert band == pytest.approx(0.1)
    assert (Group.BORDERLINE in groups_of(scored("a", score), centre=0.7, band=band)) is expected


def test_borderline_on_a_whole_number_scale_is_one_point():
    assert Scale(min=1, max=5).borderline_band == 1.0
