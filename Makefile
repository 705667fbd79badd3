# Single entry point. `make demo` and `make test` each set up .venv on a fresh machine first.
VENV := .venv
PY := $(VENV)/bin/python

# One pytensor compile cache for every run, so compiled model graphs are reused across
# test runs, the demo and benchmarks (the cache is keyed on the graph, so sharing is safe).
# The Python source PyTensor generates for numba goes beside it, one file per distinct source
# that PyTensor prunes; left unset, it writes a new file into /tmp for every compiled function
# and never removes them (tens of thousands over a day of test runs).
PYTENSOR_CACHE := $(HOME)/.cache/bayesgen/pytensor
export PYTENSOR_FLAGS ?= base_compiledir=$(PYTENSOR_CACHE),generated_src_dir=$(PYTENSOR_CACHE)/generated_src
export MPLBACKEND ?= Agg

.PHONY: setup demo test test-slow test-all lint bench docs clean

setup:
	@sh .ci/ensure-venv

demo: setup
	$(VENV)/bin/bayesgen demo

# Test files are spread over one worker per core (at most 4), a file's tests on one worker so
# that its module fixtures are made once; PYTEST_WORKERS=0 runs them in this process.
PYTEST_WORKERS ?= auto
PARALLEL = -n $(PYTEST_WORKERS) --maxprocesses 4 --dist loadfile

test: setup
	$(PY) -m pytest $(PARALLEL)

test-slow: setup
	$(PY) -m pytest $(PARALLEL) -m slow

test-all: setup
	$(PY) -m pytest $(PARALLEL) -m ""

lint: setup
	$(PY) -m ruff check bayesgen tests benchmarks examples
	$(PY) -m ruff format --check bayesgen tests benchmarks examples

bench: setup
	$(PY) benchmarks/bench_closed_form.py

docs: setup
	$(VENV)/bin/sphinx-build -W --keep-going -b html docs docs/_build/html

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build *.egg-info
