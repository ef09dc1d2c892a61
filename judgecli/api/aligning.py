"""`align_rubric`: a rubric shaped on human labels and proved on a sealed split, as `judge
align` does (docs/align.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgecli.api.jobs import offered
from judgecli.api.settings import read_settings
from judgecli.commands.align import LEFT_OUT
from judgecli.commands.outcome import exit_code
from judgecli.errors import ExitCode

if TYPE_CHECKING:
    from judgecli.rubric import Rubric
    from judgecli.summary.align import AlignSummary


@dataclass(frozen=True)
class AlignedRun:
    """A finished `align_rubric`: its summary (summary.json, typed) and its directory."""

    summary: AlignSummary
    """summary.json as its model (`summary.decision`, `summary.gain_ci`, ...)."""
    run_dir: Path
    """The run directory: split.json, rubric.yaml, test-labels.jsonl, summary.json, report.md."""

    @property
    def exit_code(self) -> ExitCode:
        """What the command line would exit with: 1 when `min_gain` was not met, else 0."""
        return exit_code(self.summary)

    @property
    def passed(self) -> bool:
        """Whether `min_gain` (if any) was met: exit code 0."""
        return self.exit_code is ExitCode.OK

    @property
    def rubric(self) -> Path:
        """RUN_DIR/rubric.yaml: the rubric to use (the aligned one, or the baseline kept)."""
        return self.run_dir / "rubric.yaml"


def align_rubric(
    rubric: str | Path | Rubric,
    *,
    dataset: str | Path,
    labels: str | Path,
    model: str | None = None,
    api_base: str | None = None,
    optimizer_model: str | None = None,
    test_share: float = 0.3,
    min_gain: float | None = None,
    folds: int = 3,
    out: str | Path | None = None,
    **settings: Any,
) -> AlignedRun:
    """Shape a binary (or pointwise, with `pass_at`) rubric on human labels and measure the
    gain on a sealed test split: `judge align`.

    Args:
        rubric: The rubric to shape (a library name, a file, or a Rubric).
        dataset: The labelled cases (a JSONL path; its ids are the labels').
        labels: The human labels (a path, as `judge calibrate` reads them).
        model: The judge (None: the rubric's).
        api_base: An OpenAI-compatible server's endpoint (the optimizer's too).
        optimizer_model: The model that proposes instruction revisions from the train
            disagreements (None: no revision candidate).
        test_share: The share of the cases sealed as the test.
        min_gain: The gate: the least lower bound of κ's gain (`exit_code` 1 below it).
        folds: Cross-validation folds on train.
        out: The run directory (None: a new runs/<UTC time>-align-<rubric>).
        **settings: The judging flags (no cascade, repeats, subsets or scale-out;
            `cache=False` turns the reply cache off).

    Returns:
        The finished run: `summary.decision`, `summary.gain`, `summary.gain_ci`,
        `summary.split`, ...; `rubric` is the rubric to use, `exit_code` the command
        line's.
    """
    from judgecli.api.loops import ENGINE
    from judgecli.commands.align.start import AlignAsk, run_align
    from judgecli.commands.setup import find_rubric_of

    read = read_settings(
        {"model": model, "api_base": api_base, "out": out, **settings},
        caller="align_rubric",
        flags=offered(LEFT_OUT),
        own=("rubric", "dataset", "labels", "optimizer_model", "test_share", "min_gain", "folds"),
    )
    ask = AlignAsk(
        dataset=Path(dataset),
        labels=Path(labels),
        optimizer_model=optimizer_model,
        test_share=test_share,
        min_gain=min_gain,
        folds=folds,
    )
    summary, run_dir = run_align(find_rubric_of(rubric), read.flags, ask, runner=ENGINE.run)
    return AlignedRun(summary=summary, run_dir=run_dir)
