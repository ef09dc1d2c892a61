"""A run's results → the fields every summary starts with: what ran, how many cases ended
how, what the calls cost (`usage`), the first failures, and with --repeats the judge's
stability. Each command's summary adds its own numbers to these.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from judgecli.result import CaseResult, CaseStatus, natural_key
from judgecli.rubric import Rubric
from judgecli.summary.facts import FAILURES_LISTED, FailedCase, UnfinishedUsage, Usage
from judgecli.summary.stability import stability_fields
from judgecli.usage import COST_DIGITS, CallSpend, Tokens


def usage_of(results: list[CaseResult]) -> Usage:
    """Sum the calls, tokens and cost of every judgement; latency percentiles over calls."""
    usage = Usage()
    latencies: list[float] = []
    for result in results:
        for j in result.all_judgements:
            usage.calls += j.attempts
            usage.retries += j.retries
            usage.cached += j.cached
            usage.batched += j.batched or 0
            usage.add_tokens(j)
            if j.attempts and not j.cached:
                latencies.append(j.latency_s / j.attempts)
    if latencies:
        p50, p95 = np.percentile(np.asarray(latencies), [50, 95])
        usage.latency_p50_s, usage.latency_p95_s = float(p50), float(p95)
    usage.cost_usd = round(usage.cost_usd, COST_DIGITS)
    return usage


def with_unfinished(usage: Usage, unfinished: CallSpend) -> Usage:
    """The usage with the calls of unfinished cases (from run.json) added to its totals and
    listed apart as `unfinished`: so the totals are what the provider billed, though no
    result line holds those calls (a resumed case whose reply a stopped session cached
    counts it as cached).
    """
    if not unfinished.calls:
        return usage
    spent = unfinished.rounded()
    totals = Tokens(**usage.token_fields())
    totals.add_tokens(spent)
    return usage.model_copy(
        update={
            "calls": usage.calls + unfinished.calls,
            **totals.rounded().token_fields(),
            "unfinished": UnfinishedUsage(calls=unfinished.calls, **spent.token_fields()),
        }
    )


def run_facts(
    rows: list[CaseResult], *, rubric: Rubric | None, models: list[str]
) -> dict[str, Any]:
    """The head's fields but `command` (each summary's own), and the failures: keyword
    arguments for a summary model. Without a rubric (calibrating a results file) its fields
    are left for the caller.
    """
    failed = [r for r in rows if r.status is CaseStatus.FAILED]
    return {
        "rubric": rubric.name if rubric else "",
        "rubric_version": rubric.version if rubric else "",
        "rubric_hash": rubric.content_hash if rubric else "",
        "models": models,
        "n_cases": len(rows),
        "n_ok": len(rows) - len(failed),
        "n_failed": len(failed),
        "usage": usage_of(rows),
        **stability_fields(rows, rubric),
        "failures": [
            FailedCase(id=r.id, error=r.error or "")
            for r in sorted(failed, key=lambda r: natural_key(r.id))[:FAILURES_LISTED]
        ],
    }
