"""The install a user or a CI job makes: a wheel in a fresh venv, run outside the checkout.

Regression for the 2026-11-23 review, finding 1 (issue 13 §1): `pip wheel --no-deps .` held
no rubric, so `judge rubrics list` was empty and `--rubric pairwise` exited 2 everywhere but
in an editable checkout. And for the 2026-11-27 review (issue 29): `judge demo` exited 2
from a wheel, which held no datasets, the simulator's "try:" line named a file only a
checkout has, and the wheel carried no LICENSE.

By default everything stays offline and takes seconds: the wheel is built from a copy of the
repository with this environment's setuptools (`--no-build-isolation --no-index`) and
installed with `--no-deps` into a fresh venv, whose `.pth` line names this environment's
site-packages so that the dependencies import. A plain path line in a `.pth` does not run
the `.pth` files of the folder it names, so the editable install's import hook that lives
there never loads; the tests assert that judgecli comes from the fresh venv.
`make test-wheel` sets WHEEL_TEST_DEPS=index for the whole real thing: an isolated build
and `pip install` of the wheel with its dependencies from the package index.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from judgecli.simulator.server import SimulatorServer

REPO = Path(__file__).resolve().parents[2]
FROM_INDEX = os.environ.get("WHEEL_TEST_DEPS") == "index"
# Not the sources: what a build leaves behind, or what is large and irrelevant to it.
# `build/` above all: setuptools reuses a stale build/lib, which would hide a package
# missing from pyproject's list.
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "runs", "*.egg-info", "__pycache__", ".*_cache"
)


@dataclass(frozen=True)
class Installed:
    wheel: Path
    source: Path
    venv: Path

    def bin(self, name: str) -> Path:
        return self.venv / "bin" / name


def pip(*args: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=900 if FROM_INDEX else 180,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("wheel-install")
    source = work / "source"
    shutil.copytree(REPO, source, ignore=NOT_SOURCES)
    offline = [] if FROM_INDEX else ["--no-build-isolation", "--no-index"]
    pip("wheel", "--no-deps", *offline, "--wheel-dir", str(work / "dist"), str(source))
    (wheel,) = (work / "dist").glob("judgecli-*.whl")

    venv = work / "venv"
    if FROM_INDEX:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        result = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert result.returncode == 0, result.stdout + result.stderr
    else:
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
        )
        pip(
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--no-deps",
            "--no-index",
            str(wheel),
        )
        (site,) = (venv / "lib").glob("python3*/site-packages")
        (site / "judge-test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return Installed(wheel=wheel, source=source, venv=venv)


def run(installed: Installed, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a program of the fresh venv from `cwd`, as a user's shell would."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"}
    }
    # LiteLLM's openai/ route needs some key; a wide terminal keeps rich from eliding names.
    env |= {
        "OPENAI_API_KEY": "sk-test-dummy",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "COLUMNS": "200",
        "PATH": f"{installed.venv / 'bin'}{os.pathsep}{env['PATH']}",
    }
    return subprocess.run(
        [str(installed.bin(args[0])), *args[1:]],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def library_names() -> list[str]:
    return sorted(p.stem for p in (REPO / "rubrics").glob("*.yaml"))


def test_the_wheel_holds_every_module_and_the_rubric_library(installed):
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    modules = {
        p.relative_to(installed.source).as_posix()
        for p in (installed.source / "judgecli").rglob("*.py")
    }
    # A judgecli sub-package missing from pyproject's hand-written `packages` shows up here.
    assert sorted(modules - names) == []
    library = {f"judgecli/library/{p.name}" for p in (installed.source / "rubrics").iterdir()}
    assert "judgecli/library/schema.json" in library
    assert sorted(library - names) == []
    assert "judgecli/library/pairwise.yaml" in names
    # Issue 32: datasets/images/ (the image set's PNGs) too.
    source = installed.source / "datasets"
    datasets = {
        f"judgecli/demo_datasets/{p.relative_to(source).as_posix()}"
        for p in source.rglob("*")
        if p.is_file()
    }
    assert sorted(datasets - names) == []
    assert "judgecli-0.1.0.dist-info/licenses/LICENSE" in names
    # Issue 31: the Python API is typed (PEP 561): the marker and the package's stub ship.
    assert {"judgecli/py.typed", "judgecli/__init__.pyi"} <= names


def test_the_fresh_venv_imports_judgecli_and_its_library_from_the_wheel(installed, tmp_path):
    probe = (
        "import json, judgecli\n"
        "from judgecli.inputs.rubric_library import LIBRARY_DIR, library\n"
        "print(json.dumps({'module': judgecli.__file__, 'library': str(LIBRARY_DIR),\n"
        "                  'names': [p.stem for p in library()],\n"
        "                  'schema': (LIBRARY_DIR / 'schema.json').read_text()}))\n"
    )
    result = run(installed, "python", "-c", probe, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    site = installed.venv.resolve()
    assert Path(found["module"]).resolve().is_relative_to(site), found["module"]
    assert Path(found["library"]).is_relative_to(site), found["library"]
    assert found["names"] == library_names()
    schema = json.loads(found["schema"])
    assert schema == json.loads((REPO / "rubrics" / "schema.json").read_text())


def test_rubrics_list_shows_the_bundled_library_outside_the_checkout(installed, tmp_path):
    result = run(installed, "judge", "rubrics", "list", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    shown = result.stdout + result.stderr
    for name in library_names():
        assert f" {name} " in shown, name


def test_a_pairwise_gate_with_a_library_rubric_runs_from_the_wheel(
    installed, judge_server: SimulatorServer, tmp_path
):
    for name in ("old.jsonl", "new.jsonl"):
        shutil.copy(REPO / "datasets" / name, tmp_path / name)
    result = run(
        installed,
        "judge",
        "pairwise",
        "old.jsonl",
        "new.jsonl",
        "--rubric",
        "pairwise",
        "--model",
        "openai/sim",
        "--api-base",
        f"{judge_server.url}/v1",
        "--min-win-rate",
        "0.5",
        "--out",
        "gate-run",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "gate-run" / "summary.json").read_text())
    assert (summary["rubric"], summary["n_cases"], summary["n_failed"]) == ("pairwise", 30, 0)
    assert summary["gate"]["passed"] is True
    # Both orders of every pair went over the socket: the installed package did the judging.
    assert len(judge_server.requests) == 2 * 30


def test_the_demo_runs_from_the_wheel_in_an_empty_folder(installed, tmp_path):
    # Issue 29: "error: the demo needs the repository's datasets/ folder", exit 2.
    result = run(installed, "judge", "demo", "--latency-ms", "0", cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    said = result.stdout.splitlines()
    assert "UNEXPECTED" not in result.stdout
    assert sum("(as expected)" in line for line in said) == 9
    # Its runs go under ./runs of the folder it ran in, and it says so.
    (target,) = (tmp_path / "runs").iterdir()
    assert f"demo runs are in runs/{target.name}" in said
    assert (target / "pairwise-pass" / "report.html").is_file()
    # The commands it suggests name the datasets the wheel installed, whole.
    site = installed.venv.resolve() / "lib"
    suggested = [line.split()[2] for line in said if line.startswith("  judge score ")]
    assert len(suggested) == 1
    assert Path(suggested[0]).is_relative_to(site), suggested
    assert Path(suggested[0]).is_file()


def test_the_simulators_try_line_runs_as_written_from_any_folder(installed, tmp_path):
    # Issue 29: the line said `judge score datasets/example.jsonl ...`, exit 2 outside a
    # checkout.
    env = os.environ | {"COLUMNS": "200"}
    # Started from a folder above the installed package, whose path it could shorten.
    simulator = subprocess.Popen(
        [str(installed.bin("judge")), "simulate", "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        cwd=installed.venv.parent,
        env=env,
    )
    try:
        assert simulator.stderr is not None
        line = ""
        while not line.startswith("try: "):
            line = simulator.stderr.readline()
            assert line, "the simulator ended before its try: line"
        argv = shlex.split(line.removeprefix("try: "))
        assert argv[0] == "judge"
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        result = run(installed, *argv, "--out", "tried", cwd=elsewhere)
        assert result.returncode == 0, result.stderr
        summary = json.loads((elsewhere / "tried" / "summary.json").read_text())
        assert (summary["n_cases"], summary["n_failed"]) == (24, 0)
    finally:
        simulator.terminate()
        try:
            simulator.wait(timeout=30)
        except subprocess.TimeoutExpired:
            simulator.kill()
            simulator.wait(timeout=30)


def test_the_pytest_plugin_from_the_wheel_judges_a_test_and_gates_the_session(
    installed, judge_server: SimulatorServer, tmp_path
):
    # Issue 31: the plugin is the wheel's pytest11 entry point: no conftest, no `-p`, only an
    # installed judgecli and an ini file, as a user's project has them.
    if FROM_INDEX:
        pip("--python", str(installed.bin("python")), "install", "--quiet", "pytest")
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\n"
        "judge_model = openai/sim\n"
        "judge_rubric = helpfulness\n"
        f"judge_api_base = {judge_server.url}/v1\n"
    )
    (tmp_path / "test_answers.py").write_text(
        "def test_the_answer_helps(llm_judge):\n"
        "    verdict = llm_judge.grade({'id': 'tides', 'input': 'What causes the tides?',\n"
        "        'output': 'The Moon\\'s gravity pulls on the oceans; the Sun adds a little.'})\n"
        "    assert verdict.reason\n"
    )
    passed = run(installed, "python", "-m", "pytest", "-p", "no:cacheprovider", cwd=tmp_path)
    assert passed.returncode == 0, passed.stdout[-3000:] + passed.stderr[-3000:]
    assert "graded with helpfulness" in passed.stdout
    loaded = run(
        installed,
        "python",
        "-c",
        "import importlib.metadata as m, judgecli.api.pytest_plugin as p\n"
        "print(p.__file__)\n"
        "print(sorted(e.value for e in m.entry_points(group='pytest11') if e.name == 'judge'))",
        cwd=tmp_path,
    )
    assert loaded.returncode == 0, loaded.stderr
    module, entry = loaded.stdout.splitlines()
    assert Path(module).resolve().is_relative_to(installed.venv.resolve()), module
    assert "judgecli.api.pytest_plugin" in entry
    # A pass bar above what one case can show is a failed gate: pytest exits 1.
    gated = run(
        installed,
        "python",
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "--judge-min-pass-rate",
        "0.9",
        "--judge-on",
        "lower-bound",
        cwd=tmp_path,
    )
    assert gated.returncode == 1, gated.stdout[-3000:] + gated.stderr[-3000:]
    assert "gate FAILED on judged evidence" in gated.stdout


def test_judge_view_from_the_wheel_serves_a_run_and_keeps_a_label(
    installed, judge_server: SimulatorServer, tmp_path
):
    # Issue 33: the viewer's pages and scripts are package code (no files beside it to
    # forget): from the wheel it serves a run, and a label posted with the page's token
    # lands in RUN/labels/<rater>.jsonl.
    import re
    import urllib.request

    shutil.copy(REPO / "datasets" / "example.jsonl", tmp_path / "example.jsonl")
    made = run(
        installed,
        "judge",
        "score",
        "example.jsonl",
        "--rubric",
        "helpfulness",
        "--model",
        "openai/sim",
        "--api-base",
        f"{judge_server.url}/v1",
        "--out",
        "runs/today",
        "--quiet",
        cwd=tmp_path,
    )
    assert made.returncode == 0, made.stderr
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    view = subprocess.Popen(
        [str(installed.bin("judge")), "view", "runs", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    try:
        assert view.stdout is not None
        url = view.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url), url
        page = urllib.request.urlopen(url, timeout=30).read().decode()
        (token,) = re.findall(r'<meta name="judge-token" content="([^"]+)"', page)
        runs = json.loads(urllib.request.urlopen(f"{url}api/runs", timeout=30).read())
        assert [r["name"] for r in runs] == ["today"]
        post = urllib.request.Request(
            f"{url}api/runs/today/labels",
            data=json.dumps({"id": "q-01", "label": 3, "rater": "ana"}).encode(),
            headers={"Content-Type": "application/json", "X-Judge-Token": token},
        )
        assert urllib.request.urlopen(post, timeout=30).status in (200, 201)
    finally:
        view.terminate()
        view.wait(timeout=30)
    (line,) = (tmp_path / "runs" / "today" / "labels" / "ana.jsonl").read_text().splitlines()
    assert json.loads(line)["id"] == "q-01"
    assert json.loads(line)["label"] == 3
