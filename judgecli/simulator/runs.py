"""Agents' runs in a judge's prompt, as the simulator reads them, and what it makes of them.

A trajectory prompt shows a run in a `<trajectory>` fence (judgecli.inputs.trajectory):
turns fenced by role, each tool call a `<tool_call>name(args)</tool_call>` line of its
assistant turn, each result a `<tool name="...">` turn. A per-step prompt (`steps: each`)
also shows the step graded in a `<step>` fence; a pairwise prompt shows two runs as
`<output_a>` and `<output_b>`. Nothing here is a model: a run's quality (0..1) is simple
features of what it did, so that a better agent wins and a wasted step scores low:

* a whole run: the outcome (the final answer's text features against the task, the first
  user turn, as `content_score` reads an answer; 0.1 for a run that ended without one),
  times 1 - the share of its tool results that are errors (`Error: ...`), times 1 - the
  share of its calls that repeat an earlier identical call;
* a step: 0.15 when its result is an error, 0.25 when it repeats an earlier identical call
  (a wasted step; a retry after an error is none), 0.5 without a result, 0.85 otherwise.

Told the truth (`--truth` lines with `messages`: truth.py), the simulator answers a known
run's `label` and a known step's `step_labels` entry instead. A run and a step are matched
by what the prompt shows of them: the task, the calls made (up to the step), and of a whole
run its final answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from judgecli.simulator.wire import content_words

TURN = re.compile(r'<(system|user|assistant|tool)(?: name="[^"]*")?>\n(.*?)\n</\1>', re.DOTALL)
CALL = re.compile(r"<tool_call>(.*?)</tool_call>")
ERROR_PREFIXES = ("error", "exception", "traceback")


@dataclass(frozen=True)
class Run:
    """What the simulator reads of one run."""

    task: str
    """The first user turn."""
    answer: str
    """The final answer's text ("" when the run ended on a tool's result)."""
    calls: tuple[str, ...]
    """Every call made, as rendered (`name({args})`), in order."""
    results: tuple[str, ...]
    """Every tool result's text, in order (the k-th answers the k-th call, as exports
    write them)."""
    graded: str | None = None
    """A per-step prompt: the call graded (its `<step>`)."""
    graded_result: str | None = None
    """A per-step prompt: the graded call's result (None: none shown)."""

    @property
    def key(self) -> tuple[str, tuple[str, ...], str]:
        """How a truth file finds this run: its task, its calls and its answer."""
        return (self.task.strip(), self.calls, self.answer.strip())

    @property
    def step_key(self) -> tuple[str, tuple[str, ...]]:
        """How a truth file finds the step graded: its task and the calls up to it."""
        return (self.task.strip(), self.calls)


def agent_text(text: str | None) -> bool:
    """Whether a fenced text shows an agent's run: the tools it was offered, a call or a
    tool's result.
    """
    return text is not None and (
        text.startswith("<tools>\n") or "<tool_call>" in text or '<tool name="' in text
    )


def read_run(text: str, step: str | None = None) -> Run:
    """The run a `<trajectory>` (or a pairwise side) shows; `step`, a `<step>`'s text."""
    turns = [(role, body) for role, body in TURN.findall(text)]
    calls = tuple(
        call for role, body in turns if role == "assistant" for call in CALL.findall(body)
    )
    results = tuple(body for role, body in turns if role == "tool")
    task = next((body for role, body in turns if role == "user"), "")
    end = len(turns)
    while end and turns[end - 1][0] == "user":
        end -= 1
    answer = ""
    if end and turns[end - 1][0] == "assistant":
        answer = CALL.sub("", turns[end - 1][1]).strip()
    graded, graded_result = None, None
    if step is not None:
        shown = CALL.findall(step)
        graded = shown[-1] if shown else None
        answered = [body for role, body in TURN.findall(step) if role == "tool"]
        graded_result = answered[-1] if answered else None
    return Run(task, answer, calls, results, graded, graded_result)


def failed(result: str) -> bool:
    """Whether a tool's result reports an error."""
    return result.strip().lower().startswith(ERROR_PREFIXES)


def repeats(run: Run, at: int) -> bool:
    """Whether call `at` repeats an earlier identical call that did not fail (a retry after
    an error is no waste).
    """
    return any(
        run.calls[before] == run.calls[at]
        and not (before < len(run.results) and failed(run.results[before]))
        for before in range(at)
    )


def repeated(run: Run) -> int:
    """How many calls repeat an earlier identical call that did not fail."""
    return sum(repeats(run, at) for at in range(len(run.calls)))


def run_quality(run: Run, outcome: float) -> float:
    """A whole run's quality from its outcome's (module docstring)."""
    if not run.answer.strip():
        outcome = 0.1
    errors = sum(map(failed, run.results)) / max(1, len(run.results))
    wasted = repeated(run) / max(1, len(run.calls))
    return outcome * (1 - errors) * (1 - wasted)


def step_quality(run: Run) -> float:
    """The graded step's quality (module docstring); 0.5 for a run without a call."""
    if run.graded is None:
        return 0.5
    if run.graded_result is not None and failed(run.graded_result):
        return 0.15
    if run.calls and repeats(run, len(run.calls) - 1):
        return 0.25
    return 0.5 if run.graded_result is None else 0.85


def describe(run: Run) -> str:
    """What the quality was read from, for the verdict's reasoning."""
    if run.graded is not None:
        said = "an error" if run.graded_result and failed(run.graded_result) else "no error"
        again = ", a repeated call" if run.calls and repeats(run, len(run.calls) - 1) else ""
        return f"step {len(run.calls)} ({run.graded.split('(')[0]}): {said}{again}"
    errors = sum(map(failed, run.results))
    ending = "a final answer" if run.answer.strip() else "no final answer"
    return (
        f"{len(run.calls)} tool calls, {errors} errors, {repeated(run)} repeated, "
        f"{ending} ({len(content_words(run.answer))} content words)"
    )
