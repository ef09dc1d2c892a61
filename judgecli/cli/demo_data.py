"""Where the demo's datasets are, in a wheel or in a checkout: what `judge demo` judges and
what the simulator's startup line suggests trying.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from judgecli.errors import InputError

DEMO_FILES = (
    "example.jsonl",
    "old.jsonl",
    "new.jsonl",
    "regressed.jsonl",
    "labels.jsonl",
    "agent-a.jsonl",
    "agent-b.jsonl",
)
"""The files `judge demo` reads (datasets/README.md says what each holds)."""


def bundled_datasets() -> Path:
    """The folder of the bundled example datasets.

    An installed wheel carries them as `judgecli/demo_datasets/` (pyproject maps the
    repository's top-level `datasets/` there, as it maps `rubrics/` to the rubric library);
    a checkout, or the editable install `make install` makes, finds `datasets/` beside the
    package.
    """
    packaged = resources.files("judgecli").joinpath("demo_datasets")
    # pip always unpacks a wheel, so an installed package is a real folder (as for the
    # rubric library, rubric_library.bundled_library).
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged.resolve()
    return Path(__file__).resolve().parents[2] / "datasets"


def demo_datasets() -> Path:
    """The bundled datasets folder, checked to hold every file the demo reads."""
    folder = bundled_datasets()
    missing = [name for name in DEMO_FILES if not (folder / name).is_file()]
    if missing:
        raise InputError(
            f"the demo's datasets are missing from {folder}: {', '.join(missing)}",
            hint="reinstall judgecli (its wheel ships them as judgecli/demo_datasets/)",
        )
    return folder


def shown_path(path: Path) -> str:
    """`path` relative to the working directory when it is under it (shorter to copy),
    else absolute: a command that names it works from any folder.
    """
    absolute = path.resolve()
    try:
        return str(absolute.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(absolute)
