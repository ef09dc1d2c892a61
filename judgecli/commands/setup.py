"""What every judging command does before its own work, whoever asked for it (the command
line or the Python API): find and load the rubric, turn the shared settings into one
RunConfig (checking that the old run `--force` replaces is one), and read score's and
pairwise's gate settings into how the run decides.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from judgecli.deciding.gate import GateSpec

if TYPE_CHECKING:
    from judgecli.deciding.decision import Deciding
    from judgecli.inputs.images import ImagesShown
    from judgecli.rubric import Rubric
    from judgecli.settings.config import RunConfig
    from judgecli.settings.flags import JudgeFlags


@dataclass(frozen=True)
class FoundRubric:
    """A rubric loaded for a run, and the file it came from (None: given as a Rubric)."""

    rubric: Rubric
    path: Path | None = None

    @property
    def where(self) -> str:
        """How messages name it: its file, else `rubric 'name'`."""
        return str(self.path) if self.path is not None else f"rubric {self.rubric.name!r}"


def find_rubric_of(rubric: str | Path | Rubric) -> FoundRubric:
    """The rubric a caller named (a library name, a file, or a Rubric already loaded)."""
    from judgecli.rubric import Rubric

    if isinstance(rubric, Rubric):
        return FoundRubric(rubric)
    path, loaded = named_rubric(rubric)
    return FoundRubric(loaded, path)


def named_rubric(name: str | Path) -> tuple[Path, Rubric]:
    """`--rubric` (a path or a library name) as its file and the loaded rubric."""
    from judgecli.inputs.rubric_file import load_rubric
    from judgecli.settings.config import rubric_dirs

    dirs = rubric_dirs()
    path = find_named_rubric(str(name), dirs)
    return path, load_rubric(path, dirs=dirs)


def find_named_rubric(name: str, dirs: list[Path]) -> Path:
    """The rubric file `name` means; an unknown name gets the nearest library names as a
    hint (`--rubric helpfulnes`: did you mean 'helpfulness'?).
    """
    import difflib

    from judgecli.errors import RubricError
    from judgecli.inputs.rubric_library import find_rubric, library

    try:
        return find_rubric(name, dirs)
    except RubricError as err:
        names = [path.stem for path in library(dirs)]
        close = difflib.get_close_matches(name, names, n=3)
        if close:
            guesses = " or ".join(repr(c) for c in close)
            err.hint = f"did you mean {guesses}? (`judge rubrics list` shows the library)"
        raise


def judge_config(command: str, rubric: Rubric, flags: JudgeFlags) -> RunConfig:
    """The RunConfig of a command's shared flags (its --field mapping included)."""
    from judgecli.errors import ConfigError
    from judgecli.settings.config import build_run_config
    from judgecli.store import default_run_dir

    if flags.force and flags.resume is not None:
        raise ConfigError(
            "--force starts the run over; --resume continues it",
            hint="drop one of them",
        )
    config = build_run_config(
        command=command,
        rubric=rubric,
        flags=flags,
        default_out=default_run_dir(command, rubric.name),
    )
    if config.max_cost is not None:
        from judgecli.judge.provider import check_prices

        check_prices(config.all_models)
    if flags.force and flags.out is not None:
        from judgecli.store import check_replaceable

        check_replaceable(flags.out)
    return config


@dataclass(frozen=True)
class GateAsked:
    """What a score or pairwise run was asked to decide: its thresholds and what they are
    compared on (`--on`), whether it stops once decided (`--sequential`), the human labels
    that correct it (`--labels`), how its category marks are corrected (`--fdr`), and the
    sequential gate's error rate (`--alpha`; None: 0.05).
    """

    gate: GateSpec = field(default_factory=GateSpec)
    sequential: bool = False
    labels: Path | None = None
    fdr: bool = False
    alpha: float | None = None


def decision_inputs(
    asked: GateAsked, rubric: Rubric, config: RunConfig, *, cases: Path
) -> Deciding:
    """Check the gate settings together, and with the run's (exit 2 before any call: --on
    corrected without labels, a sequence without its one bar or on a shard or a batch,
    labels of no case in `cases`) and read them. `--on sequential` is --sequential said
    the gate's way.
    """
    from judgecli.deciding.decision import Deciding, plan_sequential
    from judgecli.deciding.gate import GateOn
    from judgecli.stats.multiplicity import Correction

    gate = asked.gate
    check_corrected_gate(gate, asked.labels)
    check_repeat_gate(gate, config, rubric)
    follow = None
    sequential = asked.sequential or gate.on is GateOn.SEQUENTIAL
    check_alpha(asked.alpha, sequential=sequential)
    if sequential:
        check_sequential_fits(config)
        follow = plan_sequential(gate, rubric, seed=config.seed, alpha=asked.alpha)
        gate = replace(gate, on=GateOn.SEQUENTIAL)
    human = None
    if asked.labels is not None:
        from judgecli.deciding.corrected import read_human_labels
        from judgecli.inputs.labels import dataset_ids

        ids = dataset_ids(cases, config.field_map)
        human = read_human_labels(asked.labels, rubric, ids, cases)
    return Deciding(
        gate=gate,
        sequential=follow,
        labels=human,
        correction=Correction.BH if asked.fdr else Correction.HOLM,
    )


