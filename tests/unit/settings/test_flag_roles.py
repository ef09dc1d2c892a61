"""What each shared flag is for, beyond its value: the lists other stages read off the flags'
declarations (judgecli/settings/flags.py) are the ones they kept by hand before issue 30."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from judgecli.cli.app import app_for
from judgecli.cli.rejudge import RESET
from judgecli.commands.drift.audit import NOT_JUDGING
from judgecli.running.merge import PER_MACHINE, PER_MACHINE_SWITCHES, SHARDS_OWN, spellings
from judgecli.running.share import describe_shares, worker_config
from judgecli.settings.config import FailureLimit, RunConfig
from judgecli.settings.flag_spec import Role
from judgecli.settings.flags import flag_fields
from judgecli.settings.gate_flags import GATE, threshold_fields
from judgecli.settings.judges import ModelSettings

# Issue 30: the four hand lists as they stood before the roles were declared once; the lists
# derived from the declarations must stay exactly these (a change is a decision, made here).
TODAY_PER_MACHINE = {
    "--shard",
    "--out",
    "-o",
    "--resume",
    "--workers",
    "--concurrency",
    "-c",
    "--rpm",
    "--tpm",
    "--max-cost",
    "--progress-every",
}
TODAY_PER_MACHINE_SWITCHES = {
    "--force",
    "--quiet",
    "-q",
    "--json",
    "--no-cache",
    "--retry-failed",
    "--batch",
}
TODAY_NOT_JUDGING = {
    "command",
    "out",
    "resume",
    "force",
    "retry_failed",
    "concurrency",
    "rpm",
    "tpm",
    "timeout_s",
    "max_retries",
    "use_cache",
    "max_cost",
    "max_failures",
    "workers",
    "shard",
    "batch",
    "conclude_only",
    "limit",
    "sample",
    "seed",
    # Issue 35: the spec a run is (judge run SPEC) records it; it judges nothing itself.
    "spec",
}
TODAY_RESET = {
    "out",
    "resume",
    "retry_failed",
    "force",
    "json_output",
    "quiet",
    "limit",
    "sample",
    "shard",
    "batch",
    "conclude_only",
    "sequential",
    "labels",
    "fdr",
    "on",
    "min_pass_rate",
    "min_mean",
    "min_win_rate",
    "max_loss_rate",
    "min_consistency",
    "min_kappa",
    "min_accuracy",
    "min_stability",
    "min_pass_k",
    "min_tool_f1",
    "min_tool_recall",
    "min_tool_precision",
    "min_checklist_score",
    # Issue 34: RUN_A's qualification record names RUN_A's judge, which drift replaces.
    "require_qualified",
    # Issue 35: RUN_A's spec is not the re-judged anchor set's, nor its sequential --alpha.
    "spec",
    "alpha",
}
TODAY_SHARED_LIMITS = {"concurrency", "rpm", "tpm", "max_cost"}
REJUDGED = ("score", "pairwise", "calibrate")


def click_command(name: str):
    """A judging command as `judge drift --anchor` parses its stored command line."""
    return typer.main.get_command(app_for([name])).commands[name]  # type: ignore[attr-defined]


def click_params(name: str) -> set[str]:
    """The parameter names of a judging command."""
    return {param.name for param in click_command(name).params if param.name}


def test_merge_lets_shards_differ_in_the_same_flags_as_before():
    assert PER_MACHINE == TODAY_PER_MACHINE
    assert PER_MACHINE_SWITCHES == TODAY_PER_MACHINE_SWITCHES


def test_drift_leaves_out_the_same_settings_as_before():
    assert NOT_JUDGING == TODAY_NOT_JUDGING


def test_a_rejudged_anchor_set_resets_the_same_parameters_as_before():
    assert RESET == TODAY_RESET
    # Every name still means a parameter of a command drift re-judges.
    assert set().union(*(click_params(name) for name in REJUDGED)) >= TODAY_RESET


@pytest.mark.parametrize("name", REJUDGED)
def test_a_rejudged_anchor_set_drops_every_option_of_the_old_runs_gate(name):
    # Drift's gate is --max-shift: an option of RUN_A's gate left on would gate the
    # re-judged run (an undecided gate exits 3, as an unfinished run does).
    gate = {p.name for p in click_command(name).params if getattr(p, "rich_help_panel", "") == GATE}
    assert gate
    assert gate <= RESET


def test_the_merged_run_drops_what_each_shard_was_given_for_its_own_run():
    # Issue 30: before, only the first four flags and --force/--batch; the shards' --quiet and
    # --json then decided what the merge printed.
    assert spellings(SHARDS_OWN, switches=False) == {"--shard", "--out", "-o", "--resume"}
    assert spellings(SHARDS_OWN, switches=True) == {
        "--force",
        "--batch",
        "--retry-failed",
        "--quiet",
        "-q",
        "--json",
    }


def full_config() -> RunConfig:
    """A RunConfig with every number a worker could be given a share of set."""
    return RunConfig(
        command="score",
        models=[ModelSettings(name="openai/m")],
        out=Path("x"),
        concurrency=8,
        rpm=600,
        tpm=60000,
        max_cost=4.0,
        max_retries=6,
        timeout_s=60,
        limit=10,
        sample=5,
        seed=3,
        repeats=4,
        max_tokens=512,
        temperature=0.5,
        max_failures=FailureLimit(count=8),
    )


def test_workers_share_the_same_limits_as_before():
    config = full_config()
    share = worker_config(config, 2)
    changed = {
        name for name in RunConfig.model_fields if getattr(share, name) != getattr(config, name)
    }
    assert changed == TODAY_SHARED_LIMITS
    said = describe_shares(config, 2)
    assert said == (
        "--workers 2: each process judges its share of the cases with --concurrency 4, "
        "--rpm 300, --tpm 30000, --max-cost 2"
    )


# --- every flag states its roles ----------------------------------------------------------


DECLARED = [*flag_fields(), *threshold_fields()]


@pytest.mark.parametrize("declared", DECLARED, ids=lambda declared: declared.name)
def test_every_declared_flag_states_roles_that_fit_together(declared):
    # Issue 30: flag(...) takes `roles` without a default, so a new flag is declared with its
    # roles decided; here they must also make sense together.
    roles = declared.flag.roles
    assert isinstance(roles, Role)
    if Role.VERDICTS in roles:
        # What decides a verdict is the same on every shard, and a re-judge keeps RUN_A's.
        assert not roles & (Role.PER_MACHINE | Role.THIS_RUN | Role.SHARED)
    if Role.SHARED in roles:
        # A share of a limit differs from machine to machine, and is a number of RunConfig.
        assert Role.PER_MACHINE in roles
        assert declared.flag.lands_in in RunConfig.model_fields
        assert not declared.switch


def test_every_setting_of_a_run_is_set_by_a_declared_flag():
    # So drift's audit knows whether a difference in it is one of the judge: a RunConfig field
    # no flag sets would count as one, whatever it is.
    landing = {shared.flag.lands_in for shared in flag_fields()} - {None}
    assert landing <= set(RunConfig.model_fields)
    assert set(RunConfig.model_fields) - landing == {"command"}


def test_a_gate_threshold_belongs_to_the_run_it_was_given_for():
    assert {row.flag.roles for row in threshold_fields()} == {Role.THIS_RUN}
