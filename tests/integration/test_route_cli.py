"""An OpenAI-compatible server is reached through LiteLLM's own HTTP handler rather than the
openai SDK (judge/route.py): the server must see the same request either way, with the
user's key, and every name the user sees stays the one they gave.
"""

from __future__ import annotations

import json

from judgecli.settings.judges import KEYLESS_PLACEHOLDER
from judgecli.simulator.server import SimulatorServer


def sent(server: SimulatorServer) -> list[tuple[dict, str]]:
    """Each request's body without its model name, and its Authorization header."""
    return [
        ({k: v for k, v in r.body.items() if k != "model"}, r.headers.get("authorization", ""))
        for r in server.requests
    ]


def score(run_cli, server, cases, out, model="openai/sim"):
    """`judge score CASES --rubric helpfulness` against the simulator, without the cache."""
    args = ("score", str(cases), "--rubric", "helpfulness", "--out", str(out), "--no-cache")
    return run_cli(server, *args, "--json", model=model)


def test_the_server_gets_the_sdks_request_and_the_users_key(
    run_cli, judge_server, cases_file, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-route-test-key")
    # A name LiteLLM prices goes through the SDK (its cost is LiteLLM's); an unpriced one not.
    through_sdk = score(run_cli, judge_server, cases_file, tmp_path / "sdk", "openai/gpt-4o-mini")
    assert through_sdk.exit_code == 0, through_sdk.stderr
    via_sdk = sent(judge_server)
    assert {r.headers["user-agent"].split("/")[0] for r in judge_server.requests} == {"AsyncOpenAI"}
    judge_server.reset()
    direct = score(run_cli, judge_server, cases_file, tmp_path / "direct")
    assert direct.exit_code == 0, direct.stderr
    assert {r.model for r in judge_server.requests} == {"sim"}
    assert {r.headers["user-agent"].split("/")[0] for r in judge_server.requests} == {"litellm"}
    assert sorted(sent(judge_server), key=json.dumps) == sorted(via_sdk, key=json.dumps)
    assert {auth for _, auth in via_sdk} == {"Bearer sk-route-test-key"}
    # What the user reads names the judge as they wrote it.
    run = json.loads((tmp_path / "direct" / "run.json").read_text(encoding="utf-8"))
    assert [m["name"] for m in run["models"]] == ["openai/sim"]
    results = (tmp_path / "direct" / "results.jsonl").read_text(encoding="utf-8")
    assert "hosted_vllm" not in results
    assert "hosted_vllm" not in direct.stdout


def test_a_keyless_server_gets_the_placeholder_key_as_before(
    run_cli, judge_server, cases_file, tmp_path, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # after run_cli set its dummy
    keyless = score(run_cli, judge_server, cases_file, tmp_path / "keyless")
    assert keyless.exit_code == 0, keyless.stderr
    assert {auth for _, auth in sent(judge_server)} == {f"Bearer {KEYLESS_PLACEHOLDER}"}
