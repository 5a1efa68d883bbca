# make demo: run the hybrid example, then show what meshify writes for it.
# make test: the test suite on 8 simulated CPU devices.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: venv demo test

venv: $(VENV)/.stamp

# Re-installs only when pyproject.toml changes.
$(VENV)/.stamp: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -e '.[test]'
	touch $@

demo: venv
	$(BIN)/python examples/hybrid.py
	$(BIN)/meshify diff examples/hybrid.py

test: venv
	$(BIN)/python -m pytest -q -n 2
