"""A run's report.md appended to a CI job's summary ($GITHUB_STEP_SUMMARY), as GitHub
Actions shows it: outside the run directory, a courtesy of CI the run does not depend on.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from judgecli.errors import JudgeWarning

# GitHub rejects a step summary over 1 MiB; stay well under it.
STEP_SUMMARY_MAX_BYTES = 512 * 1024


def append_step_summary(path: Path, report: str) -> None:
    """Append the report to $GITHUB_STEP_SUMMARY (truncated to stay under GitHub's limit).

    A path that cannot be written (a missing folder, a read-only or full file system) is a
    JudgeWarning, not an error: the job summary is a courtesy of CI, and the run, its
    reports and its exit code stand without it.
    """
    data = report.encode("utf-8")
    if len(data) > STEP_SUMMARY_MAX_BYTES:
        cut = data[:STEP_SUMMARY_MAX_BYTES].decode("utf-8", errors="ignore")
        report = cut + "\n\n_(report truncated; see report.md in the run directory)_\n"
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(report + "\n")
    except OSError as err:
        warnings.warn(
            JudgeWarning(
                f"cannot append the report to GITHUB_STEP_SUMMARY {path}: "
                f"{err.strerror or err}; the run and its reports are not affected"
            ),
            stacklevel=2,
        )
