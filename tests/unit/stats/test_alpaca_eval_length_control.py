"""judge's length-controlled fits on AlpacaEval 2's own data (issue 29): GPT-4 Turbo's recorded
preference probabilities for 51 models against gpt4_1106_preview, from
tests/data/alpaca_eval (SOURCE.md says where each number pinned here comes from).

What is checked, and against what:
- the two-system fit (`judge pairwise`'s: no instruction term) against AlpacaEval's own
  `glm_winrate` with `length_controlled_minimal`, the same model;
- the joint fit with the instruction-difficulty term (`judge arena`'s) against AlpacaEval's
  own two steps (its notebook's joint fit, then `length_controlled_noreg`) on the same 52
  models;
- the published leaderboard: how far each is from it, and that the rest of the gap is the
  regularisation towards gamed baselines whose data AlpacaEval does not publish.
"""

from __future__ import annotations

import csv
import gzip
from collections import defaultdict

import numpy as np
import pytest

from judgecli.stats.instruction_difficulty import Contests, joint_length_control
from judgecli.stats.length_control import length_controlled_win_rate
from tests.conftest import DATA

HERE = DATA / "alpaca_eval"
BASELINE = "gpt4_1106_preview"

# AlpacaEval's glm_winrate.get_length_controlled_winrate(glm_name="length_controlled_noreg")
# with γ from its notebooks/instruction_difficulty.ipynb joint fit, on the models of
# annotations.csv.gz (run once; SOURCE.md). In percent.
ALPACA_EVAL_NOREG = {
    "FuseChat-Gemma-2-9B-Instruct": 69.97591859057101,
    "FuseChat-Llama-3.1-8B-Instruct": 64.83368149177893,
    "FuseChat-Llama-3.2-1B-Instruct": 25.396788674697202,
    "FuseChat-Llama-3.2-3B-Instruct": 53.22368825102004,
    "FuseChat-Qwen-2.5-7B-Instruct": 63.56429299747368,
    "Mixtral-8x7B-Instruct-v0.1_concise": 24.879519724103442,
    "NullModel": 84.50305801261715,
    "OpenHermes-2.5-Mistral-7B": 15.195946737285858,
    "Qwen-14B-Chat": 12.246691564526065,
    "alpaca-7b": 7.576915562450518,
    "alpaca-farm-ppo-human": 6.454017242978304,
    "alpaca-farm-ppo-sim-gpt4-20k": 7.544774056952629,
    "baize-v2-13b": 6.0374494041009035,
    "chatglm2-6b": 4.805085818928724,
    "claude-2.1": 27.609203127321102,
    "claude-2.1_concise": 18.3140323716762,
    "claude-2": 30.632413249917995,
    "claude-instant-1.2": 27.045534850621245,
    "claude": 29.494419895233925,
    "falcon-40b-instruct": 5.588022558081125,
    "falcon-7b-instruct": 3.9580616951101573,
    "gemma-2b-it": 5.189647889715792,
    "gemma-7b-it": 9.924708935579417,
    "gpt-3.5-turbo-0301": 18.20433705793725,
    "gpt-3.5-turbo-1106": 22.56404866219896,
    "gpt-3.5-turbo-1106_concise": 16.756461579309644,
    "gpt-3.5-turbo-1106_verbose": 23.878950629806113,
    "gpt4_0613_concise": 27.169875515481827,
    "gpt4_gamed": 28.563631935330804,
    "humpback-llama2-70b": 17.45234113024075,
    "jina-chat": 19.333677902810344,
    "minichat-3b": 6.14948581995593,
    "nous-hermes-13b": 9.651357638824923,
    "oasst-rlhf-llama-33b": 7.612394922100176,
    "oasst-sft-llama-33b": 10.46408707755878,
    "oasst-sft-pythia-12b": 3.237028384501258,
    "openbuddy-falcon-40b-v9": 8.981363717256913,
    "openbuddy-llama-30b-v7.1": 10.236092248250529,
    "openbuddy-llama2-13b-v11.1": 9.062798484724507,
    "openbuddy-llama2-70b-v10.1": 11.224397780013112,
    "phi-2-sft": 5.030304171505371,
    "pythia-12b-mix-sft": 3.6058442099329016,
    "text_davinci_003": 5.107156752076544,
    "ultralm-13b": 6.712947526880796,
    "vicuna-13b-v1.5-togetherai": 11.576689494501792,
    "vicuna-13b-v1.5": 9.846984561242024,
    "vicuna-13b": 8.717819089335986,
    "vicuna-7b-v1.3": 7.266787296926433,
    "vicuna-7b-v1.5": 7.223881817251995,
    "vicuna-7b": 5.915368066038361,
    "wizardlm-13b": 9.762787692799762,
}
# AlpacaEval's get_length_controlled_winrate(glm_name="length_controlled_minimal"): its GLM
# without the instruction term, with its L1 penalty chosen by cross-validation.
ALPACA_EVAL_MINIMAL = {
    "gpt-3.5-turbo-1106": 37.773728433974604,
    "claude-2": 36.78125854014985,
    "alpaca-7b": 19.549396078011164,
}


