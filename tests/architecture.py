"""The package's house, read from the code's own imports: its rooms, the arrows between them,
the floors they stand on, the arrows that run against the declared stages, and circles.

A room is a module at the package root or a whole sub-package (`summary/`). An arrow is an
import from one room into another, at module level, inside a function or under
`if TYPE_CHECKING:`: a lazy or a type-only import ties two modules as surely as a running
one. A room's floor is one above the highest room it imports (the ground is floor 1).
`STAGES` declares the floors the package promises (docs/development.md): an arrow may only
point to a room of an earlier stage.

`python -m tests.architecture` (from the repository root) prints the numbers;
tests/unit/test_architecture.py holds the code to them.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "judgecli"

STAGES: list[set[str]] = [
    {"stats/"},
    {"errors", "usage", "gc_pause"},
    {"rubric/"},
    {"verdict"},
    {"result"},
    {"inputs/"},
    {"settings/"},
    {"store/"},
    {"judge/"},
    {"grading/"},
    {"summary/"},
    {"deciding/"},
    {"report/"},
    {"simulator/"},
    {"running/"},
    {"commands/"},
    {"view/"},
    {"api/"},
    {"cli/"},
    {"startup"},
    {"__main__"},
]
"""The floors the package promises, from the ground up. The ground is pure arithmetic
(`stats/`), then the words every stage speaks (errors, usage, the rubric, a verdict, a
case's result), then the stages a case flows through: read (inputs), configured (settings),
written (store), asked (judge), graded, summarised, decided on, reported; `running/` is the
spine that drives them, `commands/` what each command adds to it, `view/` the web app over
finished runs (it compares them as `judge drift` does), `api/` the engine called
from Python, `cli/` the command line, `startup` the process's entry."""


def module_name(path: Path) -> str:
    """judgecli/summary/facts.py → judgecli.summary.facts; a package's __init__ is the package."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def type_checking_block(node: ast.AST) -> bool:
    """An `if TYPE_CHECKING:` block."""
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports_of(path: Path, *, typing_too: bool = True) -> set[str]:
    """What a module imports: judgecli modules (a package's face when the name is not a
    module of it) and third-party top-level names. `typing_too=False` leaves out the
    `if TYPE_CHECKING:` blocks, which never run.
    """
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if not typing_too and type_checking_block(node):
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


@functools.cache
def module_graph(*, typing_too: bool = True) -> dict[str, set[str]]:
    """Module → the judgecli modules it imports."""
    return {
        name: {m for m in imports_of(path, typing_too=typing_too) if m in MODULES and m != name}
        for name, path in MODULES.items()
    }


def room_of(module: str) -> str:
    """The room a module stands in: `summary/` for judgecli.summary.facts, `gate` for a root
    module, `__init__` for the package's own face."""
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"
    return parts[1] + "/" if (PACKAGE / parts[1]).is_dir() else parts[1]


def rooms() -> set[str]:
    """Every room of the house but the package's face."""
    return {room_of(m) for m in MODULES} - {"__init__"}


def arrows() -> set[tuple[str, str]]:
    """(from room, to room) for every import between two rooms."""
    return {
        (room_of(a), room_of(b))
        for a, deps in module_graph().items()
        for b in deps
        if room_of(a) != room_of(b) and "__init__" not in (room_of(a), room_of(b))
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Groups of nodes that import each other in a loop (strongly connected components of
    more than one node, Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def floors(edges: set[tuple[str, str]], nodes: set[str]) -> dict[str, int]:
    """Each room's floor: 1 + the highest floor it imports (rooms in a circle share one)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    knot = {v: min(g) for g in circles(graph) for v in g}

    @functools.cache
    def floor(v: str) -> int:
        below = {knot.get(w, w) for u in nodes if knot.get(u, u) == v for w in graph[u]}
        return 1 + max((floor(w) for w in below if w != v), default=0)

    sys.setrecursionlimit(10_000)
    return {v: floor(knot.get(v, v)) for v in nodes}


def stage_of(room: str) -> int:
    """The declared stage a room belongs to (its index in STAGES)."""
    for i, stage in enumerate(STAGES):
        if room in stage:
            return i
    raise KeyError(f"{room} is on no stage of tests/architecture.py's STAGES")


def against_the_stages(edges: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """Arrows that point up or sideways across the declared stages."""
    return sorted((a, b) for a, b in edges if stage_of(a) <= stage_of(b))


def main() -> None:
    """Print the house's numbers."""
    nodes, edges = rooms(), arrows()
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    module_circles = circles(module_graph())
    print(f"rooms {len(nodes)}")
    print(f"floors {max(floors(edges, nodes).values())}")
    print(f"arrows {len(edges)}")
    print(f"arrows against the stages {len(against_the_stages(edges))}")
    print(f"circles between rooms {len(circles(graph))}, between modules {len(module_circles)}")
    print(f"modules at the package root {len([r for r in nodes if not r.endswith('/')])}")


if __name__ == "__main__":
    main()
