"""The judge simulator: an OpenAI-compatible server on 127.0.0.1 that plays judges and
the servers users run, for the tests and the offline demo. Not a model, and not used by
the judge itself (nothing outside this package and `cli/simulate.py` imports it).

- `server`: SimulatorServer (start, script, records) and `serve_forever` for `judge simulate`
- `config`: SimulatorConfig, per-judge JudgeProfile, Fault, RecordedRequest
- `profiles`: the `--profile`, `--style` and `--formats` flags read into its config
- `state`: what the handlers share — the script, the rate window, the records, the batches
- `rate`: the server-side rate window, its x-ratelimit headers, status tallies
- `wire`: the OpenAI wire format — requests in, completions and errors out, message text
- `verdicts`: the deterministic fake verdict for a request
- `transcript`: what the simulator reads of a judge's prompt (its fenced texts)
- `runs`: agents' runs in a prompt (a trajectory, a step, two runs) and their quality
- `schema`: finding the verdict schema in a request, and walking its nodes
- `truth`: replaying known labels with seeded noise
- `checklist`: a checklist's item verdicts (one item a call, or all at once), known or not
- `truth_runs`: known labels of agents' runs and their steps, and of two runs compared
- `truth_pairs`: a judge set's labelled pairs as truth, and the winner a pairwise prompt
  gets from them (`judge qualify`'s known answers)
- `jitter`: per-call random guesses, drawn anew for each identical request (repeated judging)
- `blind_spot`: a judge with a known blind spot that its prompt can fix (or not), and the
  optimizer that finds it (`judge align`)
- `generator`: answering as a generator model (`judge refine`)
- `styles`: how a judge words its verdict (<think>, fenced, prose, truncated ...)
- `formats`: which response_format types a server accepts, and how it refuses the rest
- `replies`: the chat completion a request body gets, online or as a batch line
- `logprobs`: token logprobs for a reply, spread over the scale where it scores
- `files`: the in-memory files of the Files API (batch inputs, outputs, errors)
- `batch_input`: reading and checking a batch input file
- `batches`: each batch's state machine, stepped by retrieves, and the store of batches
- `batch_api`: the Files and Batch API routes over the files and batches
- `probes`: known padding and verbosity biases toward `judge probe`'s perturbed answers
"""