def check_planned_n(flags: JudgeFlags, total: int, data: str) -> None:
    """ConfigError (exit 2, nothing called) for a run of a spec (--spec) whose data holds
    fewer cases than its planned n (--limit): the spec runs exactly its first n cases, and
    a run of fewer would not be the run planned (issue 35).
    """
    from judgecli.errors import ConfigError

    if flags.spec is None or flags.limit is None or total >= flags.limit:
        return
    raise ConfigError(
        f"{data}: {total} cases, fewer than the {flags.limit} the spec {flags.spec} plans "
        f"(stopping.n: its first {flags.limit})",
        hint=f"add cases to the data, or plan again with --limit {total} (a new spec: "
        "judge plan ... --write-spec)",
    )


FIXED_ALPHA = 0.05
"""The error rate of the fixed-n gate: its intervals are 95%."""


def check_alpha(alpha: float | None, *, sequential: bool) -> None:
    """ConfigError (exit 2) for an --alpha the run cannot apply: outside (0, 1), or other
    than 0.05 without --sequential (a fixed-n gate's intervals are 95%; issue 35).
    """
    from judgecli.errors import ConfigError

    if alpha is None:
        return
    if not 0 < alpha < 1:
        raise ConfigError(f"--alpha {alpha:g} is not an error rate", hint="e.g. --alpha 0.05")
    if not sequential and alpha != FIXED_ALPHA:
        raise ConfigError(
            f"--alpha {alpha:g}: only the --sequential gate takes another error rate; the "
            "fixed-n gate reads 95% intervals (alpha 0.05)",
            hint="add --sequential, or leave --alpha out",
        )


# The case fields whose text may hold a case's images (inputs.images).
IMAGE_FIELDS = frozenset(
    {"input", "output", "reference", "conversation", "trajectory", "step", "output_a", "output_b"}
)


def check_images(config: RunConfig, rubric: Rubric, shown: ImagesShown | None) -> None:
    """Cases that show images (`shown`, from the dataset's scan), checked before any call
    whatever the reply cache holds (exit 2): a rubric whose system template shows a field
    that may hold them (providers take images in user messages only), and a judge that
    LiteLLM's model map says cannot see them (judge.provider.check_vision, which imports
    LiteLLM: only a run with images pays for it here).
    """
    if shown is None:
        return
    from judgecli.errors import ConfigError
    from judgecli.judge.provider import check_vision
    from judgecli.rubric import template_fields

    system = rubric.prompt.system if rubric.prompt is not None else ""
    placed = sorted(set(template_fields(system)) & IMAGE_FIELDS)
    if placed:
        names = ", ".join(f"{{{name}}}" for name in placed)
        raise ConfigError(
            f"rubric {rubric.name!r} shows {names} in its system message, and the cases show "
            f"images (the first: {shown.first}): a judge takes images in the user message only",
            hint=f"move {names} to the rubric's prompt.user",
        )
    check_vision(config.all_models, shown)


def check_corrected_gate(gate: GateSpec, labels: Path | None) -> None:
    """ConfigError (exit 2) for --on corrected without --labels: nothing to correct with."""
    from judgecli.deciding.gate import GateOn
    from judgecli.errors import ConfigError

    if gate.on in (GateOn.CORRECTED, GateOn.CORRECTED_LOWER_BOUND) and labels is None:
        raise ConfigError(
            f"--on {gate.on.value} gates on the human-corrected estimate, which needs --labels",
            hint="add --labels LABELS.jsonl (human labels of some of the cases)",
        )


def check_repeat_gate(gate: GateSpec, config: RunConfig, rubric: Rubric) -> None:
    """--min-stability and --min-pass-k read the K verdicts of each case: ConfigError (exit
    2, before any call) without --repeats 2 or more, or --min-pass-k without a pass bar.
    """
    from judgecli.errors import ConfigError
    from judgecli.rubric import RubricKind

    if gate.on_repeats and config.repeats < 2:
        raise ConfigError(
            f"{' and '.join(gate.on_repeats)} need --repeats K (2 or more): with one ask per "
            "case there is nothing to agree",
            hint="e.g. --repeats 3 --temperature 0.7",
        )
    no_bar = rubric.kind is RubricKind.POINTWISE and rubric.pass_at is None
    if gate.min_pass_k is not None and no_bar:
        raise ConfigError(
            f"--min-pass-k needs a pass bar; rubric {rubric.name!r} has no pass_at",
            hint="add pass_at to the rubric, or gate on --min-stability",
        )


def check_sequential_fits(config: RunConfig) -> None:
    """--sequential stops once the run's evidence decides, so it cannot follow a shard
    (one machine's part of the evidence) or a batch (every call submitted at once).
    """
    from judgecli.errors import ConfigError

    if config.shard is not None:
        raise ConfigError(
            "--sequential with --shard: a shard's cases are only part of the evidence the "
            "sequential gate follows",
            hint="run the sequential gate on one machine (with --workers for more CPU), or "
            "shard a fixed-size run and gate the merged run",
        )
    if config.batch:
        raise ConfigError(
            "--sequential with --batch: a batch submits every call at once, so there is "
            "nothing to stop early",
            hint="drop one of them",
        )
