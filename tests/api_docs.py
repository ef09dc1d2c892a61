"""docs/api.md's reference, rendered from the docstrings of judgecli's public names.

`python -m tests.api_docs` (or `make docs-api`) rewrites the part of docs/api.md between
its two markers; tests/unit/api/test_api_docs.py fails while the committed page differs
from what this renders, so the reference never drifts from the code. Everything above the
first marker (the guide and its examples) is written by hand.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import sys
import textwrap
from collections.abc import Callable, Iterator
from enum import Enum
from pathlib import Path
from typing import Any

import judgecli

PAGE = Path(__file__).resolve().parents[1] / "docs" / "api.md"
BEGIN = "<!-- reference: rendered from the docstrings by `python -m tests.api_docs` -->"
END = "<!-- end of the reference -->"

FUNCTIONS = [
    "score_dataset",
    "compare_datasets",
    "calibrate_judge",
    "refine_dataset",
    "run_arena",
    "probe_judge",
    "qualify_judge",
    "align_rubric",
    "load_rubric",
    "guard",
]
JUDGE_METHODS = ["grade", "agrade", "compare", "acompare", "close", "aclose"]
MODELS = ["Verdict", "Comparison", "Usage"]
GUARDS = {"Guard": ["close"], "AsyncGuard": ["aclose"]}
"""What `guard` returns: each class, its call (rendered as `guarded(...)`) and these methods."""
GUARD_MODELS = ["GuardResult", "Attempt"]
ELSEWHERE = {
    "Dataset": "in signatures: a path (JSONL, CSV, Parquet, `hf://...`) or an iterable of "
    "dicts or `Case`s",
    "CaseLike": "in signatures: one case, a dict of a dataset row's keys or a `Case`",
    "Generate": "in signatures: a generation function, `def generate(prompt: str, feedback: "
    "str | None) -> str` or the same `async def`",
    "Case": "a case as a dataset row holds it ([usage.md](usage.md))",
    "CaseResult": "a results.jsonl line ([results.md](results.md))",
    "Judgement": "one judge call of a case, in `judgements` ([results.md](results.md))",
    "Rubric": "a validated rubric ([rubrics.md](rubrics.md)); `load_rubric` loads one",
    "Winner": "a pairwise verdict from NEW's side: `Winner.NEW`, `Winner.OLD`, `Winner.TIE`",
}
ALIASES = frozenset({"Dataset", "CaseLike", "Generate"})
SECTIONS = ("Args:", "Returns:", "Raises:")


def docstring_markdown(doc: str | None) -> str:
    """A Google-style docstring as markdown: its prose as it is, its Args and Raises as
    bullet lists, its Returns as a paragraph.
    """
    lines = inspect.cleandoc(doc or "").splitlines()
    out: list[str] = []
    section: str | None = None
    for line in lines:
        if line in SECTIONS:
            section = line
            while out and not out[-1]:
                out.pop()
            out += ["", f"**{line[:-1]}**", ""]
        elif section and line.startswith("    "):
            body = line[4:]
            named = section != "Returns:" and not body.startswith(" ") and ":" in body
            if named:
                name, _, text = body.partition(":")
                out.append(f"- `{name.strip()}`: {text.strip()}")
            elif section == "Returns:" and not out[-1]:
                out.append(body.strip())
            else:
                out[-1] += " " + body.strip()
        else:
            section = None
            out.append(line)
    return "\n".join(out).strip()


def default_text(value: Any) -> str:
    """A parameter's default as Python source (an enum member by its value)."""
    if isinstance(value, Enum):
        return repr(value.value)
    return repr(value)


def signature_text(name: str, obj: Callable[..., Any], *, skip_self: bool = False) -> str:
    """`name(params) -> return`, one parameter per line when it does not fit on one."""
    signature = inspect.signature(obj)
    params = list(signature.parameters.values())[1 if skip_self else 0 :]
    words: list[str] = []
    star = False
    for param in params:
        if param.kind is param.KEYWORD_ONLY and not star:
            words.append("*")
            star = True
        prefix = {param.VAR_KEYWORD: "**", param.VAR_POSITIONAL: "*"}.get(param.kind, "")
        star = star or param.kind is param.VAR_POSITIONAL
        text = prefix + param.name
        if param.annotation is not param.empty:
            text += f": {param.annotation}"
        if param.default is not param.empty:
            text += f" = {default_text(param.default)}"
        words.append(text)
    returns = signature.return_annotation
    tail = "" if returns in (signature.empty, "None") and name != "__init__" else f" -> {returns}"
    one_line = f"{name}({', '.join(words)}){tail}"
    if len(one_line) <= 88:
        return one_line
    return f"{name}(\n" + "".join(f"    {w},\n" for w in words) + f"){tail}"


