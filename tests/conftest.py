"""Shared fixtures: a clean environment for every test, and small rubrics and datasets."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from judgecli.inputs.rubric_file import parse_rubric
from judgecli.rubric import Rubric

DATA = Path(__file__).resolve().parent / "data"
"""Test data kept in the repository (tests/data/*/SOURCE.md says where each set comes from)."""

EXTERNAL_DATA_ENV = "JUDGE_TEST_DATA"
EXTERNAL_DATA = Path(os.environ[EXTERNAL_DATA_ENV]) if os.environ.get(EXTERNAL_DATA_ENV) else None
"""A folder of real data sets whose licence does not let the repository carry them; the
tests that need one skip without it, saying where to get it (read at collection, before
`clean_environ` empties JUDGE_* for each test)."""


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No JUDGE_* settings, provider keys or proxies leak in from the developer's shell
    (httpx's clean_environ); LiteLLM stays offline; runs land in a temporary directory."""
    for name in list(os.environ):
        if (
            name.startswith("JUDGE_")
            or name.endswith("_API_KEY")
            or name.lower() in {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}
        ):
            monkeypatch.delenv(name, raising=False)
    # A safety net: a call that reaches a provider by mistake (a test without --api-base)
    # goes to a dead loopback port, never to the internet.
    for name in ("OPENAI_API_BASE", "OPENAI_BASE_URL", "ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL"):
        monkeypatch.setenv(name, "http://127.0.0.1:9/v1")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("LITELLM_MODE", "PRODUCTION")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # Each test gets an empty reply cache of its own; none touches the user's.
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


POINTWISE_YAML = """\
name: tiny
version: 3
kind: pointwise
description: test rubric
scale: {min: 1, max: 4}
pass_at: 3
requires: [input, output]
prompt:
  system: You grade answers.
  user: |
    Question: {input}
    Answer: {output}
"""

BINARY_YAML = """\
name: tiny-binary
kind: binary
choices: [YES, NO]
requires: [input, output]
prompt:
  user: "Q: {input} A: {output}"
"""

CRITERIA_YAML = """\
name: tiny-criteria
kind: pointwise
scale: {min: 1, max: 5}
pass_at: 3
criteria:
  - {name: accuracy, weight: 3, description: "Is it right?"}
  - {name: clarity, weight: 1}
prompt:
  user: "Q: {input} A: {output}"
"""


@pytest.fixture
def pointwise_rubric() -> Rubric:
    return parse_rubric(POINTWISE_YAML, source="tiny.yaml")


@pytest.fixture
def binary_rubric() -> Rubric:
    return parse_rubric(BINARY_YAML, source="tiny-binary.yaml")


@pytest.fixture
def criteria_rubric() -> Rubric:
    return parse_rubric(CRITERIA_YAML, source="tiny-criteria.yaml")


@pytest.fixture
def write(tmp_path: Path):
    """write("name.jsonl", text) -> path, in the test's temporary directory."""

    def _write(name: str, text: str | bytes) -> Path:
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    return _write
