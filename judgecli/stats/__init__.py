"""Pure statistics: numbers in, numbers out, no I/O, and nothing imported from judgecli
outside this package (tests/unit/test_architecture.py checks). Each is tested against
reference values.

- `intervals`: Wilson, Student t, percentile bootstrap
- `interval_rule`: the one rule of which interval a statistic gets, or why it has none
- `scores`: means, distributions, pass rates
- `checklist`: HealthBench's checklist scores (a case's, the clipped mean, per tag) and
  simple-evals' bootstrap standard deviation
- `pairwise`: win rates, flip consistency, position preference, lengths
- `length_control`: the length-controlled win rate (a logistic GLM on length difference)
- `logistic`: batched logistic regression with a normal prior (maximum a posteriori)
- `instruction_difficulty`: length-controlled win rates of several systems against a
  baseline, with AlpacaEval 2's instruction-difficulty term fitted jointly
- `bradley_terry`: Bradley–Terry scores of many systems (ridge MLE, style covariates)
- `agreement`: Cohen's and Fleiss' κ, correlations
- `krippendorff`: Krippendorff's α (any raters, missing ratings, three scale levels)
- `classification`: confusion matrices, precision, recall, F1
- `micro_f1`: precision, recall and F1 micro-averaged over items grouped in cases
- `calibration`: ECE, Brier score, reliability tables
- `resampling`: vectorised bootstraps over cases and clusters
- `sequential`: the betting confidence sequence of the anytime-valid gate
- `paired`: sign test, paired t, Wilcoxon signed-rank, exact McNemar
- `paired_gain`: κ, accuracy and agreement of two raters on the same cases, and the
  paired cluster bootstrap interval of each gain
- `group_tests`: a rate against a bar, a category against the rest (permutation, Welch)
- `multiplicity`: Holm and Benjamini–Hochberg, per-category marks
- `ppi`: human-corrected means by prediction-powered inference (PPI++)
- `active`: active inference: inclusion probabilities that follow the judge's uncertainty,
  and the inverse-probability-weighted corrected mean
- `special`: the Student t and binomial distributions (incomplete beta), without scipy
- `power`: the sample size a one-sided rate test needs for a stated power (Cohen's h)
- `sizing`: the cases a gate on a mean needs (fixed n on the point or the lower bound of a
  normal or Wilson interval) and the sequential gate's simulated stopping times
"""
