"""report.md of a `judge align` run: baseline against aligned on the sealed test, the
decision, what was chosen on train, and the corrected number's next step.
"""

from __future__ import annotations

from judgecli.summary.align import AlignDecision, AlignSummary


def number(value: float | None) -> str:
    """A metric to three places, or n/a."""
    return "n/a" if value is None else f"{value:.3f}"


def align_markdown(summary: AlignSummary, *, rubric_file: str, labels_file: str) -> str:
    """The report as Markdown."""
    s = summary
    level = f"{s.confidence:.0%}"
    lines = [
        f"# judge align: {s.rubric}",
        "",
        f"**{s.decision.value}**: "
        + (
            f"the aligned rubric ({s.method}) agrees with people better on the sealed test "
            f"(the {level} interval of the κ gain excludes 0); use `{rubric_file}`."
            if s.decision is AlignDecision.BETTER
            else (
                "no method beat the baseline on train"
                if s.method == "baseline"
                else f"the {level} interval of the κ gain includes 0"
            )
            + f": keep the baseline rubric (`{rubric_file}` extends it unchanged)."
        ),
        "",
        f"Sealed test: {len(s.split.test)} cases ({s.n_test_labels} labels), never seen by "
        f"the choosing; train: {len(s.split.train)} cases. Test hash `{s.split.test_hash}`.",
        "",
        *(f"> warning: {w}\n" for w in s.warnings),
        "| metric | baseline | aligned | gain | gain interval |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for metric in s.baseline:
        low, high = s.gain_ci[metric]
        ci = "n/a" if low is None or high is None else f"[{low:+.3f}, {high:+.3f}]"
        gain = s.gain[metric]
        shown = "n/a" if gain is None else f"{gain:+.3f}"
        lines.append(
            f"| {metric} | {number(s.baseline[metric])} | {number(s.aligned[metric])} "
            f"| {shown} | {ci} |"
        )
    lines += [
        "",
        "## Chosen on train",
        "",
        f"{s.folds}-fold cross-validated accuracy on the train cases (the test took no part):",
        "",
        "| method | accuracy |",
        "| --- | ---: |",
        *(f"| {m} | {number(v)} |" for m, v in s.cv_accuracy.items()),
        "",
        f"Chosen: **{s.method}**"
        + (f" (pass_at {s.pass_at:g})" if s.pass_at is not None else "")
        + f". Judge `{s.model}`"
        + (f", optimizer `{s.optimizer_model}`." if s.optimizer_model else "."),
        "",
    ]
    if s.min_gain is not None:
        verdict = "passed" if s.passed else "failed"
        lines += [f"Gate `--min-gain {s.min_gain:g}` on the κ gain's lower bound: {verdict}.", ""]
    lines += [
        "## Correct what alignment could not fix",
        "",
        f"The sealed test's labels are in `{labels_file}`: score with the kept rubric and "
        "feed them to `--labels`, so the gated number is corrected (PPI++) for the judge's "
        "remaining error:",
        "",
        f"    judge score DATASET --rubric {rubric_file} --labels {labels_file} ...",
        "",
    ]
    return "\n".join(lines)
