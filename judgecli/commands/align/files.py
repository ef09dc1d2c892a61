"""The files of an align run directory: split.json (first, before any call), rubric.yaml
(the kept rubric with its provenance), test-labels.jsonl (the sealed test's labels, for
`--labels`), summary.json and report.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from judgecli.commands.align.candidates import Candidate
from judgecli.commands.align.split import Split
from judgecli.errors import RunDirectoryError
from judgecli.inputs.labels import Label
from judgecli.inputs.rubric_file import load_rubric
from judgecli.report.align import align_markdown
from judgecli.rubric import Rubric
from judgecli.summary.align import AlignSummary

SPLIT_FILE = "split.json"
RUBRIC_FILE = "rubric.yaml"
TEST_LABELS = "test-labels.jsonl"


def check_out(out: Path, *, replace: bool) -> None:
    """Refuse (exit 2) a directory that already holds an align run, unless --force."""
    if (out / SPLIT_FILE).exists() and not replace:
        raise RunDirectoryError(
            f"{out}: already holds an align run ({SPLIT_FILE})",
            hint="pick another --out, or add --force to start it over",
        )


def write_split(out: Path, split: Split, *, test_share: float, seed: int) -> None:
    """split.json, written before anything is judged."""
    out.mkdir(parents=True, exist_ok=True)
    record = {
        "train": split.train,
        "test": split.test,
        "test_hash": split.test_hash,
        "test_share": test_share,
        "seed": seed,
    }
    (out / SPLIT_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


class BlockDumper(yaml.SafeDumper):
    """YAML with multi-line strings as literal blocks (a prompt reads as written)."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


BlockDumper.add_representer(str, _text)


def provenance(s: AlignSummary) -> list[str]:
    """rubric.yaml's comment lines: where the rubric came from and what it measured."""

    def pair(metric: str) -> str:
        before, after = s.baseline[metric], s.aligned[metric]
        shown = ["n/a" if v is None else f"{v:.3f}" for v in (before, after)]
        return f"{metric} {shown[0]} -> {shown[1]}"

    cv = ", ".join(f"{m} {'n/a' if v is None else f'{v:.3f}'}" for m, v in s.cv_accuracy.items())
    return [
        f"judge align: {s.decision.value}; kept the {s.kept} ({s.method} chosen on train)",
        f"labels sha256 {s.labels_hash}",
        f"split: {len(s.split.train)} train, {len(s.split.test)} test, test_hash "
        f"{s.split.test_hash}, seed {s.seed}, test share {s.split.test_share:g}",
        f"models: judge {s.model}, optimizer {s.optimizer_model or '-'}",
        f"train cv accuracy: {cv}",
        "sealed test: " + ", ".join(pair(m) for m in s.baseline),
    ]


def write_run(
    out: Path,
    base_ref: str,
    base: Rubric,
    summary: AlignSummary,
    kept: Candidate,
    rows: list[Label],
) -> AlignSummary:
    """rubric.yaml (with its provenance), test-labels.jsonl, summary.json, report.md; the
    summary with `aligned_rubric_hash` the hash of rubric.yaml as judge reads it back.
    """
    ref = base_ref
    if not Path(ref).is_absolute() and Path(ref).exists():
        ref = str(Path(ref).resolve())
    mapping = yaml.dump(
        kept.overlay(ref, base), Dumper=BlockDumper, sort_keys=False, allow_unicode=True, width=100
    )
    header = "".join(f"# {line}\n" for line in provenance(summary))
    (out / RUBRIC_FILE).write_text(header + mapping, encoding="utf-8")
    written = load_rubric(out / RUBRIC_FILE).content_hash
    summary = summary.model_copy(update={"aligned_rubric_hash": written})
    lines = []
    for r in rows:
        row: dict[str, object] = {"id": r.id, "label": r.value}
        if r.annotator:
            row["annotator"] = r.annotator
        lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    (out / TEST_LABELS).write_text("".join(lines), encoding="utf-8")
    (out / "summary.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    report = align_markdown(
        summary, rubric_file=str(out / RUBRIC_FILE), labels_file=str(out / TEST_LABELS)
    )
    (out / "report.md").write_text(report, encoding="utf-8")
    return summary
