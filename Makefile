# Two entry points (see README): `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements-installed

.PHONY: setup demo test bench clean slurm-test-deps docs-tables gpu-check

setup: $(STAMP)

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24" 2>/dev/null || true
	# a GPU machine with faiss-gpu swapped in (docs/REPRODUCE.md "On a GPU") keeps it: faiss-cpu would overwrite the module
	if $(PY) -m pip show -q faiss-gpu >/dev/null 2>&1; then \
	  grep -v -E '^faiss-cpu' requirements.txt > $(VENV)/requirements-gpu.txt && $(PY) -m pip install --quiet -r $(VENV)/requirements-gpu.txt; \
	else \
	  $(PY) -m pip install --quiet -r requirements.txt; \
	fi
	# optional: the SciDocs protocol's LinearSVC (sklearn-contrib-lightning); its sdist needs numpy at build time
	$(PY) -m pip install --quiet cython && $(PY) -m pip install --quiet --no-build-isolation sklearn-contrib-lightning \
	  || echo "optional sklearn-contrib-lightning not installed: SciDocs MAG/MeSH use scikit-learn's LinearSVC"
	touch $(STAMP)

demo: setup
	$(PY) cli_pipeline.py run_specter

# two pytest-xdist workers (the 2-core CI machine; tests/conftest.py groups the tests and sets one torch thread per
# worker): about half the wall time of one process
test: setup
	$(PY) -m pytest -q -n 2 --dist loadgroup

# tests/slurm/test_slurm.py runs sbin/ on a real single-node Slurm (munged + slurmctld + slurmd on localhost).
# An explicit step (`make test` changes nothing outside the repository; .ci/run calls this first): as root with
# apt-get it installs Debian's slurm-wlm + munge system-wide, once; otherwise that test module skips and says why.
slurm-test-deps:
	@if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
	  echo "slurm-test-deps: not root or no apt-get; tests/slurm/test_slurm.py will be skipped"; \
	elif command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null; then \
	  true; \
	else \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    slurm-wlm munge >/dev/null) || echo "slurm-test-deps: apt-get failed; tests/slurm/test_slurm.py will be skipped"; \
	fi

# the docs' demo tables (docs/generated/) from a rerun of the docs' demo blocks and demo_output/ (make demo)
docs-tables: setup
	$(PY) -m scincl.docs_tables

# does this GPU node run the project's GPU paths, and how fast? One table, <= 15 min on one GPU;
# without a GPU: one line saying so, then a CPU dry run at tiny sizes (docs/REPRODUCE.md "On a GPU")
gpu-check: setup
	$(PY) benchmarks/gpu_check.py $(GPU_CHECK_FLAGS)

bench: setup
	for b in benchmarks/bench_*.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache
