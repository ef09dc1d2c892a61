"""`judge view` over real runs made with the simulator, through its JSON API and pages over a
real socket: the runs list (new runs appear without a restart, unreadable ones say why in a
line), labels written at once in the brief's format (403 without the token), the blind A/B
order, the plan's inclusion probability, filters, a drift as `judge drift` computes it, no
path traversal, the Host check, the access token off loopback, and the command itself in a
subprocess (`--port 0`, a port in use). Issue 33.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgecli.cli.main import app
from judgecli.deciding.label_plan import LabelStrategy, plan_labels
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from judgecli.view.labelling import new_slot
from judgecli.view.server import ViewServer
from tests.integration.conftest import REPO

OLD, NEW = REPO / "datasets" / "old.jsonl", REPO / "datasets" / "new.jsonl"
EXAMPLE = REPO / "datasets" / "example.jsonl"
SALT = "a-salt-pinned-for-the-tests"


def judge(server: SimulatorServer, *args: str) -> None:
    """Run a judge command against the simulator, in-process."""
    env = {"OPENAI_API_KEY": "sk-test", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    argv = [*args, "--model", "openai/sim", "--api-base", f"{server.url}/v1"]
    result = CliRunner().invoke(app, argv, env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr


def make_runs(folder: Path) -> Path:
    """A folder with a score run, two pairwise runs of the same cases by two judges (one
    swayed by position), and a run this judge cannot read."""
    folder.mkdir(parents=True, exist_ok=True)
    with SimulatorServer(SimulatorConfig()) as server:
        judge(
            server, "score", str(EXAMPLE), "--rubric", "helpfulness", "--out", str(folder / "score")
        )
        judge(server, "pairwise", str(OLD), str(NEW), "--out", str(folder / "pair"))
    with SimulatorServer(SimulatorConfig(position_bias=0.4, seed=3)) as server:
        judge(server, "pairwise", str(OLD), str(NEW), "--out", str(folder / "pair-biased"))
    # A pinned blind-order salt: which raters see NEW as A is then known (new_slot).
    (folder / "pair" / "review-key.json").write_text(json.dumps({"salt": SALT, "codes": {}}))
    # A run whose summary this judge reads but whose results.jsonl a newer one wrote.
    shutil.copytree(folder / "score", folder / "newer-results")
    (folder / "newer-results" / "results.jsonl").write_text(
        '{"id": "q-01", "status": "teleported"}\n'
    )
    future = folder / "future"
    future.mkdir()
    (future / "run.json").write_text(json.dumps({"versions": {"judgecli": "9.0.0"}}))
    (future / "summary.json").write_text(json.dumps({"command": "teleport", "n_cases": 1}))
    (future / "results.jsonl").write_text('{"id": "x", "status": "beamed"}\n')
    return folder


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_runs(tmp_path_factory.mktemp("view") / "runs")


@dataclass
class Reply:
    status: int
    body: str
    headers: dict[str, str]

    @property
    def json(self):
        return json.loads(self.body)


def call(url: str, *, body: dict | None = None, headers: dict[str, str] | None = None) -> Reply:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, headers=headers or {}, method="POST" if data else "GET"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return Reply(reply.status, reply.read().decode(), dict(reply.headers))
    except urllib.error.HTTPError as err:
        return Reply(err.code, err.read().decode(), dict(err.headers))


@pytest.fixture(scope="module")
def view(runs: Path) -> Iterator[ViewServer]:
    with ViewServer([runs]) as server:
        yield server


def token_of(view: ViewServer) -> str:
    page = call(f"{view.url}/").body
    found = re.search(r'<meta name="judge-token" content="([^"]+)">', page)
    assert found, "the page carries no write token"
    return found.group(1)


def post_label(view: ViewServer, run: str, body: dict, token: str | None) -> Reply:
    headers = {"Content-Type": "application/json"} | ({"X-Judge-Token": token} if token else {})
    return call(f"{view.url}/api/runs/{run}/labels", body=body, headers=headers)


def label_lines(runs: Path, run: str, rater: str) -> list[dict]:
    path = runs / run / "labels" / f"{rater}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_the_runs_are_listed_by_name_with_their_headline_and_an_unreadable_one_says_why(view):
    listed = {r["name"]: r for r in call(f"{view.url}/api/runs").json}
    assert set(listed) == {"score", "pair", "pair-biased", "future", "newer-results"}
    assert listed["pair"]["command"] == "pairwise"
    assert "win rate" in listed["pair"]["headline"]
    assert re.search(r"\[\d+\.\d%, \d+\.\d%\]", listed["score"]["headline"])  # with its interval
    problem = listed["future"]["problem"]
    assert "cannot be read" in problem
    assert "written by judge 9.0.0" in problem
    page = call(f"{view.url}/")
    assert page.status == 200
    assert "teleport" in page.body
    assert "Traceback" not in page.body


def test_a_run_written_by_another_judge_is_refused_with_one_line_never_a_traceback(view):
    page = call(f"{view.url}/runs/future")
    assert page.status == 409
    assert "error: run future: cannot be read" in page.body
    assert "Traceback" not in page.body
    api = call(f"{view.url}/api/runs/future/cases")
    assert api.status == 409
    assert "cannot be read" in api.json["error"]


def test_results_this_judge_cannot_read_are_refused_with_the_file_and_line(view):
    page = call(f"{view.url}/runs/newer-results")
    assert page.status == 409
    assert "results.jsonl:1: not a judge results line" in page.body
    assert "Traceback" not in page.body
    assert call(f"{view.url}/api/runs/newer-results/case?id=q-01").status == 409


def test_a_new_run_appears_without_a_restart(view, runs: Path):
    shutil.copytree(runs / "score", runs / "score-copy")
    try:
        assert "score-copy" in {r["name"] for r in call(f"{view.url}/api/runs").json}
        assert call(f"{view.url}/runs/score-copy").status == 200
    finally:
        shutil.rmtree(runs / "score-copy")


def test_a_label_without_the_write_token_is_refused_with_403_and_nothing_is_written(view, runs):
    body = {"id": "q-01", "label": 3, "rater": "mallory"}
    assert post_label(view, "score", body, None).status == 403
    assert post_label(view, "score", body, "not-the-token").status == 403
    assert not (runs / "score" / "labels" / "mallory.jsonl").exists()


def test_a_label_with_the_token_is_written_at_once_in_the_files_format(view, runs):
    reply = post_label(
        view, "score", {"id": "q-02", "label": 4, "rater": "ann", "note": "clear"}, token_of(view)
    )
    assert reply.status == 200, reply.body
    (line,) = label_lines(runs, "score", "ann")
    assert {k: line[k] for k in ("id", "label", "rater", "note")} == {
        "id": "q-02",
        "label": 4.0,
        "rater": "ann",
        "note": "clear",
    }
    assert line["at"].endswith("Z")
    # Undo: null withdraws, and the case is unlabelled again for the API.
    assert (
        post_label(
            view, "score", {"id": "q-02", "label": None, "rater": "ann"}, token_of(view)
        ).status
        == 200
    )
    assert call(f"{view.url}/api/runs/score/labels?rater=ann").json == {"ann": {}}


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        pytest.param(
            {"id": "q-01", "label": 9, "rater": "ann"}, 400, "is not one of", id="off-scale"
        ),
        pytest.param(
            {"id": "q-01", "label": 3, "rater": "../../evil"},
            400,
            "not a usable name",
            id="rater-path",
        ),
        pytest.param({"id": "nope", "label": 3, "rater": "ann"}, 404, "no case", id="unknown-case"),
        pytest.param({"label": 3, "rater": "ann"}, 400, "a label is", id="no-id"),
    ],
)
def test_a_bad_label_is_refused_with_a_clear_line_and_nothing_is_written(
    view, runs, body, status, says
):
    reply = post_label(view, "score", body, token_of(view))
    assert reply.status == status
    assert says in reply.json["error"]
    assert not (runs / "evil.jsonl").exists()
    assert not (runs.parent / "evil.jsonl").exists()
    assert all(line["label"] != 9 for line in label_lines(runs, "score", "ann"))


def answer_a(page: str) -> str:
    found = re.search(r'id="answer-a"><h3>Answer A</h3><pre>(.*?)</pre>', page, re.S)
    assert found, "the labelling page shows no answer A"
    return found.group(1)


def test_a_pairwise_case_is_shown_blind_and_its_label_stored_as_the_winner(view, runs):
    case = call(f"{view.url}/api/runs/pair/case?id=p-03").json["result"]
    stored = {}
    names = (f"blind-{n}" for n in range(100))
    raters = {new_slot(SALT, 0, rater, "p-03"): rater for rater in names}
    assert set(raters) == {"A", "B"}
    for rater in raters.values():
        page = call(f"{view.url}/runs/pair/label?id=p-03&rater={rater}").body
        assert "judge" not in answer_a(page).lower()
        assert "winner" not in page.split('id="answer-a"')[1]  # no verdict on the page
        new_is_a = answer_a(page).startswith(case["case"]["output_new"][:40].replace("'", "&#x27;"))
        reply = post_label(
            view, "pair", {"id": "p-03", "label": "A", "rater": rater}, token_of(view)
        )
        assert reply.json["shown"] == "A"
        stored[rater] = (new_is_a, label_lines(runs, "pair", rater)[-1]["label"])
    assert all(label == ("new" if new_is_a else "old") for new_is_a, label in stored.values())
    assert len({new_is_a for new_is_a, _ in stored.values()}) == 2, "every rater saw one order"


def test_the_next_case_follows_the_plan_and_its_label_records_the_inclusion_probability(view, runs):
    plan = plan_labels(runs / "pair", budget=10, strategy=LabelStrategy.DISAGREEMENT)
    query = "rater=planner&strategy=disagreement&budget=10"
    first = call(f"{view.url}/api/runs/pair/next?{query}").json
    assert first["id"] == plan.cases[0].id
    assert first["inclusion_probability"] == pytest.approx(plan.cases[0].inclusion_probability)
    body = {
        "id": first["id"],
        "label": "tie",
        "rater": "planner",
        "strategy": "disagreement",
        "budget": 10,
    }
    assert post_label(view, "pair", body, token_of(view)).status == 200
    (line,) = label_lines(runs, "pair", "planner")
    assert line["inclusion_probability"] == pytest.approx(plan.cases[0].inclusion_probability)
    assert (line["strategy"], line["budget"]) == ("disagreement", 10)
    assert call(f"{view.url}/api/runs/pair/next?{query}").json["id"] == plan.cases[1].id
    redirect = call(f"{view.url}/runs/pair/label?{query}")  # the page goes there too
    assert f"label <code>{plan.cases[1].id}</code>" in redirect.body


def test_the_filters_keep_exactly_the_cases_they_name(view, runs):
    results = [
        json.loads(line)
        for line in (runs / "pair-biased" / "results.jsonl").read_text().splitlines()
    ]
    flipped = sorted(r["id"] for r in results if r.get("consistent") is False)
    assert 0 < len(flipped) < len(results)
    api = call(f"{view.url}/api/runs/pair-biased/cases?flag=orders-disagree").json
    assert sorted(r["id"] for r in api) == flipped
    page = call(f"{view.url}/runs/pair-biased?flag=orders-disagree").body
    assert sorted(re.findall(r'class="case-row" data-id="([^"]+)"', page)) == flipped
    category = results[0]["category"]
    api = call(f"{view.url}/api/runs/pair-biased/cases?category={category}").json
    assert {r["category"] for r in api} == {category}
    needle = results[0]["case"]["input"][:25]
    assert results[0]["id"] in {
        r["id"]
        for r in call(
            f"{view.url}/api/runs/pair-biased/cases?q={urllib.request.quote(needle)}"
        ).json
    }
    assert call(f"{view.url}/api/runs/pair-biased/cases?flag=bogus").status == 400


def test_a_case_is_shown_whole_with_both_orders_replies(view):
    page = call(f"{view.url}/runs/pair-biased/case?id=p-01").body
    assert "order old-new" in page
    assert "order new-old" in page
    assert "OLD output" in page
    assert "NEW output" in page
    assert "Simulated judgement" in page


def test_two_runs_compare_with_exactly_the_flips_judge_drift_finds(view, runs, tmp_path):
    out = tmp_path / "drift"
    result = CliRunner().invoke(
        app, ["drift", str(runs / "pair"), str(runs / "pair-biased"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.stderr
    flips = [json.loads(line)["id"] for line in (out / "flips.jsonl").read_text().splitlines()]
    assert flips, "the biased judge flipped no verdict: the test would prove nothing"
    api = call(f"{view.url}/api/compare?a=pair&b=pair-biased").json
    assert [f["id"] for f in api["flips"]] == flips
    page = call(f"{view.url}/compare?a=pair&b=pair-biased").body
    assert re.findall(r'<tr class="flip"><td><code>([^<]+)</code>', page) == flips
    assert f"/runs/pair-biased/case?id={flips[0]}" in page
    refused = call(f"{view.url}/compare?a=pair&b=score")
    assert refused.status == 400
    assert "error:" in refused.body
    assert "Traceback" not in refused.body


@pytest.mark.parametrize(
    "path",
    [
        "/runs/..%2F..%2F..%2Fetc",
        "/runs/%2e%2e/case?id=x",
        "/api/runs/..%2Fscore/cases",
        "/api/runs/score%2F..%2F..%2Fpasswd/case?id=q-01",
        "/runs/score/../../../../etc/passwd",
        "/static/../../etc/passwd",
        "/api/runs/score/case?id=../../run.json",
        "/runs/" + "%2e%2e%2f" * 6 + "etc%2fpasswd",
    ],
)
def test_no_path_reaches_a_file_outside_the_served_runs(view, path: str):
    reply = call(f"{view.url}{path}")
    assert reply.status in (400, 404), (path, reply.status)
    assert "root:" not in reply.body
    assert '"argv"' not in reply.body


def test_a_request_to_another_host_name_is_refused(view):
    request = urllib.request.Request(f"{view.url}/api/runs", headers={"Host": "attacker.example"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403


def test_off_loopback_every_request_needs_the_access_token_then_its_cookie(runs):
    with ViewServer([runs], host="0.0.0.0") as server:
        url = f"http://127.0.0.1:{server.port}"
        assert call(f"{url}/api/runs").status == 401
        assert "access token" in call(f"{url}/").body
        access = server.state.tokens.access
        first = call(f"{url}/api/runs?token={access}")
        assert first.status == 200
        cookie = first.headers["Set-Cookie"].split(";")[0]
        assert "HttpOnly" in first.headers["Set-Cookie"]
        assert "SameSite=Strict" in first.headers["Set-Cookie"]
        assert call(f"{url}/api/runs", headers={"Cookie": cookie}).status == 200
        assert call(f"{url}/api/runs?token=wrong").status == 401


def judge_view(*args: str) -> subprocess.Popen[str]:
    env = os.environ | {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.Popen(
        [sys.executable, "-m", "judgecli", "view", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_judge_view_prints_its_address_first_and_serves_it(runs):
    process = judge_view(str(runs), "--port", "0")
    try:
        first = process.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", first), first
        names = {r["name"] for r in call(f"{first}api/runs").json}
        assert "pair" in names
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_port_in_use_is_exit_2_naming_the_port():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = judge_view(".", "--port", str(port))
        out, err = process.communicate(timeout=60)
    assert process.returncode == 2
    assert f"error: port {port} is in use" in err
    assert "hint:" in err
    assert "Traceback" not in err
    assert out == ""


def test_labelling_a_case_opened_by_hand_asks_who_you_are_and_keeps_the_case(view):
    page = call(f"{view.url}/runs/pair/label?id=p-05").body
    assert '<form id="rater-form"' in page
    assert '<input type="hidden" name="id" value="p-05">' in page
    labelled = call(f"{view.url}/runs/pair/label?id=p-05&rater=hand").body
    assert "label <code>p-05</code>" in labelled
