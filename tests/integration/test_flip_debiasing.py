"""Flip-debiasing, simulated: with a position-biased judge and a known truth, asking in both
orders recovers the true win rate and asking in one order does not.

The judge is the simulator with ``position_bias = p = 0.3``. Its pairwise rule for one
order shown (``simulator.verdicts.Judgement.winner``), with d = quality(A) - quality(B):

* strong preference, |d| >= 0.15: the better answer, whatever the order;
* weak preference, |d| < 0.15: "A" with probability p, otherwise the better answer if
  |d| >= 0.03, else "tie". The draw is seeded per order shown, so the two orders of one
  pair draw independently.

The truth of a case is the same rule with p = 0, scored from NEW's side: 1 (NEW better),
0 (OLD better) or 0.5 (tie). The dataset is built to order with the simulator's own
``quality`` (the first drafts whose gap lands in the band), n = 400:

==========  =====  =====================================
stratum     cases  d = quality(NEW) - quality(OLD)
==========  =====  =====================================
new-strong    105  >= 0.20
old-strong      5  <= -0.20
new-weak      135  0.05 .. 0.12
old-weak      135  -0.12 .. -0.05
tie            20  -0.015 .. 0.015 (weak by definition)
==========  =====  =====================================

The true ties-half win rate is (105 + 135 + 20 / 2) / 400 = 0.625; its 95% bootstrap
interval over cases is about +-0.046 (sd of one outcome 0.47), i.e. [0.58, 0.67].

Expected outcome of one case under each estimator (the single order shows OLD as A):

==========  =====  ======================  ==================================
stratum     truth  single order            flip-reconciled (tie policy)
==========  =====  ======================  ==================================
strong      1 / 0  1 / 0                   1 / 0
new-weak      1    1 - p = 0.70            both orders NEW w.p. 1 - p, else a
                                           tie: 1 - p / 2 = 0.85
old-weak      0    0                       p / 2 = 0.15
tie          0.5   (1 - p) / 2 = 0.35      0.5 (every combination is a tie)
==========  =====  ======================  ==================================

Single order: a weak NEW win goes to OLD with probability p and nothing pulls the other
way, so the rate is low by p (w_new + w_tie / 2) / n = 0.3 * 145 / 400 = 0.109:
expected 0.516 +- 0.014 (sd of the judge's draws), about 4.5 sd below the interval's
lower bound. The harness that always shows OLD first calls a clearly better NEW "even".

Flip-reconciled: in the order that shows the better answer first the bias agrees with
the truth, so only the other order can flip, and the disagreement becomes a tie. Every
weak decided pair is thus shrunk towards a tie by p / 2, whichever side won; a weak true
tie stays a tie. The rate is off by (p / 2)(w_old - w_new) / n, which is zero here
because the weak wins and losses balance: expected 0.625 +- 0.0094, so the interval's
half-width is 4.9 sd. The vote policy has the same expectations (it differs only on a
decided verdict against a tie, which needs a weak true tie, and those split evenly).

The qualification, then: flip-reconciling removes the position bias only when the weak
preferences are balanced. Had NEW's advantage come from weak wins (say 300 weak wins,
80 weak losses, 20 ties: truth 0.775, interval about [0.74, 0.81]), the reconciled rate
would be low by 0.15 * 220 / 400 = 0.083, outside the interval on the single order's
side at about a third of its error (0.233). The test checks the shrinkage on each weak
stratum (about 0.85 and 0.15 instead of 1 and 0), so the balance the claim rests on is
shown, not assumed. The drop policy is not claimed: it removes inconsistent pairs, which
reweights the sample towards strong ones (expected 0.66 here, at the interval's edge).

No seed was searched for: every tolerance is 4 sd of the judge's draws, computed from
the strata.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import sqrt
from pathlib import Path

import pytest

from judgecli.grading.debias import to_winner
from judgecli.result import Order, Winner
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from judgecli.simulator.verdicts import Judgement, Transcript, quality
from judgecli.stats.pairwise import win_rate, win_rate_bootstrap_interval
from judgecli.store import read_results
from judgecli.verdict import Position
from tests.integration.conftest import write_jsonl

SEED = 11
POSITION_BIAS = 0.3
MODEL = "sim"  # what LiteLLM sends for --model openai/sim
OUTCOME = {Winner.NEW: 1.0, Winner.TIE: 0.5, Winner.OLD: 0.0}
TOPICS = ("caching", "indexes", "retries", "backups", "logging", "sharding", "queues", "alerts")
WORDS = ("plan", "measure", "review", "document", "automate", "monitor", "rollback", "verify")
MAX_DRAFTS = 2000


@dataclass(frozen=True)
class Stratum:
    """How many cases have a quality gap NEW - OLD inside [low, high], and their truth."""

    name: str
    count: int
    low: float
    high: float
    truth: Winner
    weak: bool


STRATA = (
    Stratum("new-strong", 105, 0.20, 1.0, Winner.NEW, weak=False),
    Stratum("old-strong", 5, -1.0, -0.20, Winner.OLD, weak=False),
    Stratum("new-weak", 135, 0.05, 0.12, Winner.NEW, weak=True),
    Stratum("old-weak", 135, -0.12, -0.05, Winner.OLD, weak=True),
    Stratum("tie", 20, -0.015, 0.015, Winner.TIE, weak=True),
)


@dataclass(frozen=True)
class SimCase:
    id: str
    stratum: Stratum
    input: str
    old: str
    new: str

    def row(self, output: str) -> dict[str, str]:
        return {"id": self.id, "input": self.input, "output": output}


def question(number: int) -> str:
    return f"How should a small team approach {TOPICS[number % len(TOPICS)]} for service {number}?"


def draft(number: int, author: str, attempt: int) -> str:
    """A plausible answer; the attempt varies its length and wording (hence its quality)."""
    size = 8 + (attempt * 7) % 14
    body = " ".join(WORDS[(number + attempt + k) % len(WORDS)] for k in range(size))
    return f"For {TOPICS[number % len(TOPICS)]} on service {number}: {body} ({author} {attempt})."


def gap(prompt: str, old: str, new: str) -> float:
    def q(output: str) -> float:
        return quality(prompt, output, model=MODEL, seed=SEED)

    return q(new) - q(old)


def build_cases() -> list[SimCase]:
    """For each case, the first drafts whose quality gap lands in the stratum's band."""
    cases: list[SimCase] = []
    for stratum in STRATA:
        for _ in range(stratum.count):
            number = len(cases)
            prompt = question(number)
            for attempt in range(MAX_DRAFTS):
                old, new = draft(number, "old", attempt), draft(number, "new", attempt)
                if stratum.low <= gap(prompt, old, new) <= stratum.high:
                    break
            else:
                raise AssertionError(f"no drafts for case {number} in stratum {stratum.name}")
            cases.append(SimCase(f"case-{number:03d}", stratum, prompt, old, new))
    return cases


