# README's two commands: `make run` starts the service, `make test` runs the whole suite. Each does its own set-up on
# a fresh machine: uv (bootstrapped from PyPI into .tools/ when missing), the locked Python packages (uv.lock) in
# .venv, the Debian packages pip cannot install (deploy/tools/system-packages.sh), translations, migrations, catalogs.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
UV_VERSION := 0.13.9
UV ?= .tools/bin/uv
HOST ?= 127.0.0.1
PORT ?= 8000
# the test run's processes (pytest-xdist): two per core by default, since many tests wait on a browser, a worker or a
# server rather than compute; `make test WORKERS=0` runs in one process
WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))
PYTEST_ARGS ?=

export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)

.PHONY: install system-packages system-packages-test run test lint typecheck migrate catalogs translations clean loadgen-wheel loadgen-schemas

.tools/bin/uv:
	@echo "== uv $(UV_VERSION): installing it from PyPI into .tools/ (a few seconds)"
	@$(PYTHON) -m venv .tools
	@.tools/bin/pip install --disable-pip-version-check -qq uv==$(UV_VERSION)

$(VENV)/.installed: pyproject.toml packages/loadgen/pyproject.toml uv.lock | $(UV)
	@echo "== Python packages: uv sync --locked into $(VENV)"
	@set -o pipefail; $(UV) sync --locked --python "$$(command -v $(PYTHON))" 2>&1 | { grep -v '^ [-+~] ' || true; }  # not 100 names
	@touch $@

install: $(VENV)/.installed

system-packages:
	@deploy/tools/system-packages.sh

system-packages-test:
	@deploy/tools/system-packages.sh --test

translations: install
	@$(PY) manage.py compile_translations --verbosity 0

migrate: install
	@echo "== database: migrations"
	@$(PY) manage.py migrate --noinput --verbosity 0

catalogs: migrate
	@$(PY) manage.py catalog_load

# Install, then deploy/run-dev.sh: migrate, load catalogs, make the demo login, start the workers, the simulator and
# the web server, and print the URL, the login and the logs once the dashboard answers.
run: system-packages install
	@HOST=$(HOST) PORT=$(PORT) PY=$(PY) ./deploy/run-dev.sh

# The whole suite, across the cores: tests that drive Chromium or a worker run one after another in one process
# (the `serial` xdist group, tests/conftest.py); everything else is spread over the others.
test: system-packages-test translations
	@$(PY) -m pytest -n $(WORKERS) --dist loadgroup $(PYTEST_ARGS)

lint: install
	@$(VENV)/bin/ruff check .
	@$(VENV)/bin/ruff format --check .
	@$(VENV)/bin/lint-imports
	@$(VENV)/bin/deptry .
	@cd packages/loadgen && ../../$(VENV)/bin/deptry .

# mypy, strict on the pure packages ([tool.mypy] in pyproject.toml names them), with django-stubs' plugin
typecheck: install
	@$(VENV)/bin/mypy

# The load generator's wheel for customer networks (packages/loadgen, built by its backend, hatchling) into dist/:
# `pip install dist/llm_sizing_loadgen-*.whl`, then `llm-sizing-loadgen run plan.json --out result.json`
loadgen-wheel: | $(UV)
	@$(UV) build --package llm-sizing-loadgen --wheel --out-dir dist

# The plan's and the result's JSON Schemas in docs/, written from their pydantic models
loadgen-schemas: install
	@$(PY) -m llm_sizing_loadgen.schemas docs

clean:
	rm -rf $(VENV) .tools var dist
