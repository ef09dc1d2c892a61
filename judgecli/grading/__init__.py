"""Grading: one case graded. The rubric and the case become prompts, each judge is asked
(through `judge/`, the only caller of LiteLLM), each reply is parsed and validated into a
verdict (never guessed), and the verdicts of both orders, a panel, the turns of a
conversation and the repeats are combined into the case's verdict.

- `prompt`: (rubric, case[, order]) → the judge's messages and the verdict's JSON schema
- `asking`: one judge asked one prompt: the request, the call, the re-asks
- `grade`: one case: prompts → asks → verdicts → the panel's verdict (`GradingPlan`)
- `turns`: a conversation's graded turns → the case's verdict
- `debias`: both orders reconciled, a panel combined (pure)
- `repeats`: --repeats K: one case's K verdicts → its verdict and whether they agree (pure)
- `logprobs`: verdicts weighed by the judge's token probabilities (pure)
- `cascade`: --screen: a cheap screen judge first, the strong judge when the rule says
- `escalate`: the --escalate rule language
"""
