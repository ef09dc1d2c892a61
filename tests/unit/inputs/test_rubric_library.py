from __future__ import annotations

import json
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

from judgecli.errors import RubricError
from judgecli.inputs.rubric_file import load_rubric
from judgecli.inputs.rubric_library import LIBRARY_DIR, find_rubric, library
from judgecli.rubric import rubric_json_schema
from judgecli.settings.config import rubric_dirs

BASE = """\
name: base
kind: pointwise
scale: {min: 1, max: 5}
pass_at: 3
criteria:
  - {name: accuracy, weight: 2}
  - {name: tone, weight: 1}
judge: {temperature: 0, max_tokens: 300}
prompt:
  system: Be strict.
  user: "Q: {input} A: {output}"
"""


def test_extends_merges_blocks_key_by_key_and_replaces_the_rest(write):
    write("base.yaml", BASE)
    child = write(
        "child.yaml",
        "name: child\nextends: base.yaml\npass_at: 4\n"
        "criteria: [{name: accuracy}]\nprompt: {user: 'Answer: {output}'}\n"
        "judge: {max_tokens: 99}\n",
    )
    rubric = load_rubric(child)
    assert (rubric.name, rubric.pass_at, rubric.extends) == ("child", 4, "base.yaml")
    assert rubric.prompt.system == "Be strict."  # inherited
    assert rubric.prompt.user == "Answer: {output}"  # overridden
    assert [c.name for c in rubric.criteria] == ["accuracy"]  # replaced whole
    assert (rubric.judge.temperature, rubric.judge.max_tokens) == (0, 99)
    assert rubric.scale.max == 5


def test_extends_finds_library_rubrics_by_name(write):
    child = write("strict.yaml", "name: strict-helpfulness\nextends: helpfulness\npass_at: 4\n")
    rubric = load_rubric(child)
    assert rubric.pass_at == 4
    assert rubric.prompt.user == load_rubric(find_rubric("helpfulness")).prompt.user


def test_an_extends_cycle_is_an_error(write):
    write("a.yaml", "name: a\nextends: b.yaml\n")
    write("b.yaml", "name: b\nextends: a.yaml\n")
    with pytest.raises(RubricError, match="makes a cycle"):
        load_rubric(write("c.yaml", "name: c\nextends: a.yaml\n"))


def test_an_extends_of_a_missing_rubric_names_the_file_and_line_that_asked(write):
    child = write("child.yaml", "name: child\n\nextends: helpfullness\npass_at: 4\n")
    with pytest.raises(RubricError) as err:
        load_rubric(child)
    assert err.value.message == (
        f"{child}:3: extends: no rubric file or library rubric named 'helpfullness'"
    )
    assert "judge rubrics list" in (err.value.hint or "")


def test_an_extends_error_further_up_the_chain_names_the_link_that_broke(write):
    write("middle.yaml", "name: middle\nextends: gone.yaml\n")
    with pytest.raises(RubricError, match=r"middle\.yaml:2: extends: "):
        load_rubric(write("child.yaml", "name: child\nextends: middle.yaml\n"))


def test_the_merged_rubric_is_validated(write):
    write("base.yaml", BASE)
    with pytest.raises(RubricError, match="pass_at must lie within the scale"):
        load_rubric(write("child.yaml", "name: c\nextends: base.yaml\npass_at: 9\n"))


def test_rubrics_path_folders_come_before_the_bundled_library(write, tmp_path, monkeypatch):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "helpfulness.yaml").write_text(BASE.replace("name: base", "name: helpfulness"))
    (mine / "house-style.yaml").write_text(BASE.replace("name: base", "name: house-style"))
    monkeypatch.setenv("JUDGE_RUBRICS_PATH", f"{mine}{':'}/nonexistent")
    dirs = rubric_dirs()
    assert dirs[0] == mine
    assert dirs[-1] == LIBRARY_DIR
    assert find_rubric("house-style", dirs) == mine / "house-style.yaml"
    assert find_rubric("helpfulness", dirs) == mine / "helpfulness.yaml"  # shadows the bundled
    names = [p.stem for p in library(dirs)]
    assert "house-style" in names
    assert names.count("helpfulness") == 1


def test_the_published_json_schema_is_in_sync_with_the_model():
    published = json.loads((LIBRARY_DIR / "schema.json").read_text())
    assert published == rubric_json_schema(), "run `make schema` and commit rubrics/schema.json"


def test_every_library_rubric_loads_and_has_its_example_dataset():
    for path in library():
        rubric = load_rubric(path)
        assert rubric.description
        assert rubric.requires
        assert rubric.version
        if rubric.kind.value == "pairwise":
            continue
        assert (LIBRARY_DIR.parent / "datasets" / f"{path.stem}.jsonl").exists(), path.stem


# Packaging: the library ships inside the wheel as judgecli/library (issue 13 §1). These
# are the fast halves of tests/integration/test_wheel_install.py, which builds the wheel.
REPO = Path(__file__).resolve().parents[3]


def setuptools_config() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_pyproject_lists_every_judgecli_package_and_the_library():
    on_disk = {
        ".".join(init.parent.relative_to(REPO).parts)
        for init in (REPO / "judgecli").rglob("__init__.py")
    }
    # `packages` is written by hand (find cannot see rubrics/ as judgecli.library): a new
    # sub-package must be added there or the wheel silently leaves it out.
    mapped = {"judgecli.library", "judgecli.demo_datasets"}
    assert sorted(setuptools_config()["packages"]) == sorted(on_disk | mapped)


def test_the_package_data_rule_ships_every_file_of_the_library_folder():
    config = setuptools_config()
    folder = REPO / config["package-dir"]["judgecli.library"]
    assert folder == LIBRARY_DIR
    patterns = config["package-data"]["judgecli.library"]
    files = [p.name for p in folder.iterdir() if p.is_file()]
    assert "schema.json" in files
    assert [f for f in files if not any(fnmatch(f, pattern) for pattern in patterns)] == []


def test_the_package_data_rule_ships_every_demo_dataset():
    # Issue 29: `judge demo` exited 2 from a wheel, which held no datasets.
    from judgecli.cli.demo_data import DEMO_FILES, bundled_datasets

    config = setuptools_config()
    folder = REPO / config["package-dir"]["judgecli.demo_datasets"]
    assert folder == bundled_datasets()
    patterns = config["package-data"]["judgecli.demo_datasets"]
    files = [p.name for p in folder.iterdir() if p.is_file()]
    assert set(DEMO_FILES) <= set(files)
    assert [f for f in files if not any(fnmatch(f, pattern) for pattern in patterns)] == []