def annotations() -> dict[str, list[tuple[int, float, int, int]]]:
    """Per model: (instruction index, preference in [1, 2], len baseline, len model)."""
    rows: dict[str, list[tuple[int, float, int, int]]] = defaultdict(list)
    with gzip.open(HERE / "annotations.csv.gz", "rt", newline="") as f:
        for r in csv.DictReader(f):
            rows[r["model"]].append(
                (int(r["index"]), float(r["preference"]), int(r["len_1"]), int(r["len_2"]))
            )
    return dict(rows)


def table(name: str) -> dict[str, dict[str, float]]:
    with (HERE / name).open(newline="") as f:
        return {r[""]: {k: float(v) for k, v in r.items() if k} for r in csv.DictReader(f)}


@pytest.fixture(scope="module")
def data() -> dict[str, list[tuple[int, float, int, int]]]:
    return annotations()


def outcome(preference: float) -> float:
    """AlpacaEval's reading: preference − 1 (a 0, "no preference", is a tie)."""
    return 0.5 if preference == 0 else preference - 1.0


def model_arrays(rows: list[tuple[int, float, int, int]]) -> tuple[np.ndarray, ...]:
    """Index, outcome, len_model − len_baseline; empty answers left out as AlpacaEval does."""
    kept = [r for r in rows if r[3] != 0]
    return (
        np.array([r[0] for r in kept]),
        np.array([outcome(r[1]) for r in kept]),
        np.array([r[3] - r[2] for r in kept], dtype=float),
    )


@pytest.fixture(scope="module")
def joint(data):
    """judge arena's joint fit over every model but the baseline (its self-ties are the
    baseline's own annotations, every one 1.5)."""
    models = sorted(m for m in data if m != BASELINE)
    parts = [model_arrays(data[m]) for m in models]
    contests = Contests.of(
        np.concatenate([np.full(p[0].size, k) for k, p in enumerate(parts)]),
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
        n_systems=len(models),
        n_cases=805,
    )
    fit = joint_length_control(contests, resamples=1)
    rates = {m: None if r is None else 100 * r for m, r in zip(models, fit.win_rate, strict=True)}
    return fit, rates, models


def test_the_data_is_alpaca_eval_2s_leaderboard_of_gpt4_turbo_preferences(data):
    board = table("leaderboard.csv")
    assert len(data) == 52
    assert all(len(rows) == 805 for rows in data.values())
    assert {p for _, p, _, _ in data[BASELINE]} == {1.5}
    # The published raw win rate is the mean preference − 1: the file is the published data.
    for model, published in board.items():
        y = [outcome(p) for _, p, _, _ in data[model]]
        assert 100 * np.mean(y) == pytest.approx(published["win_rate"], abs=1e-6), model


def test_the_two_system_fit_on_written_verdicts_is_the_issues_37_1_percent(data):
    # Issue 29: judge reported 37.1% for gpt-3.5-turbo-1106 where AlpacaEval publishes
    # 19.3%. It had fitted the written verdicts (the more likely side of each probability).
    index, y, d = model_arrays(data["gpt-3.5-turbo-1106"])
    verdicts = np.where(y > 0.5, 1.0, np.where(y < 0.5, 0.0, 0.5))
    fit = length_controlled_win_rate(verdicts, d, resamples=1)
    assert 100 * fit.win_rate == pytest.approx(37.070162, abs=1e-4)


