"""Running: the spine every judging command runs on. Many cases are judged into one run
directory under the run's limits, resumably, and the run is concluded: summarised from
results.jsonl, gated, its reports written.

- `run_dir`: open (or reopen) a run directory and record how it was made (run.json)
- `fan_out`: async fan-out over cases with bounded memory and clean stops
- `judging`: the judge client built under the run's limits; every item the run lacks judged,
  here or in --workers processes
- `workers`, `lifeline`, `share`: --workers N processes, which die with their parent, and
  each one's share: the limits it runs under and how it ended
- `noted_signals`: SIGTERM and Ctrl-C noted, for the --workers processes to act on between
  two messages
- `relayed_stops`: a worker takes each stop once, from the sender or its parent's relay
- `auto_workers`: without --workers, one process per core for a run with enough calls the
  reply cache cannot answer (found without sending any), else one
- `batching`, `batch_record`: --batch through a provider's batch API, and `judge collect`
- `merge`: `judge merge`: N shards' runs joined into the run one machine would have made
- `job`: the spine (`Job`, `Ending`, `run_job`, `conclude`); an adaptive job's rounds
- `conclusion`: what the spine asks of a command to conclude its run (`Concluding`), the
  --max-failures rule (`Shortfall`) and the reports it writes
"""
