"""Every `judge ...` command in a code block of README.md or docs/*.md is one the CLI takes,
and the ones that can run offline run against the simulator.

Issue 29 (review 2026-11-27, finding 18): docs/usage.md and docs/tiered.md showed
`--escalate "failed or confidence < 0.8 or score in [2, 3]"` with the helpfulness rubric,
which asks for no confidence: exit 2 as written.

Three checks, from the cheapest:
- every command names a command that exists and only flags that command has (synopsis
  lines such as `judge report RUN [--html]` included, brackets read as optional parts);
- every concrete command (no placeholders) parses: its values convert and its required
  arguments are there, as the CLI would parse them, without running it;
- every concrete `score`, `pairwise`, `calibrate` and `arena` command whose files the
  repository has (or has a stand-in for: `old.jsonl` is datasets/old.jsonl, `cases.jsonl`
  datasets/example.jsonl, ...) runs against the simulator, its judges replaced by simulated
  ones, and exits 0 or 1: never 2 (the docs asked for something the CLI refuses) or 3.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer

from judgecli.cli.main import app
from judgecli.inputs.rubric_file import load_rubric
from judgecli.inputs.rubric_library import find_rubric
from tests.integration.conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

# Where a command starts on a line of a code block: at its start (after a `$ ` prompt, or a
# YAML `- ` or `run: `), or after a pipe, `&&` or `;`.
STARTS = re.compile(r"^(?:\$ |- run: |- |run: )?(judge\s.*)$")
AFTER = re.compile(r"\s(?:\||&&|;)\s+(judge\s.*)$")
ENDS = {"|", "&&", ";", ">", "2>", ">>"}
# A synopsis, not a command: optional parts, alternatives, repetition, <placeholders>.
SYNOPSIS = re.compile(r"[\[\]<>]|\.\.\.|\w\|\w")

# The repository's files that stand in for the names the docs use.
STAND_INS = {
    "old.jsonl": "datasets/old.jsonl",
    "new.jsonl": "datasets/new.jsonl",
    "cases.jsonl": "datasets/example.jsonl",
    "data.jsonl": "datasets/example.jsonl",
    "labels.jsonl": "datasets/labels.jsonl",
    "a.jsonl": "datasets/old.jsonl",
    "b.jsonl": "datasets/new.jsonl",
    "c.jsonl": "datasets/regressed.jsonl",
    "v1.jsonl": "datasets/old.jsonl",
    "v2.jsonl": "datasets/new.jsonl",
    "v3.jsonl": "datasets/regressed.jsonl",
}
RUNNABLE = {"score", "pairwise", "calibrate", "arena"}
# Flags that take the run elsewhere: other processes, a provider batch, a resumed run.
NOT_OFFLINE = {"--batch", "--shard", "--workers", "--resume"}
FILE_SUFFIXES = (".jsonl", ".yaml", ".yml", ".json", ".gz")
LIMIT = 8
"""Cases a documented command judges here (when it takes --limit)."""


@dataclass(frozen=True)
class DocCommand:
    """One command as a page shows it."""

    where: str
    """`docs/usage.md:16`."""
    words: tuple[str, ...]
    """The words after `judge`."""

    @property
    def synopsis(self) -> bool:
        """Whether it is a synopsis (placeholders, optional parts) rather than a command.
        A quoted value with spaces is a value (`--escalate "score in [2, 3]"`).
        """
        return any(SYNOPSIS.search(w) and not re.search(r"\s", w) for w in self.words)


def command_texts(lines: list[str]) -> Iterator[tuple[int, str]]:
    """(line number, text) of each `judge` command in the code blocks of a page's lines,
    continuation lines joined.
    """
    in_block, pending, start = False, "", 0
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if text.startswith("```"):
            in_block, pending = not in_block, ""
            continue
        if not in_block:
            continue
        if pending:
            pending += " " + text.removesuffix("\\")
            if not text.endswith("\\"):
                yield start, pending
                pending = ""
            continue
        found = STARTS.match(text) or AFTER.search(text)
        if found is None:
            continue
        command = found.group(1)
        if command.endswith("\\"):
            pending, start = command.removesuffix("\\"), number
        else:
            yield number, command


def doc_commands() -> list[DocCommand]:
    """Every `judge` command of README.md and docs/*.md."""
    found = []
    for page in DOCS:
        lines = page.read_text(encoding="utf-8").splitlines()
        for number, text in command_texts(lines):
            words = shlex.split(text, comments=True)[1:]
            cut = next((i for i, w in enumerate(words) if w in ENDS), len(words))
            where = f"{page.relative_to(REPO)}:{number}"
            found.append(DocCommand(where, tuple(words[:cut])))
    return found


COMMANDS = doc_commands()
CONCRETE = [c for c in COMMANDS if not c.synopsis]
CLI: Any = typer.main.get_command(app)


def ids(command: DocCommand) -> str:
    return command.where


def resolve(words: tuple[str, ...]) -> tuple[Any, list[str], list[str]]:
    """(the command the words name, its path of names, the words left for it)."""
    command, names, rest = CLI, [], list(words)
    while getattr(command, "commands", None):
        assert rest, f"`judge {' '.join(names)}` needs a subcommand"
        name, rest = rest[0], rest[1:]
        assert name in command.commands, f"`judge {' '.join([*names, name])}`: no such command"
        command, names = command.commands[name], [*names, name]
    return command, names, rest


def flags_of(command: Any) -> set[str]:
    """Every spelling of every option of a command, --help included."""
    return {
        spelling
        for param in command.get_params(CLI.context_class(command))
        for spelling in (*param.opts, *param.secondary_opts)
        if spelling.startswith("-")
    }


def found_in(page: str, *words: str) -> list[DocCommand]:
    """The commands of one page that start with `words`."""
    return [
        c for c in COMMANDS if c.where.startswith(f"{page}:") and c.words[: len(words)] == words
    ]


def test_the_docs_show_commands_and_the_extraction_finds_them():
    # A guard on the extraction itself: it finds the pages' commands, whole.
    assert len(COMMANDS) > 60
    (tiered, *_) = found_in("docs/tiered.md", "score", "data.jsonl", "--rubric", "helpfulness")
    assert tiered.words[-2] == "--escalate"  # the continuation line joined
    # After a pipe: `ssh other judge cache export - | judge cache import -`.
    assert found_in("docs/usage.md", "cache", "import", "-")
    # In a YAML workflow's `run: |` block.
    assert found_in("docs/ci.md", "pairwise", "old.jsonl", "new.jsonl")
    assert all(c.words for c in COMMANDS)


@pytest.mark.parametrize("command", COMMANDS, ids=ids)
def test_a_documented_command_names_a_command_and_flags_it_has(command):
    target, names, rest = resolve(command.words)
    flags = {w.split("=")[0].strip("[]") for w in rest if w.lstrip("[").startswith("--")}
    known = flags_of(target)
    if names == ["plan"] and rest and rest[0] in CLI.commands:
        # `judge plan COMMAND ARGS...` takes the planned command's flags too (issue 35).
        known |= flags_of(CLI.commands[rest[0]])
    unknown = flags - known
    assert not unknown, f"{command.where}: `judge {' '.join(names)}` has no {sorted(unknown)}"


@pytest.mark.parametrize("command", CONCRETE, ids=ids)
def test_a_documented_command_parses_as_written(command):
    target, names, rest = resolve(command.words)
    parent = CLI.context_class(CLI, info_name="judge")
    try:
        target.make_context(names[-1], rest, parent=parent)
    except typer.TyperException as error:
        pytest.fail(f"{command.where}: judge {shlex.join(command.words)}: {error}")


def runnable(command: DocCommand) -> bool:
    """A concrete judging command that needs no other process, batch or run, on files the
    repository has or has stand-ins for.
    """
    words = command.words
    if command.synopsis or words[0] not in RUNNABLE or NOT_OFFLINE & set(words):
        return False
    if any("$" in w for w in words):
        return False
    files = [w for w in words if w.endswith(FILE_SUFFIXES)]
    return all((REPO / f).is_file() or Path(f).name in STAND_INS for f in files)


RUNNABLE_COMMANDS = [c for c in CONCRETE if runnable(c)]


def simulated(words: tuple[str, ...], api_base: str) -> list[str]:
    """The command with each judge replaced by a simulated one (distinct judges stay
    distinct: a panel is still a panel) and the simulator as the endpoint.
    """
    judges: dict[str, str] = {}
    out: list[str] = []
    flag = None
    for word in words:
        if flag == "--model":
            word = judges.setdefault(word, f"openai/sim-{len(judges) + 1}")
        elif flag == "--screen":
            word = "openai/sim-mini"
        elif flag == "--api-base":
            word = api_base
        out.append(word)
        flag = word if word.startswith("--") else None
    if "--api-base" not in out:
        out += ["--api-base", api_base]
    if "--model" not in out:
        out += ["--model", "openai/sim-1"]
    return out


def cheap(argv: list[str]) -> list[str]:
    """The command on the first LIMIT cases, when it takes --limit and names none: every
    flag is still checked before the first call, and the run takes a fraction of the time.
    """
    target, _, _ = resolve(tuple(argv))
    if "--limit" in argv or "--limit" not in flags_of(target):
        return argv
    return [*argv, "--limit", str(LIMIT)]


def stand_in(name: str, words: tuple[str, ...]) -> Path:
    """The repository's file for a name the docs use. Cases are datasets/example.jsonl (the
    cases datasets/labels.jsonl labels) unless the command's library rubric requires a field
    they lack; then that rubric's own example, datasets/NAME.jsonl.
    """
    if name in {"cases.jsonl", "data.jsonl"} and "--rubric" in words:
        rubric = words[words.index("--rubric") + 1]
        own = REPO / "datasets" / f"{rubric}.jsonl"
        if own.is_file() and not has_fields(
            REPO / STAND_INS[name], load_rubric(find_rubric(rubric)).requires
        ):
            return own
    return REPO / STAND_INS[name]


def has_fields(cases: Path, fields: list[str]) -> bool:
    """Whether every case of a JSONL file has every one of `fields`."""
    rows = [json.loads(line) for line in cases.read_text(encoding="utf-8").splitlines() if line]
    return all(field in row for row in rows for field in fields)


def lay_out_files(words: tuple[str, ...], folder: Path) -> None:
    """Each file the command names, in `folder` at the path it names: the repository's own
    file, or its stand-in.
    """
    for word in words:
        if not word.endswith(FILE_SUFFIXES):
            continue
        source = REPO / word if (REPO / word).is_file() else stand_in(Path(word).name, words)
        (folder / word).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, folder / word)
        # Issue 32: the images a dataset's cases name are read from beside it.
        images = (folder / word).parent / "images"
        if (source.parent / "images").is_dir() and not images.exists():
            images.symlink_to(source.parent / "images")


def test_the_commands_that_can_run_offline_are_found():
    # The review's: the tiered examples, and the README's showcase.
    for page in ("docs/tiered.md", "docs/usage.md"):
        tiered = [c for c in found_in(page, "score") if "--escalate" in c.words]
        assert tiered
        assert set(tiered) <= set(RUNNABLE_COMMANDS)
    assert set(found_in("README.md", "pairwise", "datasets/old.jsonl")) <= set(RUNNABLE_COMMANDS)
    assert len(RUNNABLE_COMMANDS) >= 20


@pytest.mark.parametrize("command", RUNNABLE_COMMANDS, ids=ids)
def test_a_documented_command_runs_against_the_simulator(command, run_cli, judge_server, tmp_path):
    lay_out_files(command.words, tmp_path)
    argv = cheap(simulated(command.words, f"{judge_server.url}/v1"))
    run = run_cli(None, *argv)
    assert run.exit_code in {0, 1}, (
        f"{command.where}: judge {shlex.join(argv)} exited {run.exit_code}\n{run.stderr[-2000:]}"
    )


def readme_showcase() -> tuple[DocCommand, list[str]]:
    """The README's "What you get" command and the output it shows (its `… (...)` line, which
    stands for the tables left out, dropped).
    """
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("$ judge pairwise"))
    (command,) = [c for c in COMMANDS if c.where == f"README.md:{start + 1}"]
    shown = []
    for line in lines[start + 2 :]:
        if line.startswith("$ "):
            break
        if not line.lstrip().startswith("… ("):
            shown.append(line.rstrip())
    return command, shown


def test_the_readmes_showcase_prints_what_the_readme_shows(run_cli, judge_server):
    # Issue 29 (finding 24): the README left out the warning the same command prints.
    command, shown = readme_showcase()
    assert any(line.startswith("warning: answer length sways the judge") for line in shown)
    # As written: its judge is the simulator already; only the port is the test's.
    words = list(command.words)
    words[words.index("--api-base") + 1] = f"{judge_server.url}/v1"
    lay_out_files(command.words, Path.cwd())
    run = run_cli(None, *words)
    assert run.exit_code == 0, run.stderr
    printed = {line.rstrip() for line in (run.stdout + run.stderr).splitlines()}
    missing = [line for line in shown if line not in printed]
    assert not missing, "README.md shows lines the command does not print:\n" + "\n".join(missing)
