# README's two commands: `make run` starts the service, `make test` runs the whole suite.
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install run test lint migrate catalogs translations worker web clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --upgrade --quiet pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed

translations: install
	$(PY) manage.py compile_translations

migrate: install
	$(PY) manage.py migrate --noinput

catalogs: migrate
	$(PY) manage.py catalog_load

# Create the venv, install, migrate, load catalogs, print a demo login, start a worker and the web server.
run: translations catalogs
	$(PY) manage.py demo_setup
	$(PY) manage.py simulator_register
	HOST=$(HOST) PORT=$(PORT) PY=$(PY) ./deploy/run-dev.sh

test: translations
	$(PY) -m pytest

lint: install
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) var
