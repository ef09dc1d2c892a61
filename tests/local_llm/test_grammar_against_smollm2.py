"""The verdict schemas under llama.cpp's own grammar (issue 29 §7).

llama-cpp-python's server makes a grammar of the schema judge sends, with its own converter
(`llama_cpp.llama_grammar`), and drops to any JSON when that converter fails; a keyword the
converter skips is no bound. Checked here with the converter itself: every schema judge can
send becomes a grammar with no unbounded number in it. Then end to end, SmolLM2-135M grading
the pairs of `datasets/old.jsonl` and `new.jsonl` with the pairwise rubric: it lost 2 of 8
when `confidence` was a number with `minimum`/`maximum` (it wrote 10).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from judgecli.grading.prompt import CONFIDENCE_POINTS
from judgecli.judge.formats import FormatMode
from judgecli.rubric import Rubric
from tests.local_llm.server import LlamaServer
from tests.local_llm.test_cli_against_smollm2 import DATASETS, assert_no_crash, judge
from tests.unit.grading.test_grammar_schemas import RUBRICS, sent_schemas

pytestmark = pytest.mark.local_llm

# The converter's rules for a number it does not bound (its PRIMITIVE_RULES): present in a
# grammar only when some numeric field is not an enum.
UNBOUNDED_NUMBER = re.compile(r"^(number|integer|integral-part|decimal-part) ::=", re.MULTILINE)
PAIRS = 8
GRADED_AT_LEAST = 7


@pytest.mark.parametrize("rubric", RUBRICS)
def test_llama_cpps_converter_bounds_every_number_of_every_verdict_schema(rubric: Rubric):
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    schema = sent_schemas(rubric)[FormatMode.JSON_OBJECT_SCHEMA.value]
    # Raises where the server would fall back to unconstrained JSON.
    grammar = json_schema_to_gbnf(json.dumps(schema))
    assert UNBOUNDED_NUMBER.findall(grammar) == [], grammar
    if rubric.confidence:
        rule = re.search(r"^confidence ::= (.*)$", grammar, re.MULTILINE)
        assert rule is not None, grammar
        literals = re.findall(r'"([^"]*)"', rule.group(1))
        assert literals == [json.dumps(point) for point in CONFIDENCE_POINTS]


# Issue 29: SmolLM2 wrote "confidence": 10 under minimum/maximum and lost 2 of 8 pairs.
def test_pairwise_grades_at_least_7_of_8_pairs_of_the_example_data(
    llama_server: LlamaServer, tmp_path
):
    run = judge(
        llama_server,
        tmp_path,
        "pairwise",
        str(DATASETS / "old.jsonl"),
        str(DATASETS / "new.jsonl"),
        "--rubric",
        "pairwise",
        "--limit",
        str(PAIRS),
        # Every pair is tried: the default 5% would stop at the first failure.
        "--max-failures",
        "50%",
        max_tokens=None,  # the rubric's own 700, as the command ran
        concurrency=1,
    )
    assert_no_crash(run, llama_server)
    results = run.results()
    graded = [r for r in results if r["status"] == "ok"]
    failed = {r["id"]: r.get("error") for r in results if r["status"] != "ok"}
    assert len(results) == PAIRS, run.explain()
    assert len(graded) >= GRADED_AT_LEAST, f"graded {len(graded)} of {PAIRS}: {failed}"
    verdicts: list[dict[str, Any]] = [
        j["verdict"] for r in results for j in r["judgements"] if j.get("verdict") is not None
    ]
    # Every order of every graded pair has a verdict, and each confidence is one of the
    # steps the grammar allowed: a number in 0..1 as results.jsonl has always held it.
    assert len(verdicts) >= 2 * len(graded)
    for verdict in verdicts:
        assert verdict["confidence"] in CONFIDENCE_POINTS, verdict
        assert verdict["winner"] in {"A", "B", "tie"}, verdict
