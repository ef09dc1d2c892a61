"""The runtime guard's loop against a scripted judge (issue 31): an answer that passes is
kept at once, one below the bar is regenerated with the judges' feedback, the attempts are
bounded, the generator's own errors pass through, and an answer the judge could not grade
is an error, never an answer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator

import pytest

from judgecli import AsyncGuard, Guard, guard
from judgecli.errors import ConfigError, DatasetError, GradeError, JudgeWarning, RubricError
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.judge.protocol import JudgeRequest
from judgecli.rubric import Rubric
from tests.conftest import BINARY_YAML, POINTWISE_YAML
from tests.scripted import ScriptedJudge

JUDGE = "openai/judge"
QUESTION = "Why is the sky blue?"


@pytest.fixture
def rubric() -> Rubric:
    return parse_rubric(POINTWISE_YAML + "feedback: true\n", source="tiny.yaml")


@pytest.fixture
def scripted(monkeypatch) -> Callable[..., ScriptedJudge]:
    """scripted(scores) → the judge client every Judge made now gets: it gives `scores` in
    turn, each with feedback naming it ("advice 1", "advice 2", ...)."""

    def install(scores: list[int | str]) -> ScriptedJudge:
        replies = iter(scores)

        def respond(request: JudgeRequest) -> str:
            said = next(replies)
            if isinstance(said, str):  # a reply that is no verdict
                return said
            return json.dumps({"reasoning": "r", "score": said, "feedback": f"advice {said}"})

        client = ScriptedJudge(respond)
        monkeypatch.setattr("judgecli.running.judging.make_client", lambda config: client)
        monkeypatch.setattr("judgecli.judge.provider.check_endpoints", lambda *a, **k: None)
        return client

    return install


class Writer:
    """A generation function that answers a1, a2, ... and records what it was told."""

    def __init__(self) -> None:
        self.told: list[tuple[str, str | None]] = []

    def __call__(self, prompt: str, feedback: str | None) -> str:
        self.told.append((prompt, feedback))
        return f"a{len(self.told)}"


@pytest.fixture
def writer() -> Writer:
    return Writer()


@pytest.fixture
def guarded(writer, rubric) -> Iterator[Callable[..., Guard]]:
    made: list[Guard] = []

    def make(generate: Callable[[str, str | None], str] = writer, **settings) -> Guard:
        made.append(guard(generate, rubric=settings.pop("rubric", rubric), model=JUDGE, **settings))
        return made[-1]

    yield make
    for each in made:
        each.close()


def test_an_answer_that_passes_first_is_the_only_attempt(scripted, guarded, writer):
    client = scripted([4])
    result = guarded()(QUESTION)
    assert (result.answer, result.passed, result.verdict.score) == ("a1", True, 4.0)
    assert [(a.number, a.answer, a.passed) for a in result.attempts] == [(1, "a1", True)]
    assert writer.told == [(QUESTION, None)]
    assert len(client.history) == 1
    assert (result.usage.calls, result.usage.cost_usd) == (1, pytest.approx(0.001))


def test_an_answer_below_the_bar_is_regenerated_with_the_judges_feedback(scripted, guarded, writer):
    client = scripted([2, 4])
    result = guarded()(QUESTION)
    assert (result.answer, result.passed) == ("a2", True)
    assert [(a.verdict.score, a.passed, a.feedback) for a in result.attempts] == [
        (2.0, False, "advice 2"),
        (4.0, True, "advice 4"),
    ]
    [(_, first), (prompt, retry)] = writer.told
    assert (first, prompt) == (None, QUESTION)
    assert retry is not None
    assert "advice 2" in retry
    assert "a1" in retry
    assert "<output>\na2\n</output>" in client.history[1].messages[-1]["content"]
    assert result.usage.calls == 2  # both attempts' judging


def test_a_feedback_template_shapes_what_a_retry_is_told(scripted, guarded, writer):
    scripted([1, 4])
    guarded(feedback_template="Was {answer}. Fix: {feedback}")(QUESTION)
    assert writer.told[1][1] == "Was a1. Fix: advice 1"


def test_when_no_answer_passes_the_attempts_stop_and_the_best_is_returned(
    scripted, guarded, writer
):
    client = scripted([1, 2, 2, 4])
    result = guarded(max_attempts=3)(QUESTION)
    assert len(writer.told) == len(client.history) == 3  # the 4 is never asked for
    assert [a.verdict.score for a in result.attempts] == [1.0, 2.0, 2.0]
    assert not result.passed
    # The best scored; of equals the latest, which saw the most feedback.
    assert (result.answer, result.verdict.score) == ("a3", 2.0)
    assert result.verdict is result.attempts[2].verdict


def test_the_best_answer_may_be_an_earlier_one(scripted, guarded):
    scripted([2, 1])
    result = guarded(max_attempts=2)(QUESTION)
    assert (result.answer, result.passed) == ("a1", False)


def test_a_success_rating_above_pass_at_asks_for_more(scripted, guarded, writer):
    scripted([3, 4])
    result = guarded(success_rating=4)(QUESTION)
    assert [a.passed for a in result.attempts] == [False, True]
    assert result.attempts[0].verdict.passed  # the rubric's own pass_at is 3


def test_a_binary_rubric_passes_on_its_pass_choice(scripted, guarded, monkeypatch):
    choices = iter(["NO", "YES"])
    client = ScriptedJudge(lambda r: json.dumps({"reasoning": "r", "choice": next(choices)}))
    monkeypatch.setattr("judgecli.running.judging.make_client", lambda config: client)
    monkeypatch.setattr("judgecli.judge.provider.check_endpoints", lambda *a, **k: None)
    result = guarded(rubric=parse_rubric(BINARY_YAML, source="b.yaml"))(QUESTION)
    assert [a.passed for a in result.attempts] == [False, True]
    assert (result.answer, result.verdict.choice) == ("a2", "YES")


def test_an_async_generation_function_makes_an_async_guard(scripted, rubric):
    scripted([2, 4])
    told: list[str | None] = []

    async def generate(prompt: str, feedback: str | None) -> str:
        await asyncio.sleep(0)
        told.append(feedback)
        return f"async {len(told)}"

    async def main() -> None:
        async with guard(generate, rubric=rubric, model=JUDGE) as guarded:
            assert isinstance(guarded, AsyncGuard)
            result = await guarded(QUESTION)
        assert (result.answer, result.passed, len(result.attempts)) == ("async 2", True, 2)

    asyncio.run(main())
    assert told[0] is None
    assert told[1] is not None
    assert "advice 2" in told[1]


def test_a_callable_object_with_an_async_call_is_async_too(scripted, rubric):
    class Model:
        async def __call__(self, prompt: str, feedback: str | None) -> str:
            return "x"

    with guard(Model(), rubric=rubric, model=JUDGE) as guarded:
        assert isinstance(guarded, AsyncGuard)


def test_what_the_generation_function_raises_propagates_and_nothing_is_judged(scripted, guarded):
    client = scripted([4])

    def broken(prompt: str, feedback: str | None) -> str:
        raise ConnectionError("the model is down")

    with pytest.raises(ConnectionError, match="the model is down"):
        guarded(broken)(QUESTION)
    assert client.history == []


def test_a_generation_that_fails_on_a_retry_propagates_too(scripted, guarded):
    client = scripted([1])

    def once(prompt: str, feedback: str | None) -> str:
        if feedback is not None:
            raise TimeoutError("retry timed out")
        return "a1"

    with pytest.raises(TimeoutError):
        guarded(once)(QUESTION)
    assert len(client.history) == 1


def test_an_answer_the_judge_cannot_grade_is_a_grade_error_never_an_answer(
    scripted, guarded, writer
):
    client = scripted(["no verdict here"] * 3)
    with pytest.raises(GradeError) as caught:
        guarded(max_retries=1)(QUESTION)
    assert "no verdict here" in caught.value.raw
    assert len(writer.told) == 1  # no retry on an answer nobody judged
    assert len(client.history) >= 1


def test_an_answer_that_is_not_a_str_is_a_type_error(scripted, guarded):
    scripted([4])
    with pytest.raises(TypeError, match="generate returned NoneType, not a str"):
        guarded(lambda prompt, feedback: None)(QUESTION)  # type: ignore[arg-type,return-value]


def test_a_def_that_returns_a_coroutine_is_told_to_be_async_def(scripted, guarded):
    scripted([4])

    async def answer() -> str:
        return "x"

    with pytest.raises(TypeError, match="async def"):
        guarded(lambda prompt, feedback: answer())(QUESTION)  # type: ignore[arg-type]


def test_a_field_the_rubric_requires_is_checked_before_anything_is_generated(
    scripted, guarded, writer
):
    client = scripted([4])
    rubric = parse_rubric(
        POINTWISE_YAML.replace("[input, output]", "[input, output, reference]").replace(
            "Answer: {output}", "Answer: {output}\n    Reference: {reference}"
        ),
        source="ref.yaml",
    )
    with pytest.raises(DatasetError, match='guard: missing required field "reference"'):
        guarded(rubric=rubric)(QUESTION)
    assert writer.told == []
    guarded(rubric=rubric)(QUESTION, reference="Rayleigh scattering")
    assert "<reference>\nRayleigh scattering\n" in client.history[0].messages[-1]["content"]


def test_a_panels_feedback_names_each_judge(scripted, rubric, writer):
    client = ScriptedJudge(
        lambda r: json.dumps({"reasoning": "r", "score": 1, "feedback": f"from {r.model}"})
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("judgecli.running.judging.make_client", lambda config: client)
        patch.setattr("judgecli.judge.provider.check_endpoints", lambda *a, **k: None)
        with guard(writer, rubric=rubric, model=["openai/a", "openai/b"], max_attempts=2) as g:
            g(QUESTION)
    retry = writer.told[1][1]
    assert retry is not None
    assert "- openai/a: from openai/a\n- openai/b: from openai/b" in retry


# --- settings, checked before anything is called ------------------------------------------


@pytest.mark.parametrize(
    ("settings", "error", "message"),
    [
        pytest.param({"max_attempts": 0}, ConfigError, "at least 1", id="no-attempts"),
        pytest.param({"max_attempts": 2.5}, TypeError, "must be an int", id="attempts-float"),
        pytest.param(
            {"feedback_template": "{answer}"}, ConfigError, "no {feedback}", id="no-feedback"
        ),
        pytest.param({"success_rating": 9}, ConfigError, "outside the scale", id="off-scale"),
        pytest.param({"rubric": "pairwise"}, RubricError, "pairwise", id="pairwise"),
        pytest.param({"concurency": 2}, TypeError, "did you mean concurrency", id="typo"),
        pytest.param({"field": {"output": "a"}}, TypeError, "takes no 'field'", id="field"),
        pytest.param({"flip_policy": "vote"}, TypeError, "flip_policy", id="pairwise-only"),
    ],
)
def test_bad_settings_are_refused_when_the_guard_is_made(rubric, writer, settings, error, message):
    with pytest.raises(error, match=message.replace("{", r"\{")):
        guard(writer, **({"rubric": rubric, "model": JUDGE} | settings))
    assert writer.told == []


def test_the_same_model_generating_and_judging_is_warned_about(rubric, writer):
    with pytest.warns(JudgeWarning, match="self-preference"):
        guard(writer, rubric=rubric, model=JUDGE, generator=JUDGE).close()


def test_a_generator_that_does_not_judge_is_not_warned_about(rubric, writer, recwarn):
    guard(writer, rubric=rubric, model=JUDGE, generator="openai/other").close()
    assert not [w for w in recwarn if issubclass(w.category, JudgeWarning)]


def test_something_not_callable_is_refused(rubric):
    with pytest.raises(TypeError, match="generation function"):
        guard("gpt-4o", rubric=rubric, model=JUDGE)  # type: ignore[call-overload]
