"""Bad input, everywhere: every malformed dataset, rubric, labels file, OLD/NEW pair and flag
exits 2 with one `error:` line naming `path:line:` and one `hint:` line with the fix (the
promise of docs/endpoints.md), no traceback, nothing on stdout, no judge call and nothing
written. The oddities real files have (a BOM, CRLF, blank lines, a 50 MB line) are not
errors: those runs judge every case.

The corpus lives in tests/data/bad/ (one small file per problem, named after it; the
Parquet files are written by tests/data/bad/parquet_corpus.py); the 50 MB lines are
written at run time instead of being committed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.conftest import DATA

BAD = DATA / "bad"
HUGE = 50 * 1024 * 1024
GOOD_LINE = json.dumps({"id": "a", "input": "What is 2+2?", "output": "4"})


def bad(name: str) -> str:
    """A corpus file, as the command-line argument naming it."""
    path = BAD / name
    assert path.exists(), f"corpus file missing: {path}"
    return str(path)


def write_huge_truncated_line(tmp: Path) -> None:
    """Line 2 is a 50 MB string that never ends: a torn write of a huge case."""
    with (tmp / "huge-torn.jsonl").open("w", encoding="utf-8") as handle:
        handle.write(GOOD_LINE + "\n")
        handle.write('{"id": "b", "input": "q", "output": "' + "x" * HUGE + "\n")


def make_directory(tmp: Path) -> None:
    (tmp / "a-directory.jsonl").mkdir()


def make_file(tmp: Path) -> None:
    (tmp / "a-file").write_text("the user's own file\n", encoding="utf-8")


def case(
    case_id: str,
    *argv: str,
    where: str,
    make: Callable[[Path], None] | None = None,
    says: str | None = None,
):
    """One bad input: the command line, the `path[:line]` its error must name, and words
    the error must say (when the wording is the point)."""
    return pytest.param(list(argv), where, make, says, id=case_id)


def scores(dataset: str, rubric: str = "helpfulness", *extra: str) -> tuple[str, ...]:
    return ("score", dataset, "--rubric", rubric, *extra)


def scored_with(rubric: str) -> tuple[str, ...]:
    return scores(bad("good-old.jsonl"), bad(rubric))


def compares(old: str, new: str, *extra: str, rubric: str = "pairwise") -> tuple[str, ...]:
    return ("pairwise", old, new, "--rubric", rubric, *extra)


def calibrates(labels: str, rubric: str = "helpfulness", *extra: str) -> tuple[str, ...]:
    return ("calibrate", labels, "--rubric", rubric, *extra)


OLD, NEW = "good-old.jsonl", "good-new.jsonl"
BAD_INPUTS = [
    # --- datasets: JSON syntax and encoding -------------------------------------------
    case(
        "malformed-json",
        *scores(bad("cases-malformed-json.jsonl")),
        where="cases-malformed-json.jsonl:2",
    ),
    case(
        "truncated-last-line",
        *scores(bad("cases-truncated-last-line.jsonl")),
        where="cases-truncated-last-line.jsonl:3",
    ),
    case(
        "json-array-line",
        *scores(bad("cases-json-array-line.jsonl")),
        where="cases-json-array-line.jsonl:2",
    ),
    case(
        "json-string-line",
        *scores(bad("cases-json-string-line.jsonl")),
        where="cases-json-string-line.jsonl:2",
    ),
    case(
        "trailing-garbage",
        *scores(bad("cases-trailing-garbage.jsonl")),
        where="cases-trailing-garbage.jsonl:2",
    ),
    case(
        "two-objects-on-one-line",
        *scores(bad("cases-two-objects-one-line.jsonl")),
        where="cases-two-objects-one-line.jsonl:2",
    ),
    # Issue 29 (review 2026-11-27, finding 21): the mistakes below had no hint.
    case(
        "pretty-printed-json-array-file",
        *scores(bad("cases-json-array-file.json")),
        where="cases-json-array-file.json:1",
        says="this is a JSON array; JSONL needs one object per line",
    ),
    case(
        "json-array-file-on-one-line",
        *scores(bad("cases-json-array-one-line.json")),
        where="cases-json-array-one-line.json:1",
        says="this is a JSON array; JSONL needs one object per line",
    ),
    case(
        "pretty-printed-json-object",
        *scores(bad("cases-pretty-printed.json")),
        where="cases-pretty-printed.json:1",
        says="pretty-printed JSON",
    ),
    case(
        "lines-ending-in-a-comma",
        *scores(bad("cases-trailing-comma.jsonl")),
        where="cases-trailing-comma.jsonl:1",
        says="a ',' after the object",
    ),
    case(
        "comma-before-the-closing-brace",
        *scores(bad("cases-comma-before-brace.jsonl")),
        where="cases-comma-before-brace.jsonl:2",
    ),
    case(
        "single-quoted-python-dict",
        *scores(bad("cases-single-quotes.jsonl")),
        where="cases-single-quotes.jsonl:2",
    ),
    case(
        "line-cut-mid-string",
        *scores(bad("cases-line-cut-mid-string.jsonl")),
        where="cases-line-cut-mid-string.jsonl:2",
        says="the line ends inside a string",
    ),
    case(
        "output-is-a-number",
        *scores(bad("cases-output-number.jsonl")),
        where="cases-output-number.jsonl:2",
        says='"output" must be a string, got int',
    ),
    case(
        "input-is-a-list",
        *scores(bad("cases-input-list.jsonl")),
        where="cases-input-list.jsonl:2",
        says='"input" must be a string, got list',
    ),
    case("non-utf8", *scores(bad("cases-non-utf8.jsonl")), where="cases-non-utf8.jsonl:2"),
    case("utf16", *scores(bad("cases-utf16.jsonl")), where="cases-utf16.jsonl:1"),
    case(
        "nul-byte-in-a-string", *scores(bad("cases-nul-byte.jsonl")), where="cases-nul-byte.jsonl:2"
    ),
    case(
        "nul-byte-line",
        *scores(bad("cases-nul-between-lines.jsonl")),
        where="cases-nul-between-lines.jsonl:2",
    ),
    case(
        "huge-torn-line",
        *scores("huge-torn.jsonl"),
        where="huge-torn.jsonl:2",
        make=write_huge_truncated_line,
    ),
    case("empty-file", *scores(bad("cases-empty.jsonl")), where="cases-empty.jsonl"),
    case(
        "only-blank-lines",
        *scores(bad("cases-only-blank-lines.jsonl")),
        where="cases-only-blank-lines.jsonl",
    ),
    case("no-such-file", *scores("nowhere.jsonl"), where="nowhere.jsonl"),
    case(
        "out-names-a-file",
        *scores(bad(OLD), "helpfulness", "--out", "a-file"),
        where="a-file",
        make=make_file,
    ),
    case(
        "dataset-is-a-directory",
        *scores("a-directory.jsonl"),
        where="a-directory.jsonl",
        make=make_directory,
    ),
    # --- datasets: fields missing or of the wrong type ----------------------------------
    case(
        "missing-output",
        *scores(bad("cases-missing-output.jsonl")),
        where="cases-missing-output.jsonl:2",
    ),
    case(
        "missing-input",
        *scores(bad("cases-missing-input.jsonl")),
        where="cases-missing-input.jsonl:2",
    ),
    case("null-output", *scores(bad("cases-null-output.jsonl")), where="cases-null-output.jsonl:2"),
    case(
        "mapped-column-absent",
        *scores(bad("cases-column-not-in-file.jsonl"), "helpfulness", "--field", "output=answer"),
        where="cases-column-not-in-file.jsonl:1",
    ),
    case(
        "template-field-the-case-lacks",
        *scores(bad("cases-lacks-reference.jsonl"), bad("good-needs-reference.yaml")),
        where="cases-lacks-reference.jsonl:2",
    ),
    case("id-is-an-object", *scores(bad("cases-id-object.jsonl")), where="cases-id-object.jsonl:2"),
    case(
        "id-is-a-boolean", *scores(bad("cases-id-boolean.jsonl")), where="cases-id-boolean.jsonl:2"
    ),
    case("id-is-a-float", *scores(bad("cases-id-float.jsonl")), where="cases-id-float.jsonl:2"),
    case(
        "output-is-a-list",
        *scores(bad("cases-output-list.jsonl")),
        where="cases-output-list.jsonl:2",
    ),
    case(
        "input-is-a-number",
        *scores(bad("cases-input-number.jsonl")),
        where="cases-input-number.jsonl:2",
    ),
    case(
        "category-is-an-object",
        *scores(bad("cases-category-object.jsonl")),
        where="cases-category-object.jsonl:2",
    ),
    case(
        "context-is-a-number",
        *scores(bad("cases-context-number.jsonl")),
        where="cases-context-number.jsonl:2",
    ),
    case(
        "context-holds-a-number",
        *scores(bad("cases-context-list-of-numbers.jsonl")),
        where="cases-context-list-of-numbers.jsonl:2",
    ),
    case(
        "duplicate-id", *scores(bad("cases-duplicate-id.jsonl")), where="cases-duplicate-id.jsonl:3"
    ),
    case(
        "duplicate-id-int-1-and-string-1",
        *scores(bad("cases-duplicate-id-int-and-string.jsonl")),
        where="cases-duplicate-id-int-and-string.jsonl:2",
    ),
    # --- pairwise: OLD and NEW that do not belong together ------------------------------
    case(
        "pairwise-ids-differ",
        *compares(bad(OLD), bad("new-ids-mismatch.jsonl")),
        where="new-ids-mismatch.jsonl",
    ),
    case(
        "pairwise-no-common-id",
        *compares(bad(OLD), bad("new-no-common-ids.jsonl"), "--allow-partial"),
        where="new-no-common-ids.jsonl",
    ),
    case(
        "pairwise-input-differs",
        *compares(bad(OLD), bad("new-input-differs.jsonl")),
        where="new-input-differs.jsonl",
    ),
    case(
        "pairwise-duplicate-id-in-new",
        *compares(bad(OLD), bad("new-duplicate-id.jsonl")),
        where="new-duplicate-id.jsonl:4",
    ),
    case(
        "pairwise-malformed-new",
        *compares(bad(OLD), bad("new-malformed-json.jsonl")),
        where="new-malformed-json.jsonl:2",
    ),
    case(
        "pairwise-missing-output-in-new",
        *compares(bad(OLD), bad("new-missing-output.jsonl")),
        where="new-missing-output.jsonl:2",
    ),
    case(
        "pairwise-malformed-old",
        *compares(bad("cases-malformed-json.jsonl"), bad(NEW)),
        where="cases-malformed-json.jsonl:2",
    ),
    case(
        "pairwise-empty-old",
        *compares(bad("cases-empty.jsonl"), bad(NEW)),
        where="cases-empty.jsonl",
    ),
    case(
        "pairwise-with-a-binary-rubric",
        *compares(bad(OLD), bad(NEW), rubric=bad("good-binary.yaml")),
        where="good-binary.yaml",
    ),
    # --- rubrics, through `judge score` -------------------------------------------------
    case("rubric-empty", *scored_with("rubric-empty.yaml"), where="rubric-empty.yaml"),
    case(
        "rubric-not-a-mapping",
        *scored_with("rubric-not-a-mapping.yaml"),
        where="rubric-not-a-mapping.yaml",
    ),
    case("rubric-a-scalar", *scored_with("rubric-scalar.yaml"), where="rubric-scalar.yaml"),
    # (The line where the unclosed `{` opened, not the one where the parser gave up.)
    case(
        "rubric-invalid-yaml",
        *scored_with("rubric-invalid-yaml.yaml"),
        where="rubric-invalid-yaml.yaml:3",
    ),
    case(
        "rubric-tab-indented",
        *scored_with("rubric-tab-indented.yaml"),
        where="rubric-tab-indented.yaml:4",
    ),
    case("rubric-non-utf8", *scored_with("rubric-non-utf8.yaml"), where="rubric-non-utf8.yaml:1"),
    case(
        "rubric-aliases-bomb",
        *scored_with("rubric-aliases-bomb.yaml"),
        where="rubric-aliases-bomb.yaml:2",
    ),
    case(
        "rubric-unknown-key",
        *scored_with("rubric-unknown-key.yaml"),
        where="rubric-unknown-key.yaml:4",
    ),
    case(
        "rubric-unknown-nested-key",
        *scored_with("rubric-unknown-nested-key.yaml"),
        where="rubric-unknown-nested-key.yaml:3",
    ),
    case(
        "rubric-duplicate-key",
        *scored_with("rubric-duplicate-key.yaml"),
        where="rubric-duplicate-key.yaml:4",
    ),
    case(
        "rubric-unknown-kind",
        *scored_with("rubric-unknown-kind.yaml"),
        where="rubric-unknown-kind.yaml:2",
    ),
    case(
        "rubric-missing-kind",
        *scored_with("rubric-missing-kind.yaml"),
        where="rubric-missing-kind.yaml:1",
    ),
    case(
        "rubric-missing-prompt",
        *scored_with("rubric-missing-prompt.yaml"),
        where="rubric-missing-prompt.yaml:1",
    ),
    case(
        "rubric-empty-name",
        *scored_with("rubric-empty-name.yaml"),
        where="rubric-empty-name.yaml:1",
    ),
    case(
        "rubric-pointwise-without-scale",
        *scored_with("rubric-pointwise-without-scale.yaml"),
        where="rubric-pointwise-without-scale.yaml:2",
    ),
    case(
        "rubric-scale-min-equals-max",
        *scored_with("rubric-scale-min-equals-max.yaml"),
        where="rubric-scale-min-equals-max.yaml:3",
    ),
    case(
        "rubric-scale-min-above-max",
        *scored_with("rubric-scale-min-above-max.yaml"),
        where="rubric-scale-min-above-max.yaml:3",
    ),
    case(
        "rubric-integer-scale-with-fraction",
        *scored_with("rubric-scale-fractional-integer.yaml"),
        where="rubric-scale-fractional-integer.yaml:3",
    ),
    case(
        "rubric-scale-as-a-string",
        *scored_with("rubric-scale-as-string.yaml"),
        where="rubric-scale-as-string.yaml:3",
    ),
    case(
        "rubric-pass-at-outside-scale",
        *scored_with("rubric-pass-at-outside-scale.yaml"),
        where="rubric-pass-at-outside-scale.yaml:4",
    ),
    case(
        "rubric-pointwise-with-choices",
        *scored_with("rubric-pointwise-with-choices.yaml"),
        where="rubric-pointwise-with-choices.yaml:4",
    ),
    case(
        "rubric-binary-given-a-scale",
        *scored_with("rubric-binary-as-scale.yaml"),
        where="rubric-binary-as-scale.yaml:3",
    ),
    case(
        "rubric-binary-one-choice",
        *scored_with("rubric-binary-one-choice.yaml"),
        where="rubric-binary-one-choice.yaml:3",
    ),
    case(
        "rubric-binary-duplicate-choices",
        *scored_with("rubric-binary-duplicate-choices.yaml"),
        where="rubric-binary-duplicate-choices.yaml:3",
    ),
    case(
        "rubric-binary-pass-choice-unknown",
        *scored_with("rubric-binary-pass-choice-unknown.yaml"),
        where="rubric-binary-pass-choice-unknown.yaml:4",
    ),
    case(
        "rubric-criteria-duplicate-names",
        *scored_with("rubric-criteria-duplicate-names.yaml"),
        where="rubric-criteria-duplicate-names.yaml:7",
    ),
    case(
        "rubric-criterion-weight-zero",
        *scored_with("rubric-criterion-weight-zero.yaml"),
        where="rubric-criterion-weight-zero.yaml:6",
    ),
    case(
        "rubric-criterion-weight-negative",
        *scored_with("rubric-criterion-weight-negative.yaml"),
        where="rubric-criterion-weight-negative.yaml:6",
    ),
    case(
        "rubric-weights-sum-to-zero",
        *scored_with("rubric-weights-sum-to-zero.yaml"),
        where="rubric-weights-sum-to-zero.yaml:5",
    ),
    case(
        "rubric-criterion-name-not-an-identifier",
        *scored_with("rubric-criterion-bad-name.yaml"),
        where="rubric-criterion-bad-name.yaml:5",
    ),
    case(
        "rubric-criterion-level-not-a-score",
        *scored_with("rubric-criterion-level-not-a-score.yaml"),
        where="rubric-criterion-level-not-a-score.yaml:6",
    ),
    case(
        "rubric-prompt-uses-unrequired-reference",
        *scored_with("rubric-prompt-reference-not-required.yaml"),
        where="rubric-prompt-reference-not-required.yaml:5",
    ),
    case(
        "rubric-prompt-unknown-field",
        *scored_with("rubric-prompt-unknown-field.yaml"),
        where="rubric-prompt-unknown-field.yaml:5",
    ),
    case(
        "rubric-prompt-unbalanced-brace",
        *scored_with("rubric-prompt-unbalanced-brace.yaml"),
        where="rubric-prompt-unbalanced-brace.yaml:5",
    ),
    case(
        "rubric-requires-unknown-field",
        *scored_with("rubric-requires-unknown-field.yaml"),
        where="rubric-requires-unknown-field.yaml:4",
    ),
    case(
        "rubric-pairwise-prompt-uses-output",
        *compares(bad(OLD), bad(NEW), rubric=bad("rubric-pairwise-uses-output.yaml")),
        where="rubric-pairwise-uses-output.yaml:4",
    ),
    case(
        "rubric-temperature-out-of-range",
        *scored_with("rubric-temperature-out-of-range.yaml"),
        where="rubric-temperature-out-of-range.yaml:4",
    ),
    case(
        "rubric-pairwise-kind-for-score",
        *scored_with("rubric-kind-pairwise.yaml"),
        where="rubric-kind-pairwise.yaml",
    ),
    case("rubric-no-such-file", *scores(bad(OLD), "missing.yaml"), where="missing.yaml"),
    # --- rubrics, through `judge rubrics validate` --------------------------------------
    case(
        "validate-aliases-bomb",
        "rubrics",
        "validate",
        bad("rubric-aliases-bomb.yaml"),
        where="rubric-aliases-bomb.yaml:2",
    ),
    case(
        "validate-not-a-mapping",
        "rubrics",
        "validate",
        bad("rubric-not-a-mapping.yaml"),
        where="rubric-not-a-mapping.yaml",
    ),
    case(
        "validate-scale-min-above-max",
        "rubrics",
        "validate",
        bad("rubric-scale-min-above-max.yaml"),
        where="rubric-scale-min-above-max.yaml:3",
    ),
    case(
        "validate-unknown-key",
        "rubrics",
        "validate",
        bad("rubric-unknown-key.yaml"),
        where="rubric-unknown-key.yaml:4",
    ),
    # --- human labels for `judge calibrate` ---------------------------------------------
    case(
        "labels-off-scale",
        *calibrates(bad("labels-off-scale.jsonl")),
        where="labels-off-scale.jsonl:2",
    ),
    case(
        "labels-score-as-a-word",
        *calibrates(bad("labels-score-as-word.jsonl")),
        where="labels-score-as-word.jsonl:2",
    ),
    case(
        "labels-score-as-a-boolean",
        *calibrates(bad("labels-score-as-boolean.jsonl")),
        where="labels-score-as-boolean.jsonl:2",
    ),
    case(
        "labels-score-nan",
        *calibrates(bad("labels-score-nan.jsonl")),
        where="labels-score-nan.jsonl:2",
    ),
    case(
        "labels-missing-label",
        *calibrates(bad("labels-missing-label.jsonl")),
        where="labels-missing-label.jsonl:2",
    ),
    case(
        "labels-missing-id",
        *calibrates(bad("labels-missing-id.jsonl")),
        where="labels-missing-id.jsonl:2",
    ),
    case(
        "labels-same-rater-twice",
        *calibrates(bad("labels-labelled-twice.jsonl")),
        where="labels-labelled-twice.jsonl:3",
    ),
    case(
        "labels-annotator-is-a-list",
        *calibrates(bad("labels-annotator-list.jsonl")),
        where="labels-annotator-list.jsonl:2",
    ),
    case(
        "labels-case-fields-disagree",
        *calibrates(bad("labels-case-fields-disagree.jsonl")),
        where="labels-case-fields-disagree.jsonl:2",
    ),
    case(
        "labels-without-case-fields",
        *calibrates(bad("labels-without-case-fields.jsonl")),
        where="labels-without-case-fields.jsonl:1",
    ),
    case(
        "labels-malformed-json",
        *calibrates(bad("labels-malformed-json.jsonl")),
        where="labels-malformed-json.jsonl:2",
    ),
    case("labels-empty", *calibrates(bad("labels-empty.jsonl")), where="labels-empty.jsonl"),
    case(
        "labels-json-array-file",
        *calibrates(bad("labels-json-array-file.json")),
        where="labels-json-array-file.json:1",
        says="this is a JSON array",
    ),
    case("labels-no-such-file", *calibrates("no-labels.jsonl"), where="no-labels.jsonl"),
    case(
        "labels-binary-unknown-choice",
        *calibrates(bad("labels-binary-unknown-choice.jsonl"), bad("good-binary.yaml")),
        where="labels-binary-unknown-choice.jsonl:2",
    ),
    case(
        "labels-pairwise-maybe",
        *calibrates(
            bad("labels-pairwise-maybe.jsonl"), "pairwise", "--old", bad(OLD), "--new", bad(NEW)
        ),
        where="labels-pairwise-maybe.jsonl:2",
    ),
    case(
        "labels-cases-file-malformed",
        *calibrates(
            bad("labels-without-case-fields.jsonl"),
            "helpfulness",
            "--cases",
            bad("cases-malformed-json.jsonl"),
        ),
        where="cases-malformed-json.jsonl:2",
    ),
    case(
        "results-are-not-results",
        "calibrate",
        "--results",
        bad("results-are-cases.jsonl"),
        "--labels",
        bad("labels-off-scale.jsonl"),
        where="results-are-cases.jsonl:1",
    ),
    case(
        "results-malformed-json",
        "calibrate",
        "--results",
        bad("results-malformed-json.jsonl"),
        "--labels",
        bad("labels-off-scale.jsonl"),
        where="results-malformed-json.jsonl:1",
    ),
    case(
        "results-no-such-file",
        "calibrate",
        "--results",
        "no-results.jsonl",
        "--labels",
        bad("labels-off-scale.jsonl"),
        where="no-results.jsonl",
    ),
    # --- CSV and Parquet datasets (issue 31): a CSV row as a spreadsheet numbers it (the
    # header is row 1), a Parquet row counted from 1 --------------------------------------
    case(
        "csv-missing-output",
        *scores(bad("cases-csv-missing-output.csv")),
        where="cases-csv-missing-output.csv:2",
        says='missing required field "output"',
    ),
    case(
        "csv-unclosed-quote",
        *scores(bad("cases-csv-unclosed-quote.csv")),
        where="cases-csv-unclosed-quote.csv:3",
        says="a quoted cell is never closed",
    ),
    case(
        "csv-unquoted-line-break",
        *scores(bad("cases-csv-unquoted-line-break.csv")),
        where="cases-csv-unquoted-line-break.csv:4",
        says="1 cells, but the header has 3 columns",
    ),
    case(
        "csv-duplicate-column",
        *scores(bad("cases-csv-duplicate-column.csv")),
        where="cases-csv-duplicate-column.csv:1",
        says='the column "output" is there twice',
    ),
    case(
        "csv-duplicate-id",
        *scores(bad("cases-csv-duplicate-id.csv")),
        where="cases-csv-duplicate-id.csv:3",
        says="(first on row 2)",
    ),
    case(
        "csv-not-utf8",
        *scores(bad("cases-csv-not-utf8.csv")),
        where="cases-csv-not-utf8.csv:2",
        says="not UTF-8",
    ),
    case(
        "csv-messages-not-json",
        *scores(bad("cases-csv-messages-not-json.csv"), "conversation"),
        where="cases-csv-messages-not-json.csv:2",
        says='"messages" is not JSON',
    ),
    case(
        "csv-header-only",
        *scores(bad("cases-csv-header-only.csv")),
        where="cases-csv-header-only.csv",
        says="no cases",
    ),
    case(
        "csv-value-in-unnamed-column",
        *scores(bad("cases-csv-value-in-unnamed-column.csv")),
        where="cases-csv-value-in-unnamed-column.csv:2",
        says="a value in column 3, which has no name",
    ),
    case(
        "csv-new-unquoted-comma",
        *compares(bad(OLD), bad("new-csv-unquoted-comma.csv")),
        where="new-csv-unquoted-comma.csv:4",
        says="4 cells, but the header has 3 columns",
    ),
    case(
        "csv-labels-off-scale",
        *calibrates(bad("labels-csv-off-scale.csv")),
        where="labels-csv-off-scale.csv:3",
        says="label 7.0 is not a number from 1 to 4",
    ),
    case(
        "parquet-null-output",
        *scores(bad("cases-parquet-null-output.parquet")),
        where="cases-parquet-null-output.parquet:2",
        says='"output" is null',
    ),
    case(
        "parquet-output-number",
        *scores(bad("cases-parquet-output-number.parquet")),
        where="cases-parquet-output-number.parquet:1",
        says='"output" must be a string, got int',
    ),
    case(
        "parquet-duplicate-id",
        *scores(bad("cases-parquet-duplicate-id.parquet")),
        where="cases-parquet-duplicate-id.parquet:3",
        says="duplicate id 'a' (first on row 1)",
    ),
    case(
        "parquet-no-rows",
        *scores(bad("cases-parquet-no-rows.parquet")),
        where="cases-parquet-no-rows.parquet",
        says="no cases",
    ),
    case(
        "parquet-conversation-with-an-unknown-role",
        *scores(bad("cases-parquet-messages-bad-role.parquet"), "conversation"),
        where="cases-parquet-messages-bad-role.parquet:2",
        says="role must be one of",
    ),
    case(
        "parquet-that-is-jsonl",
        *scores(bad("cases-parquet-not-parquet.parquet")),
        where="cases-parquet-not-parquet.parquet",
        says="not a Parquet file",
    ),
    case(
        "parquet-cut-short",
        *scores(bad("cases-parquet-cut-short.parquet")),
        where="cases-parquet-cut-short.parquet",
        says="not a Parquet file, or one cut short",
    ),
    case(
        "parquet-no-such-file",
        *scores("no-such-cases.parquet"),
        where="no-such-cases.parquet",
        says="no such file",
    ),
    case(
        "parquet-new-missing-output",
        *compares(bad(OLD), bad("new-parquet-missing-output.parquet")),
        where="new-parquet-missing-output.parquet:1",
        says='missing required field "output"',
    ),
    case(
        "parquet-labels-off-scale",
        *calibrates(bad("labels-parquet-off-scale.parquet")),
        where="labels-parquet-off-scale.parquet:2",
        says="label 7.0 is not a number from 1 to 4",
    ),
    # --- flags: zero, negative or unknown values ----------------------------------------
    case(
        "concurrency-0",
        *scores(bad(OLD), "helpfulness", "--concurrency", "0"),
        where="--concurrency",
    ),
    case("rpm-negative", *scores(bad(OLD), "helpfulness", "--rpm", "-5"), where="--rpm"),
    case("tpm-0", *scores(bad(OLD), "helpfulness", "--tpm", "0"), where="--tpm"),
    case("limit-0", *scores(bad(OLD), "helpfulness", "--limit", "0"), where="--limit"),
    case("sample-negative", *scores(bad(OLD), "helpfulness", "--sample", "-1"), where="--sample"),
    case(
        "sample-share-above-100",
        *scores(bad(OLD), "helpfulness", "--sample", "200%"),
        where="--sample",
    ),
    case(
        "sample-not-a-number", *compares(bad(OLD), bad(NEW), "--sample", "some"), where="--sample"
    ),
    case(
        "force-with-resume",
        *scores(bad(OLD), "helpfulness", "--force", "--resume", "run"),
        where="--force",
    ),
    case(
        "max-retries-negative",
        *scores(bad(OLD), "helpfulness", "--max-retries", "-1"),
        where="--max-retries",
    ),
    case("timeout-0", *scores(bad(OLD), "helpfulness", "--timeout", "0"), where="--timeout"),
    case(
        "max-tokens-0", *scores(bad(OLD), "helpfulness", "--max-tokens", "0"), where="--max-tokens"
    ),
    case(
        "temperature-too-hot",
        *scores(bad(OLD), "helpfulness", "--temperature", "3"),
        where="--temperature",
    ),
    case(
        "concurrency-not-a-number",
        *scores(bad(OLD), "helpfulness", "--concurrency", "many"),
        where="--concurrency",
    ),
    case("price-negative", *scores(bad(OLD), "helpfulness", "--price", "-1,2"), where="--price"),
    case(
        "field-unknown-name",
        *scores(bad(OLD), "helpfulness", "--field", "answer=output"),
        where="--field",
    ),
    case(
        "min-win-rate-above-1",
        *compares(bad(OLD), bad(NEW), "--min-win-rate", "1.5"),
        where="--min-win-rate",
    ),
    case(
        "flip-policy-unknown",
        *compares(bad(OLD), bad(NEW), "--flip-policy", "coin"),
        where="--flip-policy",
    ),
    case("gate-on-unknown", *compares(bad(OLD), bad(NEW), "--on", "sideways"), where="--on"),
    case(
        "label-map-not-pairs",
        *calibrates(bad("labels-pairwise-maybe.jsonl"), "pairwise", "--label-map", "A:old"),
        where="--label-map",
    ),
]


def files_under(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under `folder`, with its size and modification time."""
    return {
        str(path.relative_to(folder)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in folder.rglob("*")
    }


@pytest.mark.parametrize(("argv", "where", "make", "says"), BAD_INPUTS)
def test_bad_input_exits_2_with_the_place_and_a_hint_and_writes_nothing(
    run_cli, judge_server, tmp_path, argv, where, make, says
):
    if make is not None:
        make(tmp_path)
    before = files_under(tmp_path)
    if argv[0] == "rubrics":
        run = run_cli(None, *argv)
    elif "--out" in argv:
        run = run_cli(judge_server, *argv)
    else:
        run = run_cli(judge_server, *argv, "--out", "run")
    lines = run.stderr.rstrip("\n").split("\n")
    # A flag has no line: its name is the place.
    place = where if where.startswith("--") else f"{where}:"
    assert run.exit_code == 2, run.stderr
    assert "Traceback" not in run.stderr
    assert lines[0].startswith("error: "), run.stderr
    # Issue 29 (review 2026-11-27, finding 21): every bad input gets the fix, not only some.
    assert len(lines) == 2, run.stderr
    assert lines[1].startswith("hint: "), run.stderr
    assert len(lines[1]) > len("hint: ") + 10, run.stderr
    assert place in lines[0]
    if says is not None:
        assert says in lines[0]
    assert run.stdout == ""
    assert judge_server.requests == []
    assert files_under(tmp_path) == before


def write_bytes(name: str, data: bytes) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        path = tmp / name
        path.write_bytes(data)
        return path

    return make


def write_huge_valid_line(tmp: Path) -> Path:
    """A valid 50 MB line: a case carrying a large trace in a key the rubric does not use
    (kept in metadata). The prompt stays small: a 50 MB request body is refused by the
    simulator (HTTP 413, as by real providers) and would only test the failure path."""
    path = tmp / "huge.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        handle.write(GOOD_LINE + "\n")
        handle.write(json.dumps({"id": "big", "input": "q", "output": "x", "trace": "y" * HUGE}))
        handle.write("\n" + json.dumps({"id": "c", "input": "q", "output": "z"}) + "\n")
    return path


CASES = [
    b'{"id": "%d", "input": "What is %d+%d?", "output": "%d"}' % (i, i, i, 2 * i)
    for i in range(1, 4)
]

ALLOWED = [
    pytest.param(
        write_bytes("bom.jsonl", b"\xef\xbb\xbf" + b"\n".join(CASES) + b"\n"), 3, id="utf8-bom"
    ),
    pytest.param(write_bytes("crlf.jsonl", b"\r\n".join(CASES) + b"\r\n"), 3, id="crlf"),
    pytest.param(
        write_bytes("bom-crlf.jsonl", b"\xef\xbb\xbf" + b"\r\n".join(CASES) + b"\r\n"),
        3,
        id="bom-and-crlf",
    ),
    pytest.param(
        write_bytes("blank.jsonl", b"\n" + b"\n\n  \t\n".join(CASES) + b"\n\n\n"),
        3,
        id="blank-lines",
    ),
    pytest.param(write_bytes("no-newline.jsonl", b"\n".join(CASES)), 3, id="no-final-newline"),
    pytest.param(
        write_bytes(
            "unicode.jsonl",
            json.dumps(
                {"id": "ü-1", "input": "Was ist 2+2? 🤔", "output": "Vier — 4\u2028"},
                ensure_ascii=False,
            ).encode(),
        ),
        1,
        id="non-ascii-text",
    ),
    pytest.param(
        write_bytes(
            "no-ids.jsonl",
            b"".join(
                b'{"input": "What is %d+%d?", "output": "%d"}\n' % (i, i, 2 * i)
                for i in range(1, 4)
            ),
        ),
        3,
        id="ids-derived-from-line-numbers",
    ),
    pytest.param(write_huge_valid_line, 3, id="50mb-line"),
    pytest.param(
        write_bytes(
            "empty-answers.jsonl",
            b"".join(
                b'{"id": "%d", "input": "What is %d+%d?", "output": ""}\n' % (i, i, i)
                for i in range(1, 4)
            ),
        ),
        3,
        id="empty-outputs",
    ),
]


@pytest.mark.parametrize(("make", "n_cases"), ALLOWED)
def test_allowed_oddities_are_read_and_every_case_judged(
    run_cli, judge_server, tmp_path, make, n_cases
):
    dataset = make(tmp_path)
    run = run_cli(
        judge_server,
        "score",
        str(dataset),
        "--rubric",
        "helpfulness",
        "--out",
        "run",
        "--quiet",
        "--json",
    )
    assert run.exit_code == 0, run.stderr
    assert "error:" not in run.stderr
    summary = run.summary
    assert (summary["n_cases"], summary["n_ok"], summary["n_failed"]) == (n_cases, n_cases, 0)
    assert len(judge_server.requests) == n_cases
    # split("\n"), not splitlines(): a case's text may hold U+2028, which JSON keeps raw.
    text = (Path("run") / "results.jsonl").read_text(encoding="utf-8")
    results = [line for line in text.split("\n") if line]
    assert len({json.loads(line)["id"] for line in results}) == n_cases
    # The oddity is the file's, not the text's: no BOM or carriage return reaches the judge.
    sent = "".join(m["content"] for r in judge_server.requests for m in r.body["messages"])
    assert "\ufeff" not in sent
    assert "\r" not in sent


# Regression (issue 13 §4, review 2026-11-23 finding 10): `"output": ""` exited 2 as "missing".
def test_empty_answers_are_judged_and_reported_as_a_warning(run_cli, judge_server, write):
    write(
        "d.jsonl",
        "".join(
            json.dumps(row) + "\n"
            for row in [
                {"id": "a", "input": "What is 2+2?", "output": "4"},
                {"id": "b", "input": "Name a colour.", "output": ""},
                {"id": "c", "input": "Capital of France?", "output": ""},
            ]
        ),
    )
    run = run_cli(
        judge_server, "score", "d.jsonl", "--rubric", "helpfulness", "--out", "run", "--json"
    )
    assert run.exit_code == 0, run.stderr
    warning = 'd.jsonl: 2 cases have an empty "output" (judged as given)'
    assert warning in run.summary["warnings"]
    assert f"warning: {warning}" in run.stderr
    assert run.summary["n_ok"] == 3
    assert len(judge_server.requests) == 3
    sent = ["".join(m["content"] for m in r.body["messages"]) for r in judge_server.requests]
    assert any("Name a colour." in text for text in sent)


def test_empty_answers_on_both_sides_of_a_pairwise_run_are_judged(run_cli, judge_server, write):
    old = [
        {"id": f"p{i}", "input": f"q{i}", "output": "" if i == 0 else f"old {i}"} for i in range(3)
    ]
    new = [{**row, "output": "" if row["id"] == "p2" else f"new {row['id']}"} for row in old]
    write("old.jsonl", "".join(json.dumps(r) + "\n" for r in old))
    write("new.jsonl", "".join(json.dumps(r) + "\n" for r in new))
    run = run_cli(judge_server, "pairwise", "old.jsonl", "new.jsonl", "--out", "run", "--json")
    assert run.exit_code == 0, run.stderr
    assert 'old.jsonl: 1 case has an empty "output" (judged as given)' in run.summary["warnings"]
    assert 'new.jsonl: 1 case has an empty "output" (judged as given)' in run.summary["warnings"]
    assert run.summary["n_ok"] == 3


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param("old.jsonl", "old.jsonl", id="the-same-path-twice"),
        pytest.param("old.jsonl", "./sub/../old.jsonl", id="two-paths-to-one-file"),
        pytest.param("old.jsonl", "copy.jsonl", id="a-copy"),
    ],
)
def test_pairwise_of_a_version_with_itself_warns(run_cli, judge_server, write, old, new):
    # Regression (review 2026-11-23, finding 21): it ran silently and reported 50.0%.
    rows = "".join(
        json.dumps({"id": f"p{i}", "input": f"q{i}", "output": f"a{i}"}) + "\n" for i in range(3)
    )
    write("old.jsonl", rows)
    write("copy.jsonl", rows)
    Path("sub").mkdir()
    run = run_cli(judge_server, "pairwise", old, new, "--out", "run", "--json")
    assert run.exit_code == 0, run.stderr
    assert any("compares a version with itself" in w for w in run.summary["warnings"])