def attribute_docs(cls: type) -> dict[str, str]:
    """The docstrings written under a class's attributes (and properties), by name."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("judgecli"):
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        body = tree.body[0].body  # type: ignore[attr-defined]
        for node, after in zip(body, [*body[1:], None], strict=True):
            named = isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
            said = isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
            if named and said:
                found[node.target.id] = inspect.cleandoc(str(after.value.value))
    return found


def field_rows(cls: type) -> Iterator[str]:
    """A markdown table row per field of a pydantic model or dataclass, and per property."""
    docs = attribute_docs(cls)
    if dataclasses.is_dataclass(cls):
        fields = {f.name: str(f.type) for f in dataclasses.fields(cls)}
    else:
        fields = {
            name: str(info.annotation).replace("typing.", "")
            for name, info in cls.model_fields.items()  # type: ignore[attr-defined]
        }
        fields = {n: source_annotation(cls, n) or t for n, t in fields.items()}
    for name, kind in fields.items():
        yield f"| `{name}` | {type_cell(kind)} | {one_line(docs.get(name, ''))} |"
    for name, member in vars(cls).items():
        if isinstance(member, property | functools.cached_property):
            getter = member.fget if isinstance(member, property) else member.func
            kind = inspect.signature(getter).return_annotation
            yield f"| `{name}` | {type_cell(kind)} | {one_line(inspect.getdoc(member) or '')} |"


def source_annotation(cls: type, name: str) -> str | None:
    """An attribute's annotation as the source writes it (for the classes of judgecli)."""
    for klass in cls.__mro__:
        annotations = klass.__dict__.get("__annotations__", {})
        if name in annotations and isinstance(annotations[name], str):
            return str(annotations[name])
    return None


def type_cell(kind: str) -> str:
    """A type as a table cell (a bar escaped; a type variable said in words)."""
    if kind == "S":
        return "the command's summary model"
    return "`" + kind.replace("|", "\\|") + "`"


def one_line(text: str) -> str:
    """A docstring as one table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def model_section(name: str) -> list[str]:
    """A public model's section: its docstring, and a table of its attributes."""
    cls = getattr(judgecli, name)
    parts = [f"### `{name}`", "", docstring_markdown(cls.__doc__), ""]
    return [*parts, "| attribute | type | |", "| --- | --- | --- |", *field_rows(cls), ""]


def render() -> str:
    """The reference section, between the markers."""
    parts = [BEGIN, "", "## Reference", ""]
    parts += ["### Functions", ""]
    for name in FUNCTIONS:
        function = getattr(judgecli, name)
        parts += [f"#### `{name}`", "", "```text", signature_text(name, function), "```", ""]
        parts += [docstring_markdown(function.__doc__), ""]
    judge = judgecli.Judge
    parts += ["### `Judge`", "", "```text", signature_text("Judge", judge.__init__, skip_self=True)]
    parts += ["```", "", docstring_markdown(judge.__doc__), ""]
    for name in JUDGE_METHODS:
        method = getattr(judge, name)
        signature = signature_text(f"Judge.{name}", method, skip_self=True)
        parts += [f"#### `Judge.{name}`", "", "```text", signature, "```", ""]
        parts += [docstring_markdown(method.__doc__), ""]
    for name in ["Run", *MODELS]:
        parts += model_section(name)
    for name, methods in GUARDS.items():
        cls = getattr(judgecli, name)
        call = signature_text("guarded", cls.__call__, skip_self=True)
        parts += [f"### `{name}`", "", docstring_markdown(cls.__doc__), ""]
        parts += [f"#### `{name}.__call__`", "", "```text", call, "```", ""]
        parts += [docstring_markdown(cls.__call__.__doc__), ""]
        for method_name in methods:
            method = getattr(cls, method_name)
            signature = signature_text(f"{name}.{method_name}", method, skip_self=True)
            parts += [f"#### `{name}.{method_name}`", "", "```text", signature, "```", ""]
            parts += [docstring_markdown(method.__doc__), ""]
    for name in GUARD_MODELS:
        parts += model_section(name)
    parts += ["### Other names", ""]
    parts += [
        f"- `{name}`: {text}" if name in ALIASES else f"- `judgecli.{name}`: {text}"
        for name, text in ELSEWHERE.items()
    ]
    parts += ["", "### `judgecli.errors`", "", "```text"]
    parts += [inspect.cleandoc(judgecli.errors.__doc__ or ""), "```", "", END]
    return "\n".join(parts) + "\n"


def rendered_page(page: str) -> str:
    """The page with its reference rendered anew."""
    head, marker, _ = page.partition(BEGIN)
    if not marker:
        raise SystemExit(f"{PAGE}: no {BEGIN!r} marker")
    _, end, tail = page.partition(END)
    return head + render() + tail.removeprefix("\n") if end else head + render()


def main() -> None:
    """Rewrite docs/api.md's reference."""
    PAGE.write_text(rendered_page(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {PAGE}", file=sys.stderr)


if __name__ == "__main__":
    main()
