"""judge: grade LLM outputs with LLM judges.

The command line is `judge` (judgecli.startup). From Python, the same engine (docs/api.md):

    from judgecli import Judge, guard, score_dataset

The public names below are imported on first use (PEP 562), so `import judgecli` and
`judge --help` load none of the engine. Type checkers read them from `__init__.pyi`, which
imports each from its module (tests/unit/api/test_public.py keeps the two in step).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

__all__ = [
    "AsyncGuard",
    "Attempt",
    "Case",
    "CaseResult",
    "Comparison",
    "Guard",
    "GuardResult",
    "Judge",
    "Judgement",
    "Rubric",
    "Run",
    "Usage",
    "Verdict",
    "Winner",
    "align_rubric",
    "calibrate_judge",
    "compare_datasets",
    "errors",
    "guard",
    "load_rubric",
    "probe_judge",
    "qualify_judge",
    "refine_dataset",
    "run_arena",
    "score_dataset",
]

WHERE = {
    "AsyncGuard": "judgecli.api.guard",
    "Attempt": "judgecli.api.guarded",
    "Case": "judgecli.inputs.dataset",
    "CaseResult": "judgecli.result",
    "Comparison": "judgecli.api.verdicts",
    "Guard": "judgecli.api.guard",
    "GuardResult": "judgecli.api.guarded",
    "Judge": "judgecli.api.judge",
    "Judgement": "judgecli.result",
    "Rubric": "judgecli.rubric",
    "Run": "judgecli.api.runs",
    "Usage": "judgecli.api.verdicts",
    "Verdict": "judgecli.api.verdicts",
    "Winner": "judgecli.result",
    "align_rubric": "judgecli.api.aligning",
    "calibrate_judge": "judgecli.api.calibration",
    "compare_datasets": "judgecli.api.jobs",
    "guard": "judgecli.api.guard",
    "load_rubric": "judgecli.api.rubrics",
    "probe_judge": "judgecli.api.probing",
    "qualify_judge": "judgecli.api.qualifying",
    "refine_dataset": "judgecli.api.refining",
    "run_arena": "judgecli.api.arena",
    "score_dataset": "judgecli.api.jobs",
}
"""The module each public name lives in (`errors` is the submodule itself)."""


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use."""
    if name == "errors":
        return importlib.import_module("judgecli.errors")
    if name not in WHERE:
        raise AttributeError(f"module 'judgecli' has no attribute {name!r}")
    value = getattr(importlib.import_module(WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