def simulated_winner(case: SimCase, order: Order, position_bias: float) -> Winner:
    """The simulator's verdict for one order shown, mapped back to OLD/NEW."""
    a, b = (case.old, case.new) if order is Order.OLD_NEW else (case.new, case.old)
    transcript = Transcript(
        input_text=case.input, output="", reference=None, output_a=a, output_b=b
    )
    judgement = Judgement(transcript, model=MODEL, seed=SEED, position_bias=position_bias)
    return to_winner(Position(judgement.winner()), order)


def weak(case: SimCase) -> bool:
    """A judge that always prefers A when unsure says "A" in both orders only on weak pairs."""
    fully_biased = [simulated_winner(case, order, 1.0) for order in Order]
    return fully_biased == [to_winner(Position.A, order) for order in Order]


def rate(outcomes: list[float]) -> float:
    return sum(outcomes) / len(outcomes)


@pytest.fixture(scope="module")
def cases() -> list[SimCase]:
    return build_cases()


def test_the_dataset_has_the_designed_truth(cases):
    for case in cases:
        assert simulated_winner(case, Order.NEW_OLD, 0.0) is case.stratum.truth, case.id
        assert simulated_winner(case, Order.OLD_NEW, 0.0) is case.stratum.truth, case.id
        assert weak(case) is case.stratum.weak, case.id


def pair_files(cases: list[SimCase], directory: Path) -> tuple[Path, Path]:
    """OLD.jsonl and NEW.jsonl: the same ids and inputs, each system's answer as output."""
    old = write_jsonl(directory / "old.jsonl", (c.row(c.old) for c in cases))
    new = write_jsonl(directory / "new.jsonl", (c.row(c.new) for c in cases))
    return old, new


