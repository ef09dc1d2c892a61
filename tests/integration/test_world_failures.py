"""Failures of the machine, not of judge (issue 29 §5): each is one `error:` or `warning:`
line naming the path or port and the fix, with the exit code its moment means, never a
traceback and "a bug in judge".

Run in subprocesses, as users meet them: a $GITHUB_STEP_SUMMARY that cannot be written (a
missing folder, a read-only file, a full device, a folder), `judge simulate` on a port that
is taken or privileged; and, in process, the safety net for an OSError of the world that
escapes to `cli/app.exits_with_code`.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from judgecli.errors import ConfigError
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.conftest import DATA

JUDGE = [sys.executable, "-m", "judgecli"]
OLD, NEW = DATA / "bad" / "good-old.jsonl", DATA / "bad" / "good-new.jsonl"
TIMEOUT_S = 120


def judge(*args: str, prefix: tuple[str, ...] = (), **env: str) -> subprocess.CompletedProcess[str]:
    """`judge ARGS` in a subprocess, in the test's folder and environment (plus `env`)."""
    return subprocess.run(
        [*prefix, *JUDGE, *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        env=os.environ | {"OPENAI_API_KEY": "sk-test-dummy"} | env,
    )


def without_root_override() -> tuple[str, ...]:
    """A prefix running a command as this user, but, for root, without the capabilities
    that let root write a read-only file or bind a port below 1024 (as for every other
    user, and for root in many containers).
    """
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: root writes read-only files")
    caps = "-dac_override,-dac_read_search,-net_bind_service"
    return (setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}")


def pairwise_failing_its_gate(server: SimulatorServer) -> list[str]:
    """A pairwise run whose gate fails on judged evidence (exit 1): no win rate reaches 1."""
    return [
        "pairwise",
        str(OLD),
        str(NEW),
        "--rubric",
        "pairwise",
        "--model",
        "openai/sim",
        "--api-base",
        f"{server.url}/v1",
        "--min-win-rate",
        "1",
        "--out",
        "run",
    ]


def read_only_file(tmp: Path) -> Path:
    path = tmp / "summary.md"
    path.write_text("# earlier steps\n", encoding="utf-8")
    path.chmod(0o444)
    return path


def a_folder(tmp: Path) -> Path:
    (tmp / "a-folder").mkdir()
    return tmp / "a-folder"


# Issue 29 (review 2026-11-27, finding 7): an unwritable GITHUB_STEP_SUMMARY crashed the run
# after all judging (exit 3, a traceback), and report.html and the JUnit file were lost.
@pytest.mark.parametrize(
    ("make", "reason", "as_user"),
    [
        pytest.param(
            lambda tmp: tmp / "no-such-folder" / "x.md",
            "No such file or directory",
            False,
            id="in-a-missing-folder",
        ),
        pytest.param(read_only_file, "Permission denied", True, id="a-read-only-file"),
        pytest.param(lambda tmp: Path("/dev/full"), "No space left on device", False, id="full"),
        pytest.param(a_folder, "Is a directory", False, id="a-folder"),
    ],
)
def test_a_step_summary_that_cannot_be_written_is_a_warning_and_the_gate_stands(
    judge_server, tmp_path, make, reason, as_user
):
    summary = make(tmp_path)
    if summary == Path("/dev/full") and not summary.exists():
        pytest.skip("no /dev/full here")
    before = summary.read_bytes() if make is read_only_file else None
    prefix = without_root_override() if as_user else ()
    run = judge(
        *pairwise_failing_its_gate(judge_server), prefix=prefix, GITHUB_STEP_SUMMARY=str(summary)
    )

    assert run.returncode == 1, run.stderr  # the gate failed on judged evidence, as without it
    assert "Traceback" not in run.stderr
    assert "unexpected crash" not in run.stderr
    warned = [line for line in run.stderr.splitlines() if "GITHUB_STEP_SUMMARY" in line]
    assert warned == [
        f"warning: cannot append the report to GITHUB_STEP_SUMMARY {summary}: {reason}; "
        "the run and its reports are not affected"
    ]
    for name in ("summary.json", "report.md", "report.html", "results.junit.xml"):
        assert (Path("run") / name).stat().st_size > 0, name
    assert json.loads(Path("run/summary.json").read_text())["gate"]["passed"] is False
    if before is not None:
        assert summary.read_bytes() == before


def test_a_writable_step_summary_gets_the_report(judge_server, tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier steps\n", encoding="utf-8")
    run = judge(*pairwise_failing_its_gate(judge_server), GITHUB_STEP_SUMMARY=str(summary))
    assert run.returncode == 1, run.stderr
    assert "warning: cannot append" not in run.stderr
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# earlier steps\n")
    assert Path("run/report.md").read_text(encoding="utf-8") in text


def listening_socket() -> socket.socket:
    """A socket listening on a free port of 127.0.0.1: that port is in use."""
    taken = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    return taken


# Issue 29 (review 2026-11-27, finding 10): a port in use printed a traceback and "a bug".
def test_simulate_on_a_port_in_use_exits_2_naming_the_port():
    with listening_socket() as taken:
        port = taken.getsockname()[1]
        run = judge("simulate", "--port", str(port))

    assert run.returncode == 2, run.stderr
    lines = run.stderr.splitlines()
    assert lines[0] == (
        f"error: port {port} is in use: pick another with --port (0 picks a free one)"
    )
    assert lines[1].startswith(f"hint: another process listens on 127.0.0.1:{port}")
    assert len(lines) == 2
    assert run.stdout == ""


def test_simulate_on_a_privileged_port_exits_2_saying_so():
    start = Path("/proc/sys/net/ipv4/ip_unprivileged_port_start")
    if start.exists() and int(start.read_text()) <= 80:
        pytest.skip("this machine lets anyone bind port 80")
    run = judge("simulate", "--port", "80", prefix=without_root_override())

    assert run.returncode == 2, run.stderr
    assert run.stderr.splitlines()[0] == (
        "error: port 80 needs privileges (ports below 1024 do): pick another with --port "
        "(0 picks a free one)"
    )
    assert "Traceback" not in run.stderr


def test_simulate_on_a_port_that_is_no_port_exits_2():
    run = judge("simulate", "--port", "70000")
    assert run.returncode == 2, run.stderr
    assert run.stderr.splitlines()[0] == "error: --port 70000 is not a TCP port (0 to 65535)"
    assert "Traceback" not in run.stderr


def test_an_address_this_machine_does_not_have_cannot_be_listened_on():
    # 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of this machine.
    with (
        pytest.raises(ConfigError, match=r"cannot listen on 192\.0\.2\.1:0: ") as raised,
        SimulatorServer(SimulatorConfig(host="192.0.2.1")),
    ):
        pass
    assert raised.value.hint == "pick another with --port (0 picks a free one)"


def test_a_simulator_started_twice_on_one_port_says_it_is_in_use():
    with SimulatorServer(SimulatorConfig()) as first:
        second = SimulatorServer(SimulatorConfig(port=first.port))
        with pytest.raises(ConfigError, match=rf"port {first.port} is in use"):
            second.start()


def crash_with(monkeypatch, error: BaseException) -> None:
    """The one way to reach the safety net from outside: an internal that raises."""
    from judgecli.commands import score

    def explode(*args, **kwargs):
        raise error

    monkeypatch.setattr(score, "score_job", explode)


# Issue 29 (§5): an OSError of the world that still escapes is said as one, not as a bug.
@pytest.mark.parametrize(
    ("error", "said"),
    [
        pytest.param(
            OSError(errno.ENOSPC, "No space left on device", "/runs/x/results.jsonl"),
            "error: /runs/x/results.jsonl: No space left on device (ENOSPC)",
            id="no-space",
        ),
        pytest.param(
            PermissionError(errno.EACCES, "Permission denied", "/runs/x/run.json"),
            "error: /runs/x/run.json: Permission denied (EACCES)",
            id="no-permission",
        ),
        pytest.param(
            OSError(errno.EROFS, "Read-only file system", "/mnt/ro/a", None, "/mnt/ro/b"),
            "error: /mnt/ro/a -> /mnt/ro/b: Read-only file system (EROFS)",
            id="read-only-rename",
        ),
        pytest.param(
            OSError(errno.EMFILE, "Too many open files"),
            "error: Too many open files (EMFILE)",
            id="too-many-files",
        ),
    ],
)
def test_an_escaped_failure_of_the_world_is_one_error_with_a_hint_and_exit_3(
    run_cli, judge_server, monkeypatch, error, said
):
    crash_with(monkeypatch, error)
    Path("d.jsonl").write_text('{"id": "a", "input": "q", "output": "a"}\n', encoding="utf-8")
    run = run_cli(judge_server, "score", "d.jsonl", "--rubric", "helpfulness")
    assert run.exit_code == 3
    lines = run.stderr.splitlines()
    assert lines[0] == said
    assert lines[1].startswith("hint: ")
    assert len(lines) == 2
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(TypeError("unsupported operand"), id="a-type-error"),
        pytest.param(FileNotFoundError(errno.ENOENT, "No such file", "x"), id="a-missing-file"),
    ],
)
def test_a_real_bug_keeps_its_traceback(run_cli, judge_server, monkeypatch, error):
    crash_with(monkeypatch, error)
    Path("d.jsonl").write_text('{"id": "a", "input": "q", "output": "a"}\n', encoding="utf-8")
    run = run_cli(judge_server, "score", "d.jsonl", "--rubric", "helpfulness")
    assert run.exit_code == 3
    assert "Traceback" in run.stderr
    assert "unexpected crash (a bug in judge; please report it)" in run.stderr
