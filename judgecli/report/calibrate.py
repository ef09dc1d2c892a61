"""The report of a `calibrate` run: its headline numbers and its tables (judge–human beside
human–human, the confusion matrix, per class, calibration of stated confidence, per order).
"""

from __future__ import annotations

from judgecli.report.cells import NA, Section, fmt, fmt_ci, fmt_pct, reason_for
from judgecli.summary.calibrate import CalibrateSummary


def calibrate_line(s: CalibrateSummary) -> str:
    """Judge against human: accuracy and κ, or correlations when there are no categories."""
    if s.accuracy is None:  # scores off the whole points (means of raters): correlations
        rho, r = fmt(s.spearman), fmt(s.pearson)
        return f"judge vs human on {s.n_labels} labels: Spearman ρ {rho}, Pearson r {r}"
    weighted = s.weighted_kappa is not None
    kappa = "weighted κ" if weighted else "κ"
    value = s.weighted_kappa if weighted else s.cohen_kappa
    ci = s.weighted_kappa_ci if weighted else s.cohen_kappa_ci
    # κ without a value has no interval to speak of; one with a value but none says so.
    interval = "" if value is None else f" {fmt_ci(ci)}"
    if interval == f" {NA}":
        interval = " (no interval: see the agreement table)"
    return (
        f"judge vs human on {s.n_labels} labels: accuracy {fmt_pct(s.accuracy)} "
        f"{fmt_ci(s.accuracy_ci, pct=True)}, {kappa} {fmt(value)}{interval}"
    )


CALIBRATE_MEASURES = [
    # (the measure's field in CalibrateSummary and AgreementSummary, its interval's, label,
    # shown as a percentage)
    ("accuracy", "accuracy_ci", "accuracy (exact)", True),
    ("within_one", "within_one_ci", "within ±1", True),
    ("agreement_with_ties", "agreement_with_ties_ci", "agreement with ties", True),
    ("agreement_without_ties", "agreement_without_ties_ci", "agreement without ties", True),
    ("cohen_kappa", "cohen_kappa_ci", "Cohen's κ", False),
    ("weighted_kappa", "weighted_kappa_ci", "quadratic-weighted κ", False),
    ("krippendorff_alpha", None, "Krippendorff's α", False),
    ("spearman", "spearman_ci", "Spearman ρ", False),
    ("kendall", "kendall_ci", "Kendall τ-b", False),
    ("pearson", "pearson_ci", "Pearson r", False),
    ("macro_f1", None, "macro F1", False),
]
# A measure the run computed without a value gets an n/a row, but accuracy and the κs get
# none: so report.md has always had it. summary.json leaves out what has no value, so the
# report of a summary read back (`judge report`) has no row for any of them.
NO_NA_ROW = {"accuracy", "cohen_kappa", "weighted_kappa"}


def calibrate_sections(s: CalibrateSummary) -> list[Section]:
    """The tables of a `calibrate` run: judge–human beside human–human, confusion matrix,
    per class, calibration of stated confidence, per-order accuracy.
    """
    hh, jm = s.human_human, s.judge_vs_majority
    header = ["measure", "judge–human", "95% CI"]
    if hh:
        header += ["human–human", "judge–majority"]
    rows = []
    for key, ci_key, name, pct in CALIBRATE_MEASURES:
        value = getattr(s, key)
        if value is None and (key in NO_NA_ROW or key not in s.model_fields_set):
            continue
        show = fmt_pct if pct else fmt
        ci = NA
        if ci_key:
            ci = fmt_ci(getattr(s, ci_key), pct=pct, why=reason_for(s.no_interval, key))
        row = [name, show(value), ci]
        if hh:
            row += [show(getattr(hh, key)), show(getattr(jm, key) if jm else None)]
        rows.append(tuple(row))
    labels_row = ["labels (pairs)", str(s.n_labels), ""]
    if hh:
        labels_row += [str(hh.n_labels), str(jm.n_labels if jm else None)]
    rows.insert(0, tuple(labels_row))
    out = [Section("agreement", header, rows)]
    if s.confusion is not None:
        labels = s.confusion.labels
        matrix = zip(labels, s.confusion.matrix, strict=True)
        out.append(
            Section(
                "confusion (rows: human, columns: judge)",
                ["human \\ judge", *labels],
                [(label, *(str(n) for n in row)) for label, row in matrix],
            )
        )
    if s.per_class:
        out.append(
            Section(
                "per class",
                ["label", "precision", "recall", "F1", "support"],
                [
                    (label, fmt(c.precision), fmt(c.recall), fmt(c.f1), str(c.support))
                    for label, c in s.per_class.items()
                ],
            )
        )
    if s.ece is not None:
        out += confidence_sections(s)
    if s.by_order:
        out.append(
            Section(
                "accuracy by order",
                ["judge", "old-new", "new-old", "mean"],
                [
                    (
                        m,
                        fmt_pct(o.get("old-new")),
                        fmt_pct(o.get("new-old")),
                        fmt_pct(o.get("mean")),
                    )
                    for m, o in s.by_order.items()
                ],
            )
        )
    return out


def confidence_sections(s: CalibrateSummary) -> list[Section]:
    """Calibration of the judge's stated confidence: ECE, Brier, the reliability table."""
    return [
        Section(
            "calibration of stated confidence",
            ["measure", "value"],
            [
                ("expected calibration error (equal width)", fmt(s.ece, 3)),
                ("expected calibration error (equal mass)", fmt(s.ece_equal_mass, 3)),
                ("Brier score", fmt(s.brier, 3)),
                ("judgements with a confidence", str(s.n_confidence)),
            ],
        ),
        Section(
            "reliability",
            ["bin", "mean confidence", "accuracy", "count"],
            [
                (f"{b.low:.2f}–{b.high:.2f}", fmt(b.mean_confidence), fmt(b.accuracy), str(b.count))
                for b in s.reliability or []
            ],
        ),
    ]
