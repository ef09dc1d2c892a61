"""A judge with known biases toward `judge probe`'s perturbed answers (docs/probe.md):
`--padding-bias P` prefers an answer padded with filler (`grading.perturb.pad`) with
probability P, `--verbosity-bias P` one restated at twice its length (`restate`), whatever
the true gap between the answers.

The simulator reads a perturbed answer through its perturbation (`perturb.unwrap`): the
verdict is the one the plain pair gets (so the filler's words do not move the seeded noise),
unless the bias draw says the judge prefers the longer wording. The draw is keyed on the
pair's plain texts, not on their order: both orders of one perturbed pair draw alike, so the
probe's flip rate on position-debiased verdicts is P (a known answer for the tests).

`--self-bias P` with `--self-answers FILE` (JSONL rows with `output` and `generator` or
`model`: OLD and NEW themselves) plays self-preference: a judge shown a pair with exactly one
answer whose generator is of its own model family (`perturb.family` of the request's model)
prefers that answer with probability P, drawn alike in both orders.
"""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path
from typing import Any

from judgecli.errors import DatasetError
from judgecli.grading.perturb import Probe, family, unwrap
from judgecli.inputs.jsonl import iter_lines, parse_object
from judgecli.simulator.config import JudgeSettings
from judgecli.simulator.schema import find_schema
from judgecli.simulator.transcript import read_transcript
from judgecli.simulator.truth_runs import PairTruth
from judgecli.simulator.verdicts import Judgement, fill_schema


def probed_body(body: dict[str, Any]) -> tuple[dict[str, Any], Probe, str] | None:
    """A pairwise request with one perturbed answer: the request with the plain answer in
    its place, the perturbation, and the side ("A" or "B") it was on. None otherwise.
    """
    transcript = read_transcript(body.get("messages") or [])
    if not transcript.pairwise or transcript.output_a is None or transcript.output_b is None:
        return None
    for side, text in (("A", transcript.output_a), ("B", transcript.output_b)):
        probe, plain = unwrap(text)
        if probe is not None:
            messages = [
                {**m, "content": m["content"].replace(text, plain)}
                if isinstance(m, dict) and isinstance(m.get("content"), str)
                else m
                for m in body.get("messages") or []
            ]
            return {**body, "messages": messages}, probe, side
    return None


def preferring(body: dict[str, Any], side: str, *, seed: int) -> str:
    """The verdict JSON for `body` with `side` ("A" or "B") the winner."""
    transcript = read_transcript(body.get("messages") or [])
    preferred = Judgement(
        transcript=transcript,
        model=str(body.get("model", "")),
        seed=seed,
        pair_truth=PairTruth(winner="A" if side == "A" else "B", confidence=0.8),
    )
    return json.dumps(fill_schema(find_schema(body) or {}, preferred))


def drawn(seed: int, model: str, kind: str, a: str, b: str) -> float:
    """A draw keyed on the pair's texts whatever their order (both orders draw alike)."""
    first, second = sorted([a, b])
    return random.Random(f"{seed}\x1f{model}\x1f{kind}\x1f{first}\x1f{second}").random()


def probe_verdict(
    body: dict[str, Any], *, seed: int, judge: JudgeSettings
) -> tuple[dict[str, Any], str | None]:
    """The request to answer as usual (a perturbed answer read as its plain text) and, when
    a bias draw prefers the perturbed answer (or the judge's own family's), the verdict that
    says so (None: answer the request as usual).
    """
    model = str(body.get("model", ""))
    probed = probed_body(body)
    if probed is None:
        return body, self_verdict(body, seed=seed, judge=judge)
    plain_body, probe, side = probed
    bias = judge.padding_bias if probe is Probe.LENGTH else judge.verbosity_bias
    if find_schema(plain_body) is None or bias <= 0:
        return plain_body, None
    transcript = read_transcript(plain_body.get("messages") or [])
    a, b = transcript.output_a or "", transcript.output_b or ""
    if drawn(seed, model, probe.value, a, b) >= bias:
        return plain_body, None
    return plain_body, preferring(plain_body, side, seed=seed)


@functools.cache
def generators(paths: tuple[Path, ...]) -> dict[str, str]:
    """Each answer's generator in the --self-answers files (its `output` → `generator`,
    else `model`).
    """
    found: dict[str, str] = {}
    for path in paths:
        if not path.is_file():
            raise DatasetError(path, None, "no such file", hint="give --self-answers a JSONL file")
        for number, _, text in iter_lines(path):
            row = parse_object(path, number, text)
            by = row.get("generator") or row.get("model")
            if isinstance(row.get("output"), str) and isinstance(by, str):
                found[row["output"].strip()] = by
    return found


def self_verdict(body: dict[str, Any], *, seed: int, judge: JudgeSettings) -> str | None:
    """With --self-bias: the winner a judge gives its own family's answer when the draw
    says so; None to answer as usual.
    """
    if judge.self_bias <= 0 or not judge.self_answers or find_schema(body) is None:
        return None
    transcript = read_transcript(body.get("messages") or [])
    a, b = transcript.output_a, transcript.output_b
    if not transcript.pairwise or a is None or b is None:
        return None
    model = str(body.get("model", ""))
    known = generators(judge.self_answers)
    own = [
        side
        for side, text in (("A", a), ("B", b))
        if (by := known.get(text.strip())) is not None and family(by) == family(model)
    ]
    if len(own) != 1 or drawn(seed, model, "self", a, b) >= judge.self_bias:
        return None
    return preferring(body, own[0], seed=seed)
