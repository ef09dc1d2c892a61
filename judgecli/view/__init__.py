"""`judge view`: a local web app over run directories, to browse, compare and label their
cases (docs/view.md).

- `server`: the aiohttp app, listening and answering every failure with one clear line
- `security`: the write token, the access token off loopback, the Host check
- `state`: what every request reads (the served runs, tokens, seed) and the shared lookups
- `runs`: the runs served, scanned anew on each request, each reachable by name only
- `cases`: a case's flags (failed, judges or orders disagree, unstable, steps), filters, search
- `labelling`: labels in the rubric's terms, the blind A/B order, the next case, agreement
- `site`, `api`: the page handlers and the JSON API
- `pages`, `case_pages`: the HTML of the runs list, a run's cases, a comparison, a case,
  and the labelling page
- `assets`: the style and the small plain scripts, as strings (nothing fetched)
"""
