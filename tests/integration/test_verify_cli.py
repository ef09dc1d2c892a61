"""`judge verify RUN --spec SPEC` over real runs made through the CLI against the simulator
(issue 35): a run that kept to its spec exits 0 with no departures; a changed rubric, judge,
temperature or n exits 1 naming each; an unreadable run or spec exits 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from judgecli.inputs.rubric_library import find_rubric
from judgecli.inputs.spec import file_sha256, rubric_hash
from judgecli.simulator.server import SimulatorServer
from tests.conftest import DATA


def write_spec(folder: Path, *, n: int | None = 2) -> Path:
    """A score spec of three cases, the helpfulness rubric and openai/sim at temperature 0,
    judging the first `n`."""
    data = folder / "cases.jsonl"
    shutil.copy(DATA / "three_cases.jsonl", data)
    stopping = "{rule: fixed}" if n is None else f"{{rule: fixed, n: {n}}}"
    spec = folder / "judge.yaml"
    spec.write_text(
        "command: score\n"
        "datasets:\n"
        f"  - {{path: cases.jsonl, sha256: '{file_sha256(data)}'}}\n"
        f"rubric: {{ref: helpfulness, hash: '{rubric_hash('helpfulness')}'}}\n"
        "judges:\n"
        "  - model: openai/sim\n"
        "    settings: {temperature: 0.0}\n"
        f"stopping: {stopping}\n",
        encoding="utf-8",
    )
    return spec


def judged(run_cli, server: SimulatorServer, folder: Path, name: str, *extra: str, **kw) -> Path:
    """A finished score run of the spec's data, its directory."""
    out = folder / name
    args = ["score", str(folder / "cases.jsonl"), "--out", str(out), "--quiet", *extra]
    if not any(a == "--rubric" for a in extra):
        args += ["--rubric", "helpfulness"]
    made = run_cli(server, *args, **kw)
    assert made.exit_code == 0, made.stderr
    return out


def verified(run_cli, run: Path, spec: Path) -> tuple[int, dict]:
    """Exit code and --json output of `judge verify RUN --spec SPEC`."""
    result = run_cli(None, "verify", str(run), "--spec", str(spec), "--json")
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else {}


def test_a_run_that_kept_to_its_spec_exits_0_with_no_departures(run_cli, judge_server, tmp_path):
    spec = write_spec(tmp_path)
    run = judged(run_cli, judge_server, tmp_path, "kept", "--limit", "2")
    code, out = verified(run_cli, run, spec)
    assert (code, out["departures"], out["kept"]) == (0, [], True)


def test_a_changed_rubric_judge_temperature_and_n_exit_1_naming_each(
    run_cli, judge_server, tmp_path
):
    spec = write_spec(tmp_path)
    rubric = tmp_path / "helpfulness.yaml"
    text = find_rubric("helpfulness").read_text(encoding="utf-8")
    rubric.write_text(text.replace("fully", "completely", 1), encoding="utf-8")
    run = judged(
        run_cli,
        judge_server,
        tmp_path,
        "moved",
        "--rubric",
        str(rubric),
        "--temperature",
        "0.7",
        "--limit",
        "3",
    )
    code, out = verified(run_cli, run, spec)
    keys = [d["key"] for d in out["departures"]]
    assert code == 1
    assert keys == ["rubric.hash", "judges[0].settings.temperature", "stopping.n"]
    other = judged(run_cli, judge_server, tmp_path, "other", "--limit", "2", model="openai/sim-b")
    code, out = verified(run_cli, other, spec)
    assert (code, [d["key"] for d in out["departures"]]) == (1, ["judges"])
    assert out["departures"][0]["run"] == ["openai/sim-b"]


