# Deployment Studio: `make run` opens the studio on its demo workspace, `make test` runs the whole suite.
# Both create .venv and install the project into it first (re-installed when pyproject.toml changes).

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEMO ?= $(HOME)/.local/share/deployment-studio/demo-workspace
PYTEST_ARGS ?=

.PHONY: run test test-core bench lint venv clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip setuptools wheel
	$(PY) -m pip install -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(PY) -m studio.gui --demo $(DEMO)

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest $(PYTEST_ARGS)

# The headless core's tests in a process where PySide6 and torch cannot be imported.
test-core: $(STAMP)
	$(PY) -m pytest tests/core $(PYTEST_ARGS)

bench: $(STAMP)
	$(PY) -m bench.run_all

lint: $(STAMP)
	$(PY) -m ruff check studio plugins tests bench

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
