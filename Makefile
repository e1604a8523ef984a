# streamdq: `make demo` and `make test` work on a fresh machine (they create .venv themselves).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export PYSPARK_PYTHON := $(abspath $(PY))
export PYSPARK_DRIVER_PYTHON := $(abspath $(PY))

# one `make bench-NAME` per directory bench/NAME/ holding a run.py
BENCHES := $(patsubst bench/%/run.py,%,$(wildcard bench/*/run.py))
BENCH_TARGETS := $(addprefix bench-,$(BENCHES))

.PHONY: demo test lint typecheck unit java-check install clean wheel-smoke $(BENCH_TARGETS)

java-check:
	@command -v java >/dev/null 2>&1 || { echo "streamdq needs Java 17+ for Spark: install it, e.g. 'apt-get install -y openjdk-17-jre-headless'"; exit 1; }
	@v=$$(java -version 2>&1 | head -1 | sed -E 's/.*version "([0-9]+).*/\1/'); \
	 if [ "$$v" -lt 17 ] 2>/dev/null; then echo "streamdq needs Java 17+ for Spark (found $$v): 'apt-get install -y openjdk-17-jre-headless'"; exit 1; fi

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

demo: java-check $(STAMP)
	$(VENV)/bin/streamdq demo $(DEMO_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check streamdq connectors state tests bench
	$(VENV)/bin/ruff format --check streamdq connectors state tests bench
	$(VENV)/bin/mypy streamdq connectors state
	$(PY) .ci/lint_imports.py  # import layers (.importlinter; docs/architecture.md)

test: java-check $(STAMP) lint
	$(VENV)/bin/pytest -q $(PYTEST_ARGS)

# build the wheel (python -m build), install it into a fresh venv, run `streamdq --version` and a
# batch verify on a tiny CSV (.ci/wheel-smoke; CI runs it after `make test`)
wheel-smoke: java-check $(STAMP)
	.ci/wheel-smoke $(PY)

# a static pattern rule: GNU make skips plain pattern rules for .PHONY targets
$(BENCH_TARGETS): bench-%: java-check $(STAMP)
	$(PY) bench/$*/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
