"""Two agent versions' runs of the same tasks joined on id (issue 32): when a simulated user
drives the runs, each version meets its own user, so their user turns differ. That is
judged with a warning naming the ids; for plain conversations it stays an error."""

from __future__ import annotations

import json

import pytest

from judgecli.errors import DatasetError
from judgecli.inputs.pairs import iter_pairs, scan_pairs


def run(user_turns: list[str], *, tools: bool = True) -> list[dict]:
    messages: list[dict] = []
    for i, said in enumerate(user_turns):
        messages.append({"role": "user", "content": said})
        if tools:
            call = {
                "id": f"c{i}",
                "type": "function",
                "function": {"name": "look", "arguments": "{}"},
            }
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": "found"})
        messages.append({"role": "assistant", "content": f"answer {i}"})
    return messages


def write_runs(write, old_runs: dict[str, list[dict]], new_runs: dict[str, list[dict]], **extra):
    def lines(runs):
        return "".join(
            json.dumps({"id": k, "messages": v, **extra}) + "\n" for k, v in runs.items()
        )

    return write("a.jsonl", lines(old_runs)), write("b.jsonl", lines(new_runs))


def test_agent_runs_whose_simulated_users_differ_are_judged_with_a_warning(write):
    old, new = write_runs(
        write,
        {"t1": run(["Cancel order 7.", "Yes, go ahead."]), "t2": run(["Hi"])},
        {"t1": run(["Cancel order 7.", "Sure, do it."]), "t2": run(["Hi"])},
    )
    scan = scan_pairs(old, new, requires=["output"])
    assert scan.total == 2
    assert [p.id for p in iter_pairs(scan, requires=["output"])] == ["t1", "t2"]
    warning = next(w for w in scan.warnings if "user turns differ" in w)
    assert f"the user turns differ from {old} for 1 agent run(s) ('t1')" in warning
    assert "judged anyway" in warning


def test_plain_conversations_with_other_user_turns_are_still_an_error(write):
    old, new = write_runs(
        write,
        {"t1": run(["q1", "q2"], tools=False)},
        {"t1": run(["q1", "other"], tools=False)},
    )
    with pytest.raises(DatasetError, match="the user turns differ from .* for id 't1'"):
        scan_pairs(old, new, requires=["output"])


def test_an_agent_run_never_pairs_with_a_chat_of_other_user_turns(write):
    old, new = write_runs(
        write, {"t1": run(["q1"], tools=True)}, {"t1": run(["other"], tools=False)}
    )
    with pytest.raises(DatasetError, match="the user turns differ"):
        scan_pairs(old, new, requires=["output"])


# Issue 32: tau-bench's task 16 — neither version's agent called a tool; each met its own
# simulated user. Offered tools, they are runs, compared with the warning.
def test_runs_that_made_no_call_are_runs_when_their_cases_were_offered_tools(write):
    tools = [{"type": "function", "function": {"name": "look"}}]
    old, new = write_runs(
        write,
        {"t1": run(["Cancel order 7.", "Later."], tools=False)},
        {"t1": run(["Cancel order 7.", "Bye."], tools=False)},
        tools=tools,
    )
    scan = scan_pairs(old, new, requires=["output"])
    assert scan.total == 1
    assert any("user turns differ" in w for w in scan.warnings)


# Issue 32: a run that stopped on a tool result has no answer by its nature; the scan says
# so in those words, not as an "empty output".
def test_a_run_that_ended_on_a_tool_result_is_warned_of_as_such(write):
    stopped = run(["Cancel order 7."])[:-1]
    old, new = write_runs(write, {"t1": stopped}, {"t1": run(["Cancel order 7."])})
    scan = scan_pairs(old, new, requires=["output"])
    assert f"{old}: 1 agent run(s) ended on a tool result, with no final answer" in "\n".join(
        scan.warnings
    )
    assert not any('empty "output"' in w for w in scan.warnings)
