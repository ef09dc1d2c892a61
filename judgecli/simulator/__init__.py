"""The judge simulator: an OpenAI-compatible server on 127.0.0.1 that plays judges and
the servers users run, for the tests and the offline demo. Not a model, and not used by
the judge itself (nothing outside this package and `cli/simulate.py` imports it).

- `server`: SimulatorServer (start, script, records) and `serve_forever` for `judge simulate`
- `config`: SimulatorConfig, per-judge JudgeProfile, Fault, RecordedRequest
- `state`: what the handlers share — the script, the rate window, the records
- `rate`: the server-side rate window, its x-ratelimit headers, status tallies
- `wire`: the OpenAI wire format — requests in, completions and errors out, message text
- `verdicts`: the deterministic fake verdict for a request (and its schema)
- `truth`: replaying known labels with seeded noise
- `generator`: answering as a generator model (`judge refine`)
- `styles`: how a judge words its verdict (<think>, fenced, prose, truncated ...)
- `formats`: which response_format types a server accepts, and how it refuses the rest
"""
