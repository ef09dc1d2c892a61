"""docs/pytest.md is true (issue 31): its project, built file by file as a reader follows the
page, runs against the simulator, each `pytest` command shown exits as its `# exit N` says
and prints the lines shown under it; its Python files pass `mypy --strict`.

A code block is a file of the project when its first line names one (`# test_facts.py`,
`# pyproject.toml`); a `console` block holds commands (`$ pytest ...  # exit N`) and, under
each, lines its output must hold in that order (whitespace runs read as one space, `*`
matching anything).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field

from tests.integration.conftest import REPO

pytest_plugins = ["pytester"]

PAGE = REPO / "docs" / "pytest.md"
DOCUMENTED = "http://127.0.0.1:8765/v1"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)
FILE = re.compile(r"# ([\w./-]+\.(?:py|toml))\n")
COMMAND = re.compile(r"\$ pytest(.*?)\s+# exit (\d)")


@dataclass
class Command:
    line: int
    args: list[str]
    exit: int
    shows: list[str] = field(default_factory=list)


def steps() -> list[tuple[int, str, str] | Command]:
    """The page's files (line, name, text) and commands, in the order a reader meets them."""
    text = PAGE.read_text(encoding="utf-8")
    found: list[tuple[int, str, str] | Command] = []
    for block in BLOCK.finditer(text):
        line = text[: block.start()].count("\n") + 1
        kind, body = block.groups()
        named = FILE.match(body)
        if named:
            found.append((line, named.group(1), body))
        elif kind == "console":
            for offset, row in enumerate(body.splitlines(), start=1):
                if (command := COMMAND.fullmatch(row)) is not None:
                    args = shlex.split(command.group(1))
                    found.append(Command(line + offset, args, int(command.group(2))))
                elif row.strip():
                    last = found[-1]
                    assert isinstance(last, Command), f"pytest.md:{line + offset}: output of what?"
                    last.shows.append(row)
    return found


def squeezed(line: str) -> str:
    return re.sub(r"\s+", " ", line.strip())


def pattern(shown: str) -> re.Pattern[str]:
    """A shown line as what it matches: itself, `*` standing for anything."""
    return re.compile(".*".join(re.escape(part) for part in squeezed(shown).split("*")))


def holds_in_order(output: list[str], shown: list[str]) -> list[str]:
    """The shown lines the output does not hold in that order (the first one missing and
    those after it)."""
    lines = [squeezed(line) for line in output]
    at = 0
    for n, want in enumerate(shown):
        found = next((i for i in range(at, len(lines)) if pattern(want).fullmatch(lines[i])), None)
        if found is None:
            return shown[n:]
        at = found + 1
    return []


def test_the_page_shows_each_part_of_the_plugin():
    commands = [s for s in steps() if isinstance(s, Command)]
    said = " ".join(" ".join(c.args) for c in commands)
    for flag in (
        "--judge-min-pass-rate",
        "--judge-on",
        "--judge-min-win-rate",
        "--judge-per-test",
        "-n",
    ):
        assert flag in said, flag
    assert {c.exit for c in commands} == {0, 1}


def test_every_command_of_the_page_does_what_it_shows(pytester, judge_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    for step in steps():
        if isinstance(step, Command):
            result = pytester.runpytest_subprocess(
                "-p", "no:cacheprovider", *step.args, timeout=600
            )
            where = f"docs/pytest.md:{step.line}"
            assert result.ret == step.exit, f"{where}\n{result.stdout.str()}"
            missing = holds_in_order(result.outlines, step.shows)
            assert not missing, f"{where}: not in the output:\n{missing}\n{result.stdout.str()}"
        else:
            _, name, text = step
            (pytester.path / name).write_text(
                text.replace(DOCUMENTED, f"{judge_server.url}/v1"), encoding="utf-8"
            )
    assert judge_server.requests, "the page's tests call the judge"


def test_the_pages_python_passes_mypy_strict(tmp_path):
    for step in steps():
        if not isinstance(step, Command) and step[1].endswith(".py"):
            (tmp_path / step[1]).write_text(step[2], encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent"]
        + [str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
