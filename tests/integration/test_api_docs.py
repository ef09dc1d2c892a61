"""Every Python example of docs/api.md runs against the simulator and passes `mypy
--strict` (issue 31): the page shows what the API does, in code a typed project accepts.

The examples name the simulator as `judge simulate --port 8765` would serve it; each is run
with the test simulator's address in its place, in a folder where `datasets/` is the
repository's.
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys

import pytest

from tests.api_docs import BEGIN, PAGE
from tests.integration.conftest import REPO

DOCUMENTED = "http://127.0.0.1:8765/v1"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def examples() -> list[tuple[int, str]]:
    """(line, code) of each python block of the guide (above the rendered reference)."""
    guide = PAGE.read_text(encoding="utf-8").partition(BEGIN)[0]
    return [(guide[: m.start()].count("\n") + 1, m.group(1)) for m in BLOCK.finditer(guide)]


def test_the_page_has_examples_of_each_part():
    code = "\n".join(text for _, text in examples())
    names = ("Judge(", ".grade(", ".compare(", ".agrade(", "score_dataset(", "GradeError", "guard(")
    for name in names:
        assert name in code, name
    assert all(DOCUMENTED in text for _, text in examples() if "Judge(" in text)


@pytest.mark.parametrize(("line", "code"), examples(), ids=[f"api.md:{n}" for n, _ in examples()])
def test_an_example_runs_against_the_simulator(line, code, judge_server, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    (tmp_path / "datasets").symlink_to(REPO / "datasets")
    source = code.replace(DOCUMENTED, f"{judge_server.url}/v1")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, f"docs/api.md:{line}", "exec"), {"__name__": "__main__"})  # noqa: S102
    assert printed.getvalue().strip(), "an example shows what it does"
    assert judge_server.requests, "an example calls the judge"


def test_the_examples_pass_mypy_strict(tmp_path):
    for line, code in examples():
        (tmp_path / f"example_{line}.py").write_text(code, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
