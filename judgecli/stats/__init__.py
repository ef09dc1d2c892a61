"""Pure statistics: intervals, scores, pairwise win rates, agreement (no I/O)."""
