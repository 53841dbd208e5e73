"""Every sbin/ script submitted with sbatch to a real single-node Slurm, on the demo corpus.

The cluster (munged + slurmctld + slurmd, :mod:`tests.slurm.slurm_local`) lives in a temp dir for this
module and is stopped and removed at the end, whatever happened. The scripts run unedited, from
the repository root, exactly as docs/REPRODUCE.md's cluster walk-through: CPU settings come from
environment variables and ``sbatch -c/--mem/--gres`` overrides of the headers, the demo's scale
from run_specter flags appended to the script's own (the last one wins). BigGraph's distributed
mode runs as ``srun -n 2`` ranks; multi-process training as ``srun`` + ``torchrun`` (gloo).

Needs root and ``make slurm-test-deps`` (Debian's slurm-wlm + munge); skipped otherwise.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import h5py
import pytest

from scincl.io import read_id_list
from tests.conftest import REPO_ROOT as REPO
from tests.slurm.slurm_local import LocalSlurm, prepare_downloads, unavailable_reason

SBIN = REPO / "sbin"
REASON = unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"local Slurm: {REASON}")

# sbatch overrides of the GPU-cluster headers: no GPU, one core, a few GB (the scripts are unedited)
CPU_JOB = ["--gres=none", "-c", "1", "--mem=3G"]
# the demo corpus has a few hundred papers: hard negatives 98-100 instead of 3998-4000, tiny training
DEMO_SCALE = ["--hard_negatives_k_min", "98", "--hard_negatives_k_max", "100", "--max_sequence_length", "32",
              "--num_train_epochs", "1", "--per_device_train_batch_size", "8", "--sample_queries_ratio", "0.5",
              "--eval_max_sequence_length", "32", "--report_to", "none"]
# the array scripts differ from run_specter.sbatch only in their task -> flags mapping: stop after the triplets
TRIPLES_ONLY = ["--skip_metadata", "--skip_train", "--skip_eval_base", "--skip_eval", "--skip_compare"]
GRAPH_EPOCHS = "num_epochs=3"  # the demo config's 15 are more than the checks here need
WAIT_S = 480  # all jobs together; a healthy run needs a fraction of it on a shared 2-core machine


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    slurm = LocalSlurm(tmp_path_factory.mktemp("slurm"))
    started = time.monotonic()
    try:
        slurm.start()
        yield slurm
    finally:
        slurm.stop()
        logs = slurm.job_logs
        for log in logs:
            log.unlink(missing_ok=True)  # the job logs this module wrote to the checkout's logs/
        print(f"\nlocal Slurm: {time.monotonic() - started:.0f} s from start to stop")


@pytest.fixture(scope="module")
def walkthrough(cluster, tmp_path_factory, demo_corpus, demo_citations, demo_tiny_bert):
    """docs/REPRODUCE.md "On a Slurm cluster", submitted from the repository root."""
    data = tmp_path_factory.mktemp("slurm_data")
    biggraph = data / "biggraph"
    env = {  # no S2ORC_EMBEDDINGS: the plan's graph stage (02_biggraph) builds them in OUTPUT_DIR/graph/
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # `python` = this venv
        "DATA_DIR": str(data), "S2ORC_METADATA_DIR": str(demo_corpus.s2orc_metadata_dir),
        "SCIDOCS_DIR": str(demo_corpus.scidocs_dir), "SCIDOCS_PAPER_IDS": str(demo_corpus.scidocs_paper_ids_path),
        "BIGGRAPH_DIR": str(biggraph), "BIGGRAPH_CONFIG": str(REPO / "biggraph_configs" / "demo.py"),
        "BIGGRAPH_DISTRIBUTED_CONFIG": str(REPO / "biggraph_configs" / "demo.py"), "BIGGRAPH_OVERRIDES": GRAPH_EPOCHS,
        "OUTPUT_DIR": str(data / "scincl"), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
        **prepare_downloads(data, demo_corpus, demo_citations, demo_tiny_bert),
    }
    plan_flags = DEMO_SCALE + ["--scidocs_paper_ids", str(demo_corpus.scidocs_paper_ids_path)]  # every plan script
    started = time.monotonic()

    def submit(script: str, options=(), args=(), extra_env=None) -> str:
        return cluster.sbatch(SBIN / script, options=list(options), args=list(args), cwd=REPO,
                              env={**env, **(extra_env or {})})

    def after(*names: str) -> list:
        return [f"--dependency=afterok:{':'.join(jobs[n] for n in names)}"]

    # docs/REPRODUCE.md: 01 -> 02 -> 03 -> run_specter are --stages selections of one plan (the same flags)
    jobs = {"01_citations": submit("01_citations.sbatch", CPU_JOB, plan_flags)}
    jobs["02_biggraph"] = submit("02_biggraph.sbatch", CPU_JOB + after("01_citations"), plan_flags)
    jobs["02b_biggraph_distributed"] = submit(
        "02b_biggraph_distributed.sbatch", ["-N", "1", "-n", "2", "--ntasks-per-node=2", "-c", "1", "--mem=4G"]
        + after("01_citations"), ["-p", GRAPH_EPOCHS, "--random_baseline=False"],
        extra_env={"BIGGRAPH_NUM_PARTITIONS": "2"})  # 4 buckets, all with test edges
    jobs["03_faiss"] = submit("03_faiss.sbatch", CPU_JOB + after("02_biggraph"), plan_flags)
    jobs["run_specter"] = submit("run_specter.sbatch", CPU_JOB + after("03_faiss"), plan_flags + ["--skip_eval_base"])
    scidocs_ids = plan_flags[-2:]
    jobs["seeds"] = submit("seeds.sbatch", CPU_JOB + after("02_biggraph") + ["--array=1"],
                           DEMO_SCALE + scidocs_ids + TRIPLES_ONLY)
    jobs["sweep_knn"] = submit("sweep_knn.sbatch", CPU_JOB + after("02_biggraph") + ["--array=6"],
                               DEMO_SCALE[4:] + scidocs_ids + TRIPLES_ONLY)  # task 6: k-hard 98-100 itself
    jobs["ablations"] = submit("ablations.sbatch", CPU_JOB + after("02_biggraph") + ["--array=4"],
                               DEMO_SCALE + scidocs_ids + TRIPLES_ONLY)  # BitFit
    # the job that starts from run_specter's experiment directory (which it prints as "Outputs: ...")
    cluster.wait([jobs["run_specter"]], timeout=WAIT_S)
    exp_dirs = [p.parent for p in (data / "scincl").glob("specter/corpus_seed_0/*/*/manifest.json")]
    if len(exp_dirs) == 1:
        jobs["train_multi_gpu"] = submit(
            "train_multi_gpu.sbatch", ["--gres=none", "-N", "1", "-c", "1", "--mem=4G"],
            ["--max_steps", "2", "--per_device_train_batch_size", "4", "--max_sequence_length", "32"],
            extra_env={"EXP_DIR": str(exp_dirs[0]), "GPUS_PER_NODE": "2", "SAVE_STEPS": "2", "OMP_NUM_THREADS": "1"})
    states = cluster.wait(list(jobs.values()), timeout=max(60.0, WAIT_S - (time.monotonic() - started)))
    print("\nSlurm jobs (run times): " + "; ".join(f"{k} {v}" for k, v in sorted(cluster.run_time.items())))
    return {"jobs": jobs, "states": states, "data": data, "exp_dirs": exp_dirs,
            "seconds": time.monotonic() - started}


def log_of(walkthrough, cluster, name: str, array_task: int | None = None) -> str:
    job = walkthrough["jobs"][name]
    path = cluster.log_path(job, array_task)
    return path.read_text() if path.exists() else f"(no log at {path})"


def assert_completed(walkthrough, cluster, name: str, array_task: int | None = None) -> str:
    job = walkthrough["jobs"].get(name)
    assert job is not None, f"{name} was not submitted (run_specter experiment dirs: {walkthrough['exp_dirs']})"
    key = f"{job}_{array_task}" if array_task is not None else job
    log = log_of(walkthrough, cluster, name, array_task)
    assert walkthrough["states"].get(key) == "COMPLETED", f"{name}: {walkthrough['states'].get(key)}\n{log[-4000:]}"
    return log


def test_citations_job(walkthrough, cluster):
    assert_completed(walkthrough, cluster, "01_citations")
    full = len((walkthrough["data"] / "biggraph" / "s2orc_full" / "citations.tsv").read_text().splitlines())
    split = [len((walkthrough["data"] / "scincl" / "citations" / f"citations.{name}.tsv").read_text().splitlines())
             for name in ("train", "test")]
    assert 0 < sum(split) < full and split[1] > 0  # the plan's split leaves the SciDocs papers out


def test_biggraph_job(walkthrough, cluster):
    assert_completed(walkthrough, cluster, "02_biggraph")
    graph = walkthrough["data"] / "scincl" / "graph"
    ids = read_id_list(graph / "entity_names_paper_id_0.json")
    with h5py.File(graph / "embeddings.h5", "r") as f:
        assert f["embeddings"].shape[0] == len(ids) > 100
    assert json.loads((graph / "link_prediction.json").read_text())["results"]["trained"]["count"] > 0


def test_distributed_biggraph_job_runs_two_ranks(walkthrough, cluster):
    log = assert_completed(walkthrough, cluster, "02b_biggraph_distributed")
    assert "rank 0 of 2" in log and "rank 1 of 2" in log
    graph = walkthrough["data"] / "biggraph" / "demo_distributed"
    single = json.loads((walkthrough["data"] / "scincl" / "graph" / "link_prediction.json").read_text())
    distributed = json.loads((graph / "link_prediction.json").read_text())["results"]["trained"]
    assert distributed["count"] == single["results"]["trained"]["count"]
    assert distributed["mrr"] > 2 * single["results"]["random"]["mrr"]  # trained, not random
    assert read_id_list(graph / "entity_names_paper_id_0.json")


def test_run_specter_job(walkthrough, cluster):
    assert_completed(walkthrough, cluster, "run_specter")
    (exp,) = walkthrough["exp_dirs"]
    results = json.loads((exp / "results.json").read_text())
    assert results and (exp / "comparison" / "comparison.md").exists() and list(exp.glob("model_*/config.json"))
    corpus = read_id_list(exp / "s2orc_paper_ids.seed_0.json")
    # no ANN_INDEX_PATH: the index is the run's own, next to its corpus ids
    assert read_id_list(Path(f"{exp}/s2orc_paper_ids.seed_0.json.Flat.faiss.paper_ids.json")) == corpus
    manifest = json.loads((exp / "manifest.json").read_text())
    assert manifest["arguments"]["save_steps"] == 2000 and manifest["arguments"]["workers"] == 1
    # the stages 01-03 ran are reused from the runner's records, the rest ran here
    status = {name: stage["status"] for name, stage in manifest["stages"].items()}
    assert {status[n] for n in ("citations", "graph", "queries", "ann")} == {"reused"} and status["train"] == "ran"


@pytest.mark.parametrize("name, task, run_dir", [
    ("seeds", 1, "seeds/seed_1"), ("sweep_knn", 6, "sweep/k_hard/100"), ("ablations", 4, "ablations/bitfit")])
def test_array_jobs(walkthrough, cluster, name, task, run_dir):
    assert_completed(walkthrough, cluster, name, array_task=task)
    run = walkthrough["data"] / "scincl" / run_dir
    assert (run / "train_triples.csv.gz").stat().st_size > 0
    assert json.loads((run / "manifest.json").read_text())["stages"]["train"]["status"] == "skipped"


def test_faiss_job_indexes_the_experiment_corpus(walkthrough, cluster):
    assert_completed(walkthrough, cluster, "03_faiss")
    (exp,) = walkthrough["exp_dirs"]
    corpus = read_id_list(exp / "s2orc_paper_ids.seed_0.json")
    index = Path(f"{exp}/s2orc_paper_ids.seed_0.json.Flat.faiss")
    assert sorted(read_id_list(Path(f"{index}.paper_ids.json"))) == sorted(corpus)


def test_multi_process_training_job(walkthrough, cluster):
    log = assert_completed(walkthrough, cluster, "train_multi_gpu")
    (exp,) = walkthrough["exp_dirs"]
    run = json.loads((exp / "model_ddp" / "train_args.json").read_text())
    assert run["world_size"] == 2 and run["metrics"]["global_step"] == 2
    assert log.count("saved encoder to") == 1  # rank 0 saves
    print(f"\nSlurm walk-through: {walkthrough['seconds']:.0f} s of jobs")
