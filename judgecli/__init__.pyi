# What type checkers see of `judgecli`: its public names, each from its module (the
# package imports them on first use, __init__.py's __getattr__).
from judgecli import errors as errors
from judgecli.api.aligning import align_rubric as align_rubric
from judgecli.api.arena import run_arena as run_arena
from judgecli.api.calibration import calibrate_judge as calibrate_judge
from judgecli.api.guard import AsyncGuard as AsyncGuard
from judgecli.api.guard import Guard as Guard
from judgecli.api.guard import guard as guard
from judgecli.api.guarded import Attempt as Attempt
from judgecli.api.guarded import GuardResult as GuardResult
from judgecli.api.jobs import compare_datasets as compare_datasets
from judgecli.api.jobs import score_dataset as score_dataset
from judgecli.api.judge import Judge as Judge
from judgecli.api.probing import probe_judge as probe_judge
from judgecli.api.qualifying import qualify_judge as qualify_judge
from judgecli.api.refining import refine_dataset as refine_dataset
from judgecli.api.rubrics import load_rubric as load_rubric
from judgecli.api.runs import Run as Run
from judgecli.api.verdicts import Comparison as Comparison
from judgecli.api.verdicts import Usage as Usage
from judgecli.api.verdicts import Verdict as Verdict
from judgecli.inputs.dataset import Case as Case
from judgecli.result import CaseResult as CaseResult
from judgecli.result import Judgement as Judgement
from judgecli.result import Winner as Winner
from judgecli.rubric import Rubric as Rubric

__version__: str
__all__: list[str]
