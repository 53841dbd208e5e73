# Two entry points (see README): `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements-installed

.PHONY: setup demo test bench clean

setup: $(STAMP)

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24" 2>/dev/null || true
	$(PY) -m pip install --quiet -r requirements.txt
	# optional: the SciDocs protocol's LinearSVC (sklearn-contrib-lightning); its sdist needs numpy at build time
	$(PY) -m pip install --quiet cython && $(PY) -m pip install --quiet --no-build-isolation sklearn-contrib-lightning \
	  || echo "optional sklearn-contrib-lightning not installed: SciDocs MAG/MeSH use scikit-learn's LinearSVC"
	touch $(STAMP)

demo: setup
	$(PY) cli_pipeline.py run_specter

test: setup
	$(PY) -m pytest -q

bench: setup
	for b in benchmarks/bench_*.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache
