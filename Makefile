# `make demo` and `make test` work on a fresh machine with only Python 3.11 and pip.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test check demo bench all clean schema

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

test: install
	LITELLM_LOCAL_MODEL_COST_MAP=True $(BIN)/pytest -q

check: install
	$(BIN)/ruff format --check judgecli tests bench
	$(BIN)/ruff check judgecli tests bench
	$(BIN)/mypy

all: check test

demo: install
	$(BIN)/judge demo

bench: install
	$(BIN)/python tests/bench/bench_score.py

clean:
	rm -rf $(VENV) runs .pytest_cache .mypy_cache .ruff_cache

schema: install
	$(BIN)/judge rubrics schema > rubrics/schema.json
