"""Inputs: what a run reads, read and checked before any judge is called. A bad line or key
is an error naming file:line and the fix (exit 2), never a half-made run.

- `jsonl`: JSON Lines read line by line, every problem said with file:line and the fix
- `rows`: a dataset of any format as numbered rows of fields (`RowSource`), and its name
- `tables`: CSV and TSV files (the csv module), Parquet files (pyarrow), row by row
- `hub`: Hugging Face datasets (`hf://owner/name:split`), streamed
- `copies`: the rows of a Parquet or hub source kept to be read back by position
- `sources`: which reader reads a dataset, picked by its name
- `case_fields`: a row's fields as a case's, each checked (the `--field` map applied)
- `dataset`: cases (`Case`) streamed from a dataset, with `--field` maps and the scan's
  warnings
- `conversation`: a case's `messages` (a chat, or an agent's run with its tool turns),
  parsed and rendered fenced by role
- `tools`: tool calls, tool schemas and expected calls read into one shape
- `pairs`: OLD and NEW joined on id (`judge pairwise`, `judge arena`)
- `sampling`: `--sample` and `--limit`, chosen in one pass
- `shard`: which cases one machine of many judges (`--shard`)
- `labels`: human labels (JSONL or a review sheet) for calibrate and `--labels`
- `review`: the human review queue and the sheet its cases are labelled on
- `yamlfile`: YAML read strictly, with line numbers
- `rubric_file`: a rubric file read (`extends:` followed), its errors by line
- `rubric_hints`: the `hint:` under a rubric error
- `rubric_library`: where rubrics are found (the bundled library, JUDGE_RUBRICS_PATH)
"""
