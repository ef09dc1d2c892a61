"""`probe_judge`: how far a pairwise judge's verdicts move under perturbations that should
not move them (the order, padding, verbosity), as `judge probe` measures it (docs/probe.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgecli.api.argv import command_line
from judgecli.api.jobs import offered
from judgecli.api.runs import Dataset, Preparing, Run, run_prepared
from judgecli.api.settings import choice, read_settings
from judgecli.commands.probe import ProbeAsked, prepare_probe
from judgecli.grading.perturb import Probe
from judgecli.settings.flags import CASCADE_FLAGS, CHECKLIST_FLAGS, SCALE_OUT_FLAGS
from judgecli.summary.gate_records import GateOn

if TYPE_CHECKING:
    from judgecli.result import CaseResult
    from judgecli.rubric import Rubric
    from judgecli.summary.probe import ProbeSummary


def probe_judge(
    old: Dataset | None = None,
    new: Dataset | None = None,
    *,
    rubric: str | Path | Rubric = "pairwise",
    model: str | Sequence[str] | None = None,
    api_base: str | None = None,
    out: str | Path | None = None,
    cache: bool = True,
    probes: Sequence[Probe | str] = ("position", "length", "verbosity"),
    max_position_bias: float | None = None,
    max_length_bias: float | None = None,
    max_verbosity_bias: float | None = None,
    max_self_bias: float | None = None,
    on: GateOn | str = GateOn.POINT,
    power: float | None = None,
    effect: float | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    **settings: Any,
) -> Run[ProbeSummary]:
    """Probe a pairwise judge's position, length and verbosity biases: `judge probe`.

    Args:
        old: The current answers (a path, or rows kept as RUN_DIR/inputs/old.jsonl);
            None with `new` None: the bundled pairs.
        new: The candidate answers, joined with `old` on id.
        rubric: A pairwise rubric (default: the library's `pairwise`).
        model: The judge, or a list for a panel (None: the rubric's).
        api_base: An OpenAI-compatible server's endpoint.
        out: The run directory (None: a new runs/<UTC time>-probe-<rubric>).
        cache: False: no reply cache.
        probes: `"position"`, `"length"`, `"verbosity"` (the default), and `"self"` (a
            panel and data naming its generators).
        max_position_bias: The gate: the highest flip rate the position probe may show.
        max_length_bias: The same for the length probe.
        max_verbosity_bias: The same for the verbosity probe.
        max_self_bias: The same for the self probe.
        on: `"point"` or `"lower-bound"` (the pessimistic end of the interval: its upper).
        power: Size the pairs for this power (with `effect`).
        effect: The flip rate above each probe's floor the sizing must detect.
        on_result: Called with each result (pair or perturbed pair) as it is written.
        **settings: The judging flags (no cascade or scale-out).

    Returns:
        The finished run (`summary.probes`, `summary.gate`, ...).
    """
    read = read_settings(
        {"model": model, "api_base": api_base, "out": out, "cache": cache, **settings},
        caller="probe_judge",
        flags=offered(CASCADE_FLAGS | SCALE_OUT_FLAGS | CHECKLIST_FLAGS),
        own=("old", "new", "rubric", "probes", "on", "power", "effect"),
    )
    chosen = tuple(dict.fromkeys(choice(Probe, "probes", p) for p in probes))
    given = {
        Probe.POSITION: max_position_bias,
        Probe.LENGTH: max_length_bias,
        Probe.VERBOSITY: max_verbosity_bias,
        Probe.SELF: max_self_bias,
    }
    asked = ProbeAsked(
        probes=chosen,
        ceilings={p: c for p, c in given.items() if c is not None},
        on=choice(GateOn, "on", on),
        power=power,
        effect=effect,
    )
    with Preparing("probe", rubric, read.flags) as prep:
        old_path = None if old is None else prep.dataset(old, "old")
        new_path = None if new is None else prep.dataset(new, "new")
        job = prepare_probe(old_path, new_path, prep.rubric, prep.flags, asked)
        files = [p for p in (old_path, new_path) if p is not None]
        argv = command_line(
            "probe",
            files,
            prep.flags,
            None,
            ("--rubric", prep.rubric_word, None),
            ("--probes", ",".join(p.value for p in chosen), None),
            ("--max-position-bias", max_position_bias, None),
            ("--max-length-bias", max_length_bias, None),
            ("--max-verbosity-bias", max_verbosity_bias, None),
            ("--max-self-bias", max_self_bias, None),
            ("--on", asked.on, GateOn.POINT),
            ("--power", power, None),
            ("--effect", effect, None),
        )
        return run_prepared(job, argv=argv, on_result=on_result)
