"""What to run after a run lost too many cases: `judge resume RUN --retry-failed`, with the
setting raised that made its cases fail (a reply cut off at --max-tokens, calls that timed
out, retries used up). Retrying with the same settings fails the same way.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from judgecli.settings.config import DEFAULT_MAX_RETRIES, DEFAULT_MAX_TOKENS, DEFAULT_TIMEOUT_S

# The words each failure is recorded with (asking.cut_off, judge/client.py, judge/failures.py).
CUT_OFF = re.compile(r"cut off at --max-tokens (\d+)")
TIMED_OUT = re.compile(r"\b\w*Timeout\w*\b|timed out", re.IGNORECASE)
USED_UP = re.compile(r"\((?:gave up )?after (\d+) (?:replies|attempts)\)")


def retry_hint(run_dir: Path, errors: Sequence[str]) -> str:
    """`continue with: judge resume RUN --retry-failed`, with the setting raised that the
    failures' errors point at, and why (before the command, so the line ends with it).
    """
    command = f"judge resume {shlex.quote(str(run_dir))} --retry-failed"
    raised = raised_setting(errors, timeout_s=recorded_timeout(run_dir))
    if raised is None:
        return f"continue with: {command}"
    flag, why = raised
    return f"{why}; continue with: {command} {flag}"


def recorded_timeout(run_dir: Path) -> float | None:
    """The --timeout the run was made with (run.json), or None when it cannot be read."""
    from judgecli.errors import InputError
    from judgecli.store import read_run_info

    try:
        value = read_run_info(run_dir, hint="").get("config", {}).get("timeout_s")
    except InputError:
        return None
    return float(value) if isinstance(value, int | float) else None


def raised_setting(errors: Sequence[str], *, timeout_s: float | None) -> tuple[str, str] | None:
    """The flag and value that would let the failed cases through, and why; None when the
    errors point at no setting (a server error, a judge that writes no verdict).
    """
    limits = [int(match.group(1)) for error in errors if (match := CUT_OFF.search(error))]
    if limits:
        limit = max(limits)
        raised = max(2 * limit, DEFAULT_MAX_TOKENS)
        return f"--max-tokens {raised}", f"replies were cut off at --max-tokens {limit}"
    if any(TIMED_OUT.search(error) for error in errors):
        now = timeout_s or DEFAULT_TIMEOUT_S
        return f"--timeout {2 * now:g}", f"calls timed out after {now:g} s"
    tries = [int(match.group(1)) for error in errors if (match := USED_UP.search(error))]
    if tries:
        retries = max(max(tries) - 1, DEFAULT_MAX_RETRIES)
        return f"--max-retries {2 * retries}", f"cases failed after {max(tries)} tries"
    return None
