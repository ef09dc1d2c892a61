"""Where `llm_judge`'s judge comes from (issue 31): the option, else the command line's
JUDGE_* variable, else the ini file; a rubric file named in the ini file is found beside
it; the Judge's settings come from `llm_judge_settings`."""

from __future__ import annotations

import pytest

from judgecli.api.pytest_judge import Chosen, chosen, open_judge
from judgecli.api.pytest_session import GateAsked, Ledger
from judgecli.errors import ConfigError

pytest_plugins = ["pytester"]


@pytest.fixture
def ini(pytester):
    pytester.makepyprojecttoml(
        """
        [tool.pytest.ini_options]
        judge_model = ["openai/a", "openai/b"]
        judge_api_base = "http://127.0.0.1:1/v1"
        judge_rubric = "rubrics/mine.yaml"
        """
    )
    (pytester.path / "rubrics").mkdir()
    (pytester.path / "rubrics" / "mine.yaml").write_text("name: mine\n", encoding="utf-8")
    return pytester


def test_the_ini_file_names_a_panel_an_endpoint_and_a_rubric_file_beside_it(ini):
    assert chosen(ini.parseconfig()) == Chosen(
        model=["openai/a", "openai/b"],
        api_base="http://127.0.0.1:1/v1",
        rubric=ini.path / "rubrics" / "mine.yaml",
    )


def test_the_environment_wins_over_the_ini_file_and_the_option_over_both(ini, monkeypatch):
    monkeypatch.setenv("JUDGE_MODEL", "openai/env")
    monkeypatch.setenv("JUDGE_API_BASE", "")  # empty is unset, as for the command line
    from_env = chosen(ini.parseconfig())
    assert (from_env.model, from_env.api_base) == (["openai/env"], "http://127.0.0.1:1/v1")
    given = chosen(
        ini.parseconfig(
            "--judge-model", "openai/x", "--judge-model", "openai/y", "--judge-rubric", "pairwise"
        )
    )
    assert (given.model, given.rubric) == (["openai/x", "openai/y"], "pairwise")


def test_a_rubric_the_ini_file_names_that_is_no_file_there_is_a_library_name(pytester):
    pytester.makeini("[pytest]\njudge_rubric = helpfulness\n")
    assert chosen(pytester.parseconfig()).rubric == "helpfulness"


@pytest.mark.parametrize(
    ("args", "missing"),
    [
        pytest.param((), "a judge model and a rubric", id="nothing"),
        pytest.param(("--judge-model", "openai/sim"), "a rubric", id="no-rubric"),
        pytest.param(("--judge-rubric", "helpfulness"), "a judge model", id="no-model"),
    ],
)
def test_a_judge_without_a_model_or_a_rubric_names_what_to_set(pytester, args, missing):
    config = pytester.parseconfig(*args)
    with pytest.raises(ConfigError, match=f"^llm_judge needs {missing}$") as raised:
        open_judge(config, Ledger(GateAsked()), {})
    assert "judge_model" in (raised.value.hint or "") or "judge_rubric" in (raised.value.hint or "")


def test_llm_judge_settings_are_the_judges_settings(pytester):
    config = pytester.parseconfig("--judge-model", "openai/sim", "--judge-rubric", "helpfulness")
    judge = open_judge(config, Ledger(GateAsked()), {"temperature": 0.5, "cache": False})
    assert judge.config.temperature == 0.5
    assert judge.config.use_cache is False
    assert judge.using(rubric="pairwise") is judge.using(rubric="pairwise")
    assert judge.using(rubric="pairwise").pairwise
    assert judge.using(rubric="pairwise").config.temperature == 0.5
    with pytest.raises(TypeError, match="did you mean temperature"):
        open_judge(config, Ledger(GateAsked()), {"temprature": 0.5})