def test_flip_reconciled_win_rate_recovers_the_truth_and_single_order_does_not(
    run_cli, cases, tmp_path
):
    n = len(cases)
    # The truth by the simulator's own rule without bias, and which pairs the bias can touch.
    true_winners = [simulated_winner(case, Order.NEW_OLD, 0.0) for case in cases]
    weak_pairs = [weak(case) for case in cases]
    truth = [OUTCOME[w] for w in true_winners]
    counts = {w: true_winners.count(w) for w in Winner}
    true_rate = win_rate(counts[Winner.NEW], counts[Winner.OLD], counts[Winner.TIE])
    low, high = win_rate_bootstrap_interval(truth)
    assert low is not None
    assert high is not None
    assert true_rate is not None
    assert low > 0.5  # NEW is truly better, and the data can tell

    old, new = pair_files(cases, tmp_path)
    config = SimulatorConfig(position_bias=POSITION_BIAS, seed=SEED)
    with SimulatorServer(config) as server:
        # Verdicts depend on the texts, not on arrival order; 64 in flight keeps this under 10 s.
        run = run_cli(
            server,
            "pairwise",
            str(old),
            str(new),
            "--rubric",
            "pairwise",
            "--out",
            "run",
            "--json",
            "--quiet",
            "--concurrency",
            "64",
        )
        requests = server.requests
    assert run.exit_code == 0, run.stderr
    summary = run.summary
    assert (summary["n_ok"], summary["flip_policy"]) == (n, "tie")
    # Every case in both orders, to the model the truth was computed for.
    assert len(requests) == 2 * n
    assert {r.model for r in requests} == {MODEL}

    results = {r.id: r for r in read_results(Path("run") / "results.jsonl")}
    assert sorted(results) == [case.id for case in cases]
    single, reconciled_outcomes = [], []
    for case in cases:
        result = results[case.id]
        assert result.winner is not None
        reconciled_outcomes.append(OUTCOME[result.winner])
        assert len(result.judgements) == 2
        assert {j.order for j in result.judgements} == set(Order)
        (first,) = (j for j in result.judgements if j.order is Order.OLD_NEW)
        assert first.verdict is not None
        assert first.verdict.winner is not None
        single.append(OUTCOME[to_winner(first.verdict.winner, Order.OLD_NEW)])
    reconciled, single_rate = summary["win_rate"], rate(single)
    assert reconciled == pytest.approx(rate(reconciled_outcomes))

    # Expected values and sds of the judge's draws, from the strata (see the docstring).
    p, pq = POSITION_BIAS, POSITION_BIAS * (1 - POSITION_BIAS)
    weak_winners = [w for w, is_weak in zip(true_winners, weak_pairs, strict=True) if is_weak]
    w_new, w_old, w_tie = (weak_winners.count(w) for w in (Winner.NEW, Winner.OLD, Winner.TIE))
    assert w_new == w_old  # the balance that makes the reconciled rate unbiased
    reconciled_sd = sqrt((w_new + w_old) * pq / 4) / n
    single_expected = true_rate - p * (w_new + w_tie / 2) / n
    single_sd = sqrt(w_new * pq + w_tie * pq / 4) / n
    numbers = (
        f"truth {true_rate:.4f} [{low:.4f}, {high:.4f}]; reconciled {reconciled:.4f} "
        f"(expected {true_rate:.4f} +- {reconciled_sd:.4f}); single order {single_rate:.4f} "
        f"(expected {single_expected:.4f} +- {single_sd:.4f})"
    )
    assert low <= reconciled <= high, numbers
    assert abs(reconciled - true_rate) < 4 * reconciled_sd, numbers
    # Outside the interval, on the side the pull towards A (where OLD sits) predicts.
    assert single_rate < low, numbers
    assert abs(single_rate - single_expected) < 4 * single_sd, numbers

    # The bias is visible: a weak decided pair agrees in both orders with probability 1 - p,
    # a weak tie only when neither order's draw hits, (1 - p)².
    agree_tie = (1 - p) ** 2
    strong = n - w_new - w_old - w_tie
    consistency = (strong + (w_new + w_old) * (1 - p) + w_tie * agree_tie) / n
    consistency_sd = sqrt((w_new + w_old) * pq + w_tie * agree_tie * (1 - agree_tie)) / n
    assert summary["consistency"] < 1
    assert abs(summary["consistency"] - consistency) < 4 * consistency_sd, summary["consistency"]

    # The qualification: reconciling shrinks every weak decided pair towards a tie by p / 2;
    # only the balance of weak wins and losses cancels it.
    for side, shrunk in ((Winner.NEW, 1 - p / 2), (Winner.OLD, p / 2)):
        outcomes = [
            outcome
            for outcome, winner, is_weak in zip(
                reconciled_outcomes, true_winners, weak_pairs, strict=True
            )
            if is_weak and winner is side
        ]
        side_rate, side_sd = rate(outcomes), sqrt(pq / 4 / len(outcomes))
        assert abs(side_rate - shrunk) < 4 * side_sd, (side, side_rate)