def test_data_changed_after_the_spec_was_written_is_a_departure(run_cli, judge_server, tmp_path):
    spec = write_spec(tmp_path, n=None)
    data = tmp_path / "cases.jsonl"
    data.write_text(data.read_text(encoding="utf-8").replace("a", "A", 1), encoding="utf-8")
    run = judged(run_cli, judge_server, tmp_path, "changed")
    code, out = verified(run_cli, run, spec)
    assert (code, [d["key"] for d in out["departures"]]) == (1, ["datasets[0].sha256"])


def test_an_unreadable_run_or_spec_exits_2(run_cli, judge_server, tmp_path):
    spec = write_spec(tmp_path)
    run = judged(run_cli, judge_server, tmp_path, "kept", "--limit", "2")
    missing_run = run_cli(None, "verify", str(tmp_path / "nowhere"), "--spec", str(spec))
    assert missing_run.exit_code == 2
    assert "nowhere" in missing_run.stderr
    assert "hint:" in missing_run.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("command: score\nbogus: 1\n", encoding="utf-8")
    bad_spec = run_cli(None, "verify", str(run), "--spec", str(bad))
    assert bad_spec.exit_code == 2
    assert "bad.yaml" in bad_spec.stderr


def recording(run: Path, spec: Path, hash_: str) -> None:
    """Write into the run's run.json the spec it records (as judge run SPEC does)."""
    info = json.loads((run / "run.json").read_text(encoding="utf-8"))
    info["spec"] = {"path": str(spec), "hash": hash_}
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")


def test_merge_and_collect_fail_a_passed_run_that_departs_from_its_recorded_spec(
    run_cli, judge_server, tmp_path, capsys
):
    from judgecli.cli.verify import spec_kept
    from judgecli.errors import ExitCode
    from judgecli.inputs.spec import read_spec, spec_hash

    spec = write_spec(tmp_path)
    planned = spec_hash(read_spec(spec))
    kept = judged(run_cli, judge_server, tmp_path, "kept", "--limit", "2")
    recording(kept, spec, planned)
    assert spec_kept(kept, ExitCode.OK) is ExitCode.OK
    moved = judged(run_cli, judge_server, tmp_path, "moved", "--limit", "3")
    recording(moved, spec, planned)
    assert spec_kept(moved, ExitCode.OK) is ExitCode.GATE_FAILED
    assert "stopping.n" in capsys.readouterr().err
    # A run that could not finish keeps its own code; a spec gone since is a warning.
    assert spec_kept(moved, ExitCode.INCOMPLETE) is ExitCode.INCOMPLETE
    recording(moved, tmp_path / "gone.yaml", planned)
    assert spec_kept(moved, ExitCode.OK) is ExitCode.OK
    assert "cannot verify" in capsys.readouterr().err


def test_merging_shards_of_a_spec_run_exits_1_when_the_spec_changed_since(
    run_cli, judge_server, tmp_path
):
    spec = write_spec(tmp_path, n=3)
    text = spec.read_text(encoding="utf-8").replace(
        "{temperature: 0.0}", f"{{temperature: 0.0, api-base: '{judge_server.url}/v1'}}"
    )
    spec.write_text(text, encoding="utf-8")
    for shard in (0, 1):
        made = run_cli(
            None,
            "run",
            str(spec),
            "--shard",
            f"{shard}/2",
            "--out",
            str(tmp_path / f"s{shard}"),
            "-q",
        )
        assert made.exit_code == 0, made.stderr
    shards = [str(tmp_path / "s0"), str(tmp_path / "s1")]
    kept = run_cli(None, "merge", *shards, "--out", str(tmp_path / "all"), "-q")
    assert kept.exit_code == 0, kept.stderr
    spec.write_text(text.replace("n: 3", "n: 2"), encoding="utf-8")
    moved = run_cli(None, "merge", *shards, "--out", str(tmp_path / "again"), "-q")
    # The merge concludes with the spec as it is now (its new hash recorded): the shards
    # judged 3 cases where it now plans 2.
    assert moved.exit_code == 1
    assert "departure: stopping.n" in moved.stderr
