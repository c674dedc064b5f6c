# planning-memory: `make demo` runs the main job, `make test` runs what CI runs.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed
DEMO   := demo

.PHONY: demo test lint typecheck unit bench clean docs

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	rm -rf $(DEMO) && mkdir -p $(DEMO)
	cp -r .planning.example $(DEMO)/.planning
	cp -r tests/fixtures/repos/nextauth-app/. $(DEMO)/ 2>/dev/null || true
	cd $(DEMO) && ../$(VENV)/bin/pmem validate
	cd $(DEMO) && ../$(VENV)/bin/pmem show
	cd $(DEMO) && ../$(VENV)/bin/pmem export -o export.json && echo "export: $(DEMO)/export.json"
	mkdir -p $(DEMO)/fresh && cd $(DEMO)/fresh && ../../$(VENV)/bin/pmem init \
		&& ../../$(VENV)/bin/pmem import ../export.json && ../../$(VENV)/bin/pmem show

lint: $(STAMP)
	$(VENV)/bin/ruff check planning_memory tests bench
	$(VENV)/bin/ruff format --check planning_memory tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy

unit: $(STAMP)
	$(VENV)/bin/pytest

test: lint typecheck unit

docs: $(STAMP)
	$(PY) -m planning_memory.clidoc > docs/cli.md

bench: $(STAMP)
	for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) $(DEMO) dist build .mypy_cache .ruff_cache .pytest_cache
