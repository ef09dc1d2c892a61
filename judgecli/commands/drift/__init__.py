"""`judge drift`: did a judge change (a model retired, a rubric edited) move the verdicts on
the same cases, and by how much?

- `audit`: the two runs audited, whether they compare, and what differs in how they were
  judged (pure)
- `measure`: the flips, the shift with its paired interval, κ between the runs, the gate
  (pure)
- `anchors`: the cases whose text the judge saw is identical in both runs, and the judge's
  shift on them beside the system's on the others (pure)
- `files`: the two runs read, and the drift's own directory written
"""
