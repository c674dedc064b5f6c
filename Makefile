# planning-memory: `make demo` runs the main job, `make test` runs what CI runs.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
PMEM   := $(VENV)/bin/pmem
STAMP  := $(VENV)/.installed
DEMO   := demo
# every package the tests install, pinned; `make lock` refreshes it
LOCK   := constraints.txt
LATEST := .venv-latest
LOWEST := .venv-lowest

.PHONY: demo test test-slow lint typecheck unit bench clean docs lock test-latest test-lowest

$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet -c $(LOCK) -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	rm -rf $(DEMO) && mkdir -p $(DEMO)
	cp -r tests/fixtures/repos/nextauth-app/. $(DEMO)/
	cp -r .planning.example $(DEMO)/.planning
	cd $(DEMO) && git init -q && git add -A && git -c user.name=demo -c user.email=demo@example.invalid commit -qm "demo app"
	@echo "== pmem validate"; cd $(DEMO) && ../$(PMEM) validate
	@echo "== pmem show";     cd $(DEMO) && ../$(PMEM) show
	@echo "== pmem scan";     cd $(DEMO) && ../$(PMEM) scan
	@echo "== pmem entity component LoginForm"; cd $(DEMO) && ../$(PMEM) entity component LoginForm --json
	@echo "== pmem learn";    cd $(DEMO) && ../$(PMEM) learn "always use pnpm, never npm"
	@echo "== pmem search";   cd $(DEMO) && ../$(PMEM) search "fetch error handling" -n 5
	@echo "== pmem context";  cd $(DEMO) && ../$(PMEM) context "add password reset to the login form" --budget 700
	@echo "== pmem render --check"; cd $(DEMO) && ../$(PMEM) render --check
	@echo "== pmem export";   cd $(DEMO) && ../$(PMEM) export -o export.json && echo "wrote $(DEMO)/export.json"
	@echo "== pmem import into a fresh tree"; mkdir -p $(DEMO)/fresh && cd $(DEMO)/fresh \
		&& ../../$(PMEM) init && ../../$(PMEM) import ../export.json && ../../$(PMEM) show

lint: $(STAMP)
	$(VENV)/bin/ruff check planning_memory tests bench
	$(VENV)/bin/ruff format --check planning_memory tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy

unit: $(STAMP)
	$(VENV)/bin/pytest -m "not slow"

# the long suites (real processes, kills, fuzzing, merges of many branches); CI runs them too
test-slow: $(STAMP)
	$(VENV)/bin/pytest -m slow

test: lint typecheck unit

docs: $(STAMP)
	$(PY) -m planning_memory.cli.doc > docs/cli.md
	$(PY) -m planning_memory.cli.modmap > docs/modules.md

# the newest release of every dependency, no lock
test-latest:
	rm -rf $(LATEST) && $(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/pip install --quiet --upgrade -e '.[test]'
	$(LATEST)/bin/pytest

# the lowest version each of our bounds allows (direct dependencies; theirs resolve as usual)
test-lowest: $(STAMP)
	rm -rf $(LOWEST) && $(VENV)/bin/uv venv --quiet --seed --python $(PY) $(LOWEST)
	$(VENV)/bin/uv pip install --quiet --python $(LOWEST)/bin/python --resolution lowest-direct -e '.[test]'
	$(LOWEST)/bin/pytest

lock: $(STAMP)
	$(VENV)/bin/uv pip compile pyproject.toml --extra test --python-version 3.11 --universal \
		--upgrade --quiet --custom-compile-command "make lock" -o $(LOCK)

bench: $(STAMP)
	for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) $(LATEST) $(LOWEST) $(DEMO) dist build .mypy_cache .ruff_cache .pytest_cache
