# BenchForge: `make demo` to see it work, `make test` to check it.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

TEST_ENV := DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/benchforge} \
	REDIS_URL=$${REDIS_URL:-redis://127.0.0.1:6379/0} BROKER_KIND=redis \
	SECRET_KEY=test-secret-key DEBUG=0 BENCHFORGE_DATA_DIR=$(CURDIR)/var/test

# Test files go to this many pytest-xdist workers (tests/shards.py keeps them apart); 0: one process.
TEST_WORKERS ?= 2

DEMO_DIR ?= $(CURDIR)/var/demo
# The demo's endpoints replay cassettes; one an admin adds for a model server on this machine
# (Ollama, vLLM on 127.0.0.1) is allowed explicitly, and nothing else private (docs/security.md).
DEMO_ENV := DEBUG=1 BENCHFORGE_DATA_DIR=$(DEMO_DIR) BROKER_KIND=filesystem \
	ENDPOINT_ALLOWED_PRIVATE_NETWORKS=127.0.0.0/8,::1/128
DEMO_HOST ?= 127.0.0.1
DEMO_PORT ?= 8000

# The project's packages, compiled to bytecode as pip compiles what it installs (an editable
# install is not compiled, and with PYTHONDONTWRITEBYTECODE set nothing would cache it: every
# command would compile its imports again). Incremental: only changed files are compiled.
PACKAGES := accounts benchapp evolution review releases reasoning xcoder evosyn frontiersmith bench

.PHONY: install bytecode demo test lint format bench clean

$(STAMP): pyproject.toml setup.py Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip "setuptools>=68" wheel
	$(PY) -m pip install -q -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

bytecode: install
	$(PY) -m compileall -q -j 0 $(PACKAGES) manage.py > /dev/null

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

test: bytecode
	bash scripts/bootstrap.sh test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(TEST_ENV) $(PY) -m pytest -q -p tests.shards -n $(TEST_WORKERS) --dist loadfile \
		--durations=30 $(PYTEST_ARGS)

demo: bytecode
	bash scripts/bootstrap.sh demo
	$(DEMO_ENV) $(PY) manage.py demo --host $(DEMO_HOST) --port $(DEMO_PORT)

bench: bytecode
	$(TEST_ENV) $(PY) -m bench $(BENCH_ARGS)

clean:
	rm -rf var
