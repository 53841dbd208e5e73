"""experiments/run.sh, the one shell entry point of the real-corpus experiments: what it runs for each name.

``PYTHON=/bin/echo`` prints the command instead of running it (no corpus, no Python start-up); its syntax
and shellcheck are checked with sbin's scripts (tests/slurm/test_sbin.py)."""
from __future__ import annotations

import subprocess

from tests.conftest import REPO_ROOT

RUN_SH = REPO_ROOT / "experiments" / "run.sh"


def _run(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(RUN_SH), *args], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "PYTHON": "/bin/echo", **env})


def test_a_name_is_one_run_experiment_call_with_the_environments_recipe_values_under_the_flags_names():
    done = _run("hepth_main", "--seeds", "0", HARD_NEGATIVES_K_MAX="2000", POOLING_STRATEGY="cls", BASE_MODEL="m",
                SCINCL_RESULTS="/out", SCINCL_DATA="/data")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["cli_pipeline.py", "run_experiment", "hepth_main", "--output_dir", "/out",
                                   "--data_dir", "/data", "--hard_negatives_k_max", "2000", "--pooling_strategy", "cls",
                                   "--base_model_name_or_path", "m", "--seeds", "0"]
    refused = _run("hepth_main", K_HARD="2000")  # a former name is an error, never silently the default
    assert refused.returncode == 2 and refused.stderr.strip() == (
        "run.sh: K_HARD is now HARD_NEGATIVES_K_MAX (--hard_negatives_k_max in capitals)")


def test_all_runs_every_experiment_of_the_docs_in_order_and_help_names_the_commands():
    from scincl.settings.experiment import experiment_names

    done = _run("all", SCINCL_RESULTS="/nonexistent")
    assert done.returncode == 0, done.stderr
    ran = [line.split()[2] for line in done.stdout.splitlines() if line.startswith("cli_pipeline.py")]
    assert ran[0] == "hepth_tuning" and ran[-1] == "hepth_budget" and len(ran) == 9
    assert set(ran) <= set(experiment_names())
    assert "run.sh collect" in _run("--help").stdout


def test_list_prints_the_experiment_names_with_the_real_interpreter():
    """``run.sh list`` imports the settings only (it named a pipeline module's re-export of ``experiment_names``)."""
    import sys

    from scincl.settings.experiment import experiment_names

    done = _run("list", PYTHON=sys.executable)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == experiment_names()
