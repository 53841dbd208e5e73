"""``make gpu-check`` (benchmarks/gpu_check.py): its CPU dry run end to end, once, and the arithmetic
of its figures (scincl.model.throughput). The dry run exercises the same code paths as on a GPU at
tiny sizes: training through the Trainer in fp32 / bf16 / gradient checkpointing, torchrun with two
gloo processes against one process, the kNN backends, the evaluation's embedding, run_specter."""
from __future__ import annotations

import json
import math
import re
import sys

import pytest

from scincl.model.throughput import (
    PAPER_TRIPLETS, batch_matmul_flops, matmul_flops_per_token, model_flops_utilisation, projected_seconds,
    published_bf16_peak_tflops,
)
from tests.conftest import REPO_ROOT, run_front_end

DOCS_TABLE = "docs/generated/gpu_check_dry_run.md"
sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
CHECKS = ["environment", "train fp32", "train bf16", "train gradient checkpointing",
          "train torchrun (2 CPU processes)", "kNN exact backend", "kNN faiss GPU", "kNN faiss CPU",
          "embedding (evaluation)", "run_specter demo"]


@pytest.fixture(scope="module")
def dry_run(repo_root, tmp_path_factory):
    """One ``gpu_check.py --dry_run`` (the CPU path, also on a GPU machine): its output, table and rows."""
    tmp = tmp_path_factory.mktemp("gpu_check")
    done = run_front_end("benchmarks/gpu_check.py", "--dry_run", "--output", tmp / "table.md", "--json",
                         tmp / "rows.json", timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = {row["check"]: row for row in json.loads((tmp / "rows.json").read_text())}
    return {"stdout": done.stdout, "table": (tmp / "table.md").read_text(), "rows": rows}


def test_dry_run_says_so_in_one_line_and_prints_the_table(dry_run):
    lines = dry_run["stdout"].splitlines()
    assert re.fullmatch(r"gpu_check: no GPU \(.+\): CPU dry run of the same code paths at tiny sizes", lines[0])
    assert dry_run["table"] in dry_run["stdout"]  # the table printed is the one written
    assert re.fullmatch(r"10 checks: 9 pass, 0 fail, 1 skip; \d+ s of the 15 min budget", lines[-1])
    assert list(dry_run["rows"]) == CHECKS


def test_dry_run_rows_hold_measured_values(dry_run):
    rows = dry_run["rows"]
    assert {name: row["status"] for name, row in rows.items() if row["status"] != "pass"} == {"kNN faiss GPU": "skip"}
    env = rows["environment"]["data"]
    assert env["gpus"] == 0 and env["faiss_gpu_requirement"].startswith("faiss-gpu==")
    for name in ("train fp32", "train bf16", "train gradient checkpointing"):
        fig = rows[name]["data"]
        assert fig["timed_steps"] == 2 and fig["triplets_per_s"] > 0 and fig["peak_memory_bytes"] > 0
        # dedup: a batch of 8 triplets (5 per query) encodes fewer than 24 papers, at least 2 queries' 17
        assert 8 < fig["papers_per_batch"] < 24
        assert fig["tokens_per_s"] == pytest.approx(fig["triplets_per_s"] * fig["papers_per_batch"] / 8 * 32, rel=1e-6)
        assert fig["projected_seconds"] == pytest.approx(PAPER_TRIPLETS * 2 / fig["triplets_per_s"])
        assert fig["mfu"] is None  # a CPU has no published bf16 peak
    assert rows["train fp32"]["data"]["result_bf16"] is False and rows["train bf16"]["data"]["result_bf16"] is True
    ddp = rows["train torchrun (2 CPU processes)"]["data"]
    assert (ddp["world_size"], ddp["backend"]) == (2, "gloo")
    assert list(ddp["losses_ddp"]) == list(ddp["losses_one"]) == ["0", "1", "2"]
    assert len(set(ddp["losses_one"].values())) == 3  # the steps trained: the losses move
    assert ddp["delta"] <= 1e-5 and all(math.isfinite(v) for v in ddp["losses_ddp"].values())
    exact = rows["kNN exact backend"]["data"]
    assert exact["entries"] == 200 * 7 and exact["identical"] + exact["near_ties"] == exact["entries"]
    assert rows["kNN faiss CPU"]["data"]["shape"] == [200, 401]
    embedding = rows["embedding (evaluation)"]["data"]
    assert embedding["written"] == embedding["papers"] == 64 and embedding["dimension"] == 64
    assert embedding["embed_matches_encode"] and embedding["fp32_papers_per_s"] > 0
    specter = rows["run_specter demo"]["data"]
    assert specter["stages"] == 11 and 0 < specter["average"]["test"]["value"] < 100  # no eval_base in the dry run


def test_docs_show_the_dry_runs_table_shape(dry_run, repo_root):
    """docs/REPRODUCE.md pastes a dry run's table (docs/generated/): same checks, results and columns."""
    cached = (repo_root / DOCS_TABLE).read_text().splitlines()
    fresh = dry_run["table"].splitlines()
    assert cached[:2] == fresh[:2] and len(cached) == len(fresh)
    assert [line.split("|")[1:4] for line in cached] == [line.split("|")[1:4] for line in fresh]


def test_faiss_gpu_package_is_the_one_the_dockerfile_installs(repo_root):
    pin = next(ln for ln in (repo_root / "requirements.txt").read_text().splitlines() if ln.startswith("faiss-cpu=="))
    wanted = "faiss-gpu==" + pin.split("==")[1].split()[0]
    assert f"ARG FAISS_GPU_PACKAGE={wanted}" in (repo_root / "Dockerfile").read_text()
    assert f"pip install {wanted}" in (repo_root / "docs" / "REPRODUCE.md").read_text()


# ------------------------------------------------------------------ the figures' arithmetic

@pytest.mark.parametrize("name, tflops", [
    ("NVIDIA A100-SXM4-80GB", 312.0), ("NVIDIA A100 80GB PCIe", 312.0), ("NVIDIA A10", 125.0),
    ("NVIDIA H100 80GB HBM3", 989.4), ("NVIDIA H100 PCIe", 756.0), ("NVIDIA L40S", 362.05), ("NVIDIA L4", 121.0),
    ("Tesla V100-SXM2-32GB", None), ("Tesla T4", None), ("NVIDIA A10G", None),
])
def test_published_bf16_peaks_by_gpu_name(name, tflops):
    assert published_bf16_peak_tflops(name) == tflops


def test_model_flops_mfu_and_projection():
    # BERT-base at 512 tokens: 85M non-embedding parameters -> 6N + 12 x 12 layers x 768 x 512 per token
    per_token = matmul_flops_per_token(85_000_000, 12, 768, 512)
    assert per_token == 6 * 85_000_000 + 12 * 12 * 768 * 512
    assert batch_matmul_flops([(18, 512), (17, 512)], 85_000_000, 12, 768) == pytest.approx(35 * 512 * per_token)
    assert model_flops_utilisation(156e12, 1.0, 312.0) == pytest.approx(0.5)
    assert model_flops_utilisation(1e12, 1.0, None) is None
    assert projected_seconds(100.0, 2) == PAPER_TRIPLETS * 2 / 100.0 == 13_682.0
    with pytest.raises(ValueError):
        projected_seconds(0.0, 2)


def test_gpu_rows_read_the_figures_a_gpu_run_produces():
    """The GPU-only rows' text and verdicts, from figures of the shape a GPU run writes (no GPU here)."""
    import gpu_check
    import gpu_check_rows

    sizes = gpu_check.paper_sizes()
    bands = {"entries": 10_000 * 5, "identical": 10_000 * 5 - 3, "near_ties": 3}
    results = {"faiss_cpu": {"seconds": 40.0, "build_seconds": 0.5},
               "exact": {"seconds": 4.0, "device": "cuda:0", "k": 4000, "tie_rows": 0, "entries": 70_000,
                         "identical": 70_000, "near_ties": 0},
               "faiss_gpu": {"seconds": 1.5, "build_seconds": 0.8, "k": 2047, "on_gpu": True,
                             "bands_compared": [[20, 25]], **bands,
                             "fallback": {"entries": 700, "identical": 699, "near_ties": 0}}}
    exact, gpu = gpu_check_rows.knn_rows(results, sizes, gpus=1, faiss_gpu=True)
    assert (exact.status, exact.device) == ("pass", "cuda:0") and "4.00 s = 0.10x faiss CPU's time" in exact.figures
    assert gpu.status == "fail" and "k=2047 (faiss' GPU limit)" in gpu.figures  # one fallback entry differs
    results["faiss_gpu"]["fallback"]["identical"] = 700
    assert gpu_check_rows.knn_rows(results, sizes, gpus=1, faiss_gpu=True)[1].status == "pass"
    no_faiss_gpu = gpu_check_rows.knn_rows(results, sizes, gpus=1, faiss_gpu=False)[1]
    assert no_faiss_gpu.status == "skip" and "pip install faiss-gpu==" in no_faiss_gpu.figures
    results["exact"] = {"error": "OutOfMemoryError: CUDA out of memory"}
    assert gpu_check_rows.knn_rows(results, sizes, gpus=1, faiss_gpu=True)[0].status == "fail"
    # a training result of an A100 (312 TFLOPS): 8 timed steps of 4 micro-batches of 18 papers x 512 tokens
    run = {"seconds": 10.0, "triplets": 8 * 32, "tokens": 32 * 18 * 512, "papers_encoded": 32 * 18,
           "micro_batches": 32, "shapes": [[18, 512]] * 32, "peak_memory_bytes": 20 * 2**30,
           "non_embedding_params": 85_000_000, "layers": 12, "hidden_size": 768, "timed_steps": 8}
    fig = gpu_check_rows.training_figures([run], 312.0, 2)
    assert fig["triplets_per_s"] == 25.6 and fig["mfu"] == pytest.approx(
        32 * 18 * 512 * matmul_flops_per_token(85_000_000, 12, 768, 512) / 10.0 / 312e12)
    text = gpu_check_rows.describe_training(fig, 312.0, "cuda", 2)
    assert f"MFU {fig['mfu']:.1%} of 312 TFLOPS bf16" in text and "peak memory 20.00 GiB" in text
    assert "684,100 triplets x 2 epochs: 14.8 h on 1 cuda device" in text
