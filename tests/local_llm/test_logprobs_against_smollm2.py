"""--score-mode logprob against a real server's real logprobs: llama-cpp-python's server
returns OpenAI's `choices[0].logprobs.content` with `top_logprobs`, its tokens cut by a real
tokenizer (SmolLM2's writes the score as " " then "4"), its alternatives unconstrained by
the grammar that forced the reply (a "6" on a 1-4 scale, a "." after the score).

What a 135M model says varies by machine; what holds whatever it says: every judgement
with a verdict has an expected score within the scale, from probabilities over the scale's
points that sum to 1 and include the point it wrote — and none has a verdict without them
(no silent fallback to the sampled score).
"""

from __future__ import annotations

import pytest

from tests.local_llm.server import LlamaServer
from tests.local_llm.test_cli_against_smollm2 import (
    DATASETS,
    assert_exit_code,
    assert_failed_cases_explained,
    assert_no_crash,
    judge,
    read_jsonl,
    rubric,
    subset,
)

pytestmark = pytest.mark.local_llm

CASES = 6


def test_a_logprob_score_run_gets_expected_scores_within_the_scale(
    llama_server: LlamaServer, tmp_path
):
    helpfulness = rubric("helpfulness")
    assert helpfulness.scale is not None
    source = DATASETS / "helpfulness.jsonl"
    ids = [row["id"] for row in read_jsonl(source)[:CASES]]
    data = subset(source, ids, tmp_path / "cases.jsonl")
    args = ["score", str(data), "--rubric", "helpfulness", "--score-mode", "logprob"]
    run = judge(llama_server, tmp_path, *args)
    assert_no_crash(run, llama_server)
    assert_exit_code(run, CASES)
    assert_failed_cases_explained(run)
    points = {str(p) for p in range(int(helpfulness.scale.min), int(helpfulness.scale.max) + 1)}
    weighed = [j for r in run.results() for j in r["judgements"] if j.get("verdict")]
    assert weighed, run.explain()
    for judgement in weighed:
        expected, probabilities = judgement["score_expected"], judgement["probabilities"]
        assert helpfulness.scale.min <= expected <= helpfulness.scale.max, judgement
        assert set(probabilities) <= points, judgement
        assert sum(probabilities.values()) == pytest.approx(1, abs=1e-5), judgement
        assert str(int(judgement["verdict"]["score"])) in probabilities, judgement
