"""Grading: one case graded. The rubric and the case become prompts, each judge is asked
(through `judge/`, the only caller of LiteLLM), each reply is parsed and validated into a
verdict (never guessed), and the verdicts of both orders, a panel, the turns of a
conversation and the repeats are combined into the case's verdict.

- `prompt`: (rubric, case[, order]) → the judge's messages and the verdict's JSON schema
- `images`: a user message's case images as content parts, where the template puts them
- `asking`: one judge asked one prompt: the request, the call, the re-asks
- `grade`: one case: prompts → asks → verdicts → the panel's verdict (`GradingPlan`)
- `turns`: a conversation's graded turns → the case's verdict
- `steps`: what a case is graded as (whole, each turn, each tool call of an agent's run)
  and each graded part's verdict as the result keeps it
- `elision`: a long run fitted to --elide-at (its middle left out, said so)
- `checklist`: a case's own checklist (`rubric_items`): each item met or not, one item a
  call or all at once (each item's verdict kept in the cache), and the case's score
- `tool_calls`: the deterministic tool-call check (calls made against those expected), and
  the check first, the judge for what it cannot decide
- `debias`: both orders reconciled, a panel combined (pure)
- `repeats`: --repeats K: one case's K verdicts → its verdict and whether they agree (pure)
- `logprobs`: verdicts weighed by the judge's token probabilities (pure)
- `cascade`: --screen: a cheap screen judge first, the strong judge when the rule says
- `escalate`: the --escalate rule language
- `feedback`: the self-refine loop's rules (feedback template, judges' advice, success bar)
- `perturb`: `judge probe`'s perturbations (answers padded or restated; deterministic)
"""
