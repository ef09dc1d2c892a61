"""Inputs: what a run reads, read and checked before any judge is called. A bad line or key
is an error naming file:line and the fix (exit 2), never a half-made run.

- `jsonl`: JSON Lines read line by line, every problem said with file:line and the fix
- `rows`: a dataset of any format as numbered rows of fields (`RowSource`), and its name
- `tables`: CSV and TSV files (the csv module), Parquet files (pyarrow), row by row
- `hub`: Hugging Face datasets (`hf://owner/name:split`), streamed
- `copies`: the rows of a Parquet or hub source kept to be read back by position
- `otel`: OpenTelemetry exports (OTLP JSON) of GenAI spans, one case per trace
- `otel_spans`: an OTLP JSON export's spans and their attributes, grouped by trace
- `otel_runs`: one trace's GenAI spans as an agent's run (`messages`), its tools and
  metadata
- `sources`: which reader reads a dataset, picked by its name
- `case_fields`: a row's fields as a case's, each checked (the `--field` map applied)
- `dataset`: cases (`Case`) streamed from a dataset, with `--field` maps and the scan's
  warnings
- `conversation`: a case's `messages` (a chat, or an agent's run with its tool turns),
  parsed and rendered fenced by role
- `tools`: tool calls, tool schemas and expected calls read into one shape
- `shape_error`: the one base of the errors of a case's value whose shape cannot be read
- `trajectory`: an agent's run as steps (one per tool call), each step's view, the run's
  texts and lengths
- `images`: content parts with images in a case's fields and turns, read (a file as a data
  URL of its type) into the field's text; which selected cases show images
- `rubric_items`: a case's own checklist (`rubric_items`: criterion, points, tags), checked
- `pairs`: OLD and NEW joined on id (`judge pairwise`, `judge arena`)
- `empty_fields`: a scan's count of cases with empty required fields, said once per field
- `sampling`: `--sample` and `--limit`, chosen in one pass
- `shard`: which cases one machine of many judges (`--shard`)
- `labels`: human labels (JSONL, a review sheet, label files) for calibrate and `--labels`
- `judge_sets`: labelled judge sets for `judge qualify` (bundled, or the user's JSONL)
- `qualification`: the qualification record, read back for `--require-qualified`
- `label_files`: the label files `judge view` writes (`RUN/labels/<rater>.jsonl`), read back
- `review`: the human review queue and the sheet its cases are labelled on
- `yamlfile`: YAML read strictly, with line numbers
- `rubric_file`: a rubric file read (`extends:` followed), its errors by line
- `rubric_hints`: the `hint:` under a rubric error
- `rubric_library`: where rubrics are found (the bundled library, JUDGE_RUBRICS_PATH)
- `spec`: the evaluation spec file (`Spec`: data hashes, rubric hash, judges, gate, α, stopping
  rule, correction, labels) read strictly, its hash, and the command line it runs
"""
