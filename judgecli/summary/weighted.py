"""--score-mode logprob: the headline rate weighed by the judge's token probabilities, beside
the rate of its written verdicts → summary.json's `win_rate_weighted` (pairwise: the mean
over cases of P(new) + ½ P(tie), AlpacaEval 2's weighted annotator) and `pass_rate_weighted`
(binary: the mean P(passing choice)), each with a Student t interval over cases (Wilson's
when t has none: `interval_rule.rate_interval`).

A case's probabilities are already the mean over its judgements (both orders, a panel,
repeats): one value per case, so the interval is over cases.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judgecli.result import CaseResult, CaseStatus
from judgecli.stats.interval_rule import rate_interval
from judgecli.stats.scores import mean


def win_rate_weighted(rows: Sequence[CaseResult]) -> dict[str, Any]:
    """`win_rate_weighted` and its interval; nothing without probabilities."""
    weighed = [r.probabilities for r in rows if r.status is CaseStatus.OK and r.probabilities]
    if not weighed:
        return {}
    values = [p.get("new", 0.0) + 0.5 * p.get("tie", 0.0) for p in weighed]
    return {"win_rate_weighted": mean(values), "win_rate_weighted_ci": rate_interval(values)}


def pass_rate_weighted(rows: Sequence[CaseResult], passing: str | None) -> dict[str, Any]:
    """`pass_rate_weighted` (a binary rubric's) and its interval; nothing without."""
    weighed = [r.probabilities for r in rows if r.status is CaseStatus.OK and r.probabilities]
    if passing is None or not weighed:
        return {}
    values = [p.get(passing, 0.0) for p in weighed]
    return {"pass_rate_weighted": mean(values), "pass_rate_weighted_ci": rate_interval(values)}
