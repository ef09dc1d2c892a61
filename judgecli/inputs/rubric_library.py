"""Where rubrics are found: the bundled library (in a wheel or a checkout), the folders of
JUDGE_RUBRICS_PATH before it, and `--rubric NAME` (or `extends: NAME`) resolved to a file.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from judgecli.errors import RubricError


def bundled_library() -> Path:
    """The folder of the bundled rubric library.

    An installed wheel carries it as `judgecli/library/` (pyproject maps the repository's
    top-level `rubrics/` there). A checkout, or the editable install `make install` makes,
    imports judgecli from the repository itself, where the library is `rubrics/` beside it.
    """
    packaged = resources.files("judgecli").joinpath("library")
    # pip always unpacks a wheel, so an installed package is a real folder; a zipped import
    # (not a real Path) would fall through to the checkout folder and find nothing.
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged.resolve()
    return Path(__file__).resolve().parents[2] / "rubrics"


LIBRARY_DIR = bundled_library()


def find_rubric(
    name_or_path: str, dirs: list[Path] | None = None, *, relative_to: Path | None = None
) -> Path:
    """Resolve `--rubric` (or `extends:`): a file path, else a rubric name looked up in the
    library folders in order (JUDGE_RUBRICS_PATH first, then the bundled library).
    """
    path = Path(name_or_path)
    if relative_to is not None and not path.is_absolute():
        path = relative_to / path
    if path.exists() or path.suffix in {".yaml", ".yml"}:
        return path
    for folder in dirs or [LIBRARY_DIR]:
        found = folder / f"{name_or_path}.yaml"
        if found.exists():
            return found
    raise RubricError(
        f"no rubric file or library rubric named {name_or_path!r}",
        hint="`judge rubrics list` shows the library (add folders with JUDGE_RUBRICS_PATH)",
    )


def library(dirs: list[Path] | None = None) -> list[Path]:
    """Every library rubric, sorted by name; an earlier folder's rubric hides a later one's."""
    found: dict[str, Path] = {}
    for folder in dirs or [LIBRARY_DIR]:
        for path in sorted(folder.glob("*.yaml")):
            found.setdefault(path.stem, path)
    return [found[name] for name in sorted(found)]
