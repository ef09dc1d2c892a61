"""The judge client: how a judge model is called, and the only package that talks to
LiteLLM (lazily: it takes seconds to import).

- `protocol`: what a judge call is: JudgeRequest (and its cache key), JudgeReply,
  JudgeCallError, the JudgeClient protocol
- `client`: LiteLLMClient, with its retry loop
- `halt`: the grace a first SIGTERM or Ctrl-C gives the calls in flight
- `rate_headers`: a server's x-ratelimit headers read
- `batches`: a provider's batch API through LiteLLM (--batch)
- `provider`: LiteLLM imported offline and quiet; prices; the checks before the first call
- `route`: which of LiteLLM's providers carries a judge's calls (an OpenAI-compatible
  server without the openai SDK)
- `failures`: what a failed call means, and how to say it on one line
- `breaker`: stop a run whose endpoint cannot serve it
- `limits`, `pacing`: calls in flight, the pace per model, the hold after a 429
- `budget`: the spending cap
- `formats`: the response-format ladder across servers
- `cached`: the reply cache in front of the client
- `token_logprobs`: token logprobs in a reply, and the check that a judge gives them
"""
