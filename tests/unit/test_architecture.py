"""The layout the package promises (docs/development.md#layout), read from the code's own
imports by tests/architecture.py: every room stands on a declared stage and imports only
from earlier ones, nothing imports in a circle (lazy and `if TYPE_CHECKING:` imports
included), stats/ is pure arithmetic at the ground, the simulator is a tool the judging code
never uses, only judge/ talks to LiteLLM, the judging commands share one spine, and each
package's face lists what is in it.
"""

from __future__ import annotations

import ast

import pytest

from tests.architecture import (
    MODULES,
    PACKAGE,
    STAGES,
    against_the_stages,
    arrows,
    circles,
    imports_of,
    module_graph,
    rooms,
)

GRAPH = module_graph()
RUNNING = module_graph(typing_too=False)
"""What each module imports when it runs (`if TYPE_CHECKING:` left out)."""


def test_every_room_stands_on_a_declared_stage():
    staged = set().union(*STAGES)
    assert rooms() - staged == set(), "add the new room to STAGES in tests/architecture.py"
    assert staged - rooms() - {"__main__"} == set(), "a stage names a room that is gone"


def test_no_import_runs_up_or_sideways_across_the_stages():
    # Issue 30: a stage imports only from the stages below it, type-only imports included.
    assert against_the_stages(arrows()) == []


def test_no_modules_import_each_other_in_a_circle():
    assert circles(GRAPH) == []


def test_the_package_root_keeps_only_the_words_every_stage_speaks():
    root = sorted(m for m in MODULES if m.count(".") == 1 and not (PACKAGE / m[9:]).is_dir())
    assert len(root) <= 12, root


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("judgecli.stats")))
def test_stats_imports_nothing_of_judgecli_outside_itself(module):
    outside = {m for m in imports_of(MODULES[module]) if m.startswith("judgecli")}
    outside -= {m for m in outside if m.startswith("judgecli.stats")}
    assert outside == set(), f"{module} imports {sorted(outside)}: stats/ must stay pure"


def test_only_the_cli_uses_the_simulator():
    users = {
        name
        for name, deps in GRAPH.items()
        if any(d.startswith("judgecli.simulator") for d in deps)
    }
    outside = {u for u in users if not u.startswith(("judgecli.simulator", "judgecli.cli"))}
    assert outside == set()


def test_only_the_judge_package_imports_litellm():
    users = {
        name
        for name, path in MODULES.items()
        if any(m == "litellm" or m.startswith("litellm.") for m in imports_of(path))
    }
    assert users <= {"judgecli.judge.provider"}


@pytest.mark.parametrize("command", ["score", "pairwise", "calibrate", "refine", "arena.run"])
def test_the_judging_commands_run_on_the_one_spine(command):
    # running/job.py owns opening the run, judging, the cascade and the summary's tail; a
    # command that reached for them itself would re-grow the accidental differences issue 14
    # removed. Issue 30: the arena too (it judged through judging.judge_all and concluded
    # by itself).
    deps = RUNNING[f"judgecli.commands.{command}"]
    assert "judgecli.running.job" in deps
    assert deps.isdisjoint(
        {
            "judgecli.running.run_dir",
            "judgecli.running.judging",
            "judgecli.running.fan_out",
            "judgecli.grading.cascade",
        }
    ), deps


def test_the_cli_makes_decisions_through_the_core_not_the_spines_parts():
    # A command module calls its core module and the spine; it never grades, cascades or
    # summarises by itself. It may read a summary (`summary.run` is the type it renders and
    # reads back) and compare two finished runs (`summary.compare`, `judge report A B`).
    forbidden = {"judgecli.running.fan_out", "judgecli.grading.grade", "judgecli.grading.cascade"}
    allowed = {"judgecli.summary.run", "judgecli.summary.compare"}
    for name, deps in RUNNING.items():
        if name.startswith("judgecli.cli."):
            used = {d for d in deps if d in forbidden or d.startswith("judgecli.summary")}
            assert used <= allowed, (name, used)


def members_named(docstring: str) -> set[str]:
    """The modules a package's face lists: the backquoted names that open its bullets
    (`- \\`a\\`, \\`b\\`: what they are`)."""
    named: set[str] = set()
    for line in docstring.splitlines():
        if not line.startswith("- `"):
            continue
        head = line[2:].split(":", 1)[0]
        named.update(part.strip().strip("`") for part in head.split(",") if "`" in part)
    return named


PACKAGES = sorted(p for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE)


@pytest.mark.parametrize("face", PACKAGES, ids=lambda p: str(p.parent.relative_to(PACKAGE)))
def test_each_package_face_lists_what_is_in_its_folder(face):
    # Issue 30: a face whose list has drifted tells a newcomer of modules that are gone and
    # hides the new ones (httpx pins its exported members the same way).
    folder = face.parent
    present = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    present |= {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    docstring = ast.get_docstring(ast.parse(face.read_text(encoding="utf-8"))) or ""
    assert members_named(docstring) == present
