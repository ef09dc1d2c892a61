"""The layout the package promises (issue 14), read from the code's own imports: stats/ is
pure arithmetic at the bottom of the house, nothing imports in a circle, the simulator is a
test and demo tool the judging code never uses, only judge/ talks to LiteLLM, and the
judging commands share one spine (job.py) rather than wiring the run themselves.

Imports are read with `ast`, both module-level and those inside functions (lazy imports
still tie modules together); `if TYPE_CHECKING:` blocks are left out, as they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "judgecli"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def type_checking_only(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Name | ast.Attribute)
        and "TYPE_CHECKING" in ast.unparse(node.test)
    )


def imported(path: Path) -> set[str]:
    """The judgecli modules (and third-party top-level names) a module imports."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if type_checking_only(node):
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in MODULES else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


GRAPH = {
    name: {m for m in imported(path) if m in MODULES and m != name}
    for name, path in MODULES.items()
}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("judgecli.stats")))
def test_stats_imports_nothing_of_judgecli_outside_itself(module):
    outside = {m for m in imported(MODULES[module]) if m.startswith("judgecli")}
    outside -= {m for m in outside if m.startswith("judgecli.stats")}
    assert outside == set(), f"{module} imports {sorted(outside)}: stats/ must stay pure"


def test_no_modules_import_each_other_in_a_circle():
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def walk(name: str, path: list[str]) -> None:
        state[name] = 1
        for dep in sorted(GRAPH[name]):
            if state.get(dep) == 1:
                circles.append([*path[path.index(dep) :], dep])
            elif dep not in state:
                walk(dep, [*path, dep])
        state[name] = 2

    for name in sorted(GRAPH):
        if name not in state:
            walk(name, [name])
    assert circles == []


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
        if any(m == "litellm" or m.startswith("litellm.") for m in imported(path))
    }
    assert users <= {"judgecli.judge.provider"}


@pytest.mark.parametrize("command", ["score", "pairwise", "calibrate", "refine"])
def test_the_judging_commands_run_on_the_one_spine(command):
    # job.py owns opening the run, judging, the cascade and the summary's tail; a command
    # that reached for them itself would re-grow the accidental differences issue 14 removed.
    deps = GRAPH[f"judgecli.{command}"]
    assert "judgecli.job" in deps
    assert deps.isdisjoint(
        {"judgecli.run", "judgecli.judging", "judgecli.cascade", "judgecli.runner"}
    ), deps


def test_the_cli_makes_decisions_through_the_core_not_the_spines_parts():
    # A command module calls its core module and the spine; it never grades, cascades or
    # summarises by itself (it may read a summary: `summary.run` is the type it renders).
    forbidden = {"judgecli.runner", "judgecli.grading", "judgecli.cascade", "judgecli.summary"}
    for name, deps in GRAPH.items():
        if name.startswith("judgecli.cli."):
            used = {d for d in deps if d in forbidden or d.startswith("judgecli.summary.")}
            assert used <= {"judgecli.summary.run"}, (name, used)