@pytest.mark.parametrize("model", sorted(ALPACA_EVAL_MINIMAL))
def test_the_two_system_fit_on_probabilities_is_alpaca_evals_glm_without_the_instruction_term(
    data, model
):
    index, y, d = model_arrays(data[model])
    fit = length_controlled_win_rate(y, d, resamples=1)
    # judge's maximum likelihood against AlpacaEval's L1-penalised fit of the same model:
    # the penalty (C chosen by cross-validation) moves it by 0.01 to 0.29 points.
    assert 100 * fit.win_rate == pytest.approx(ALPACA_EVAL_MINIMAL[model], abs=0.3)
    assert 100 * fit.win_rate == pytest.approx(
        {"gpt-3.5-turbo-1106": 37.8030, "claude-2": 36.7943, "alpaca-7b": 19.8346}[model],
        abs=1e-3,
    )


def test_the_joint_fit_with_the_instruction_term_is_alpaca_evals_own_two_steps(joint):
    fit, rates, models = joint
    fitted = {m: r for m, r in rates.items() if r is not None}
    # gpt4_gamed answers in 68 characters whatever the question: its length term and its
    # intercept are one column, which AlpacaEval's L1 penalty settles and maximum
    # likelihood cannot (its φ runs past ±10).
    assert set(models) - set(fitted) == {"gpt4_gamed"}
    gaps = {m: fitted[m] - ALPACA_EVAL_NOREG[m] for m in fitted}
    assert max(abs(g) for g in gaps.values()) < 1.0
    assert np.mean([abs(g) for g in gaps.values()]) < 0.3
    for model, expected in {
        "gpt-3.5-turbo-1106": 23.326,
        "claude-2": 31.284,
        "alpaca-7b": 7.875,
        "Qwen-14B-Chat": 12.465,
    }.items():
        assert rates[model] == pytest.approx(expected, abs=0.01), model
        assert rates[model] == pytest.approx(ALPACA_EVAL_NOREG[model], abs=0.8), model


def test_the_instruction_term_takes_gpt35_most_of_the_way_from_37_8_to_the_published_19_3(
    data, joint
):
    _, rates, _ = joint
    published = table("leaderboard.csv")
    index, y, d = model_arrays(data["gpt-3.5-turbo-1106"])
    two_system = 100 * length_controlled_win_rate(y, d, resamples=1).win_rate
    gap_before = two_system - published["gpt-3.5-turbo-1106"]["length_controlled_winrate"]
    gap_after = (
        rates["gpt-3.5-turbo-1106"] - published["gpt-3.5-turbo-1106"]["length_controlled_winrate"]
    )
    assert gap_before > 18
    assert 0 < gap_after < 4.1
    # Over the leaderboard the joint fit is within 7 points of every published rate but the
    # adversarial gpt4_gamed (AlpacaEval's regularisation exists for it), 1.2 on average.
    gaps = [
        rates[model] - row["length_controlled_winrate"]
        for model, row in published.items()
        if model not in ("gpt4_gamed", BASELINE)
    ]
    assert max(np.abs(gaps)) < 7.0
    assert np.mean(np.abs(gaps)) < 1.3


def test_with_the_published_length_weight_judges_instruction_term_gives_the_published_rates(
    data, joint
):
    """The published fit differs from AlpacaEval's own unregularised one mainly in its length
    coefficient, which rows of two gamed baselines (not published) pulled towards the length
    effect alone. Held at the published value, judge's γ gives the published rates.
    """
    sm = pytest.importorskip("statsmodels.api")
    fit, _, _ = joint
    weights, published = table("weights.csv"), table("leaderboard.csv")
    gaps = {}
    for model in published:
        if model in ("gpt4_gamed", BASELINE):
            continue
        index, y, d = model_arrays(data[model])
        x = np.tanh(d / np.std(d, ddof=1))
        # AlpacaEval's length feature is len_baseline − len_model: the opposite sign.
        phi = -weights[model]["np.tanh(std_delta_len)"]
        gamma = fit.difficulty[index]
        glm = sm.GLM(y, sm.add_constant(gamma), family=sm.families.Binomial(), offset=phi * x)
        theta, psi = glm.fit().params
        rate = 100 * np.mean(1 / (1 + np.exp(-(theta + psi * gamma))))
        gaps[model] = rate - published[model]["length_controlled_winrate"]
    assert abs(gaps["gpt-3.5-turbo-1106"]) < 0.15  # 19.41 against 19.30
    assert np.mean([abs(g) for g in gaps.values()]) < 0.45
    assert np.median([abs(g) for g in gaps.values()]) < 0.3
