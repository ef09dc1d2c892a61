# `make demo` and `make test` work on a fresh machine with only Python 3.11 and pip.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CHROMIUM ?= /usr/bin/chromium

.PHONY: install browser test check demo bench all clean schema

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

# Debian's chromium for tests/integration/test_report_browser.py. Installed when missing and
# this is root with apt-get (CI machines start bare); otherwise say why and go on: the test
# then skips with that reason.
browser:
	@if [ -x $(CHROMIUM) ]; then \
		:; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "browser: installing Debian's chromium for the report's browser test"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
			|| echo "browser: apt-get could not install chromium; the browser test will be skipped"; \
	else \
		echo "browser: $(CHROMIUM) is missing and cannot be installed here (needs root and apt-get); the browser test will be skipped"; \
	fi

test: install browser
	LITELLM_LOCAL_MODEL_COST_MAP=True $(BIN)/pytest -q

check: install
	$(BIN)/ruff format --check judgecli tests
	$(BIN)/ruff check judgecli tests
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
