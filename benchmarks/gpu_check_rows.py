"""gpu_check's rows: what the table shows for each check, from the figures the checks measure.

Besides the environment row (which reads the installed versions and the GPUs), formatting and
verdicts only: the GPU-only rows are tested on the CPU with figures of the shape a GPU run writes
(tests/test_gpu_check.py).
"""
from __future__ import annotations

import math
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class Row:
    """One line of the table."""

    check: str
    status: str  # pass | fail | skip
    device: str
    figures: str
    seconds: float = 0.0
    data: Dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------------------- environment

def faiss_gpu_requirement() -> str:
    """The faiss GPU package of the installed faiss release (the Dockerfile's FAISS_GPU_PACKAGE)."""
    import faiss

    return f"faiss-gpu=={faiss.__version__}"


def driver_version() -> str:
    """The NVIDIA driver version from nvidia-smi ('n/a' without it)."""
    if shutil.which("nvidia-smi") is None:
        return "n/a (no nvidia-smi)"
    done = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True,
                          text=True, timeout=60)
    return done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else "n/a"


def environment_row(gpus: int, why_no_gpu: Optional[str]) -> Row:
    """torch / CUDA / driver, GPUs with memory and bf16, faiss GPU support."""
    import faiss
    import torch

    from scincl.knn import ann
    from scincl.model.device import choose_bf16, detect_cpu_flags

    parts = [f"torch {torch.__version__}, CUDA {torch.version.cuda or 'none'}, driver {driver_version()}"]
    for i in range(gpus):
        props = torch.cuda.get_device_properties(i)
        capability = (props.major, props.minor)
        _, why = choose_bf16("auto", "cuda", capability)
        parts.append(f"GPU {i}: {props.name}, {props.total_memory / 2**30:.1f} GiB, {why.split('(', 1)[1].rstrip(')')}")
    if not gpus:
        _, why = choose_bf16("auto", "cpu", cpu_flags=detect_cpu_flags())
        parts.append(f"no GPU ({why_no_gpu}); CPU {os.cpu_count()} cores, {why.split('(', 1)[1].rstrip(')')}")
    has_gpu_faiss = ann.gpu_available()
    parts.append(f"faiss {faiss.__version__} GPU support: "
                 + (f"yes ({faiss.get_num_gpus()} GPUs)" if has_gpu_faiss else
                    f"no (pip uninstall -y faiss-cpu && pip install {faiss_gpu_requirement()})"))
    return Row("environment", "pass", "cuda" if gpus else "cpu", "; ".join(parts),
               data={"torch": torch.__version__, "cuda": torch.version.cuda, "gpus": gpus,
                     "faiss_gpu": has_gpu_faiss, "faiss_gpu_requirement": faiss_gpu_requirement()})


# ------------------------------------------------------------------------------- training

def _gib(size: float) -> str:
    return f"{size / 2**30:.2f} GiB"


def hours(seconds: float) -> str:
    """``1.5 h`` from an hour on, else ``12.3 min``."""
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.1f} min"


def training_figures(results: List[Dict[str, Any]], peak_tflops: Optional[float], epochs: int) -> Dict[str, Any]:
    """Throughput, MFU and projection of one measured run (all ranks' results for DDP)."""
    from scincl.model.throughput import batch_matmul_flops, model_flops_utilisation, projected_seconds

    first = results[0]
    seconds = first["seconds"]
    triplets = sum(r["triplets"] for r in results)
    tokens = sum(r["tokens"] for r in results)
    rate = triplets / seconds
    flops = batch_matmul_flops([tuple(s) for s in first["shapes"]], first["non_embedding_params"], first["layers"],
                               first["hidden_size"])
    mfu = model_flops_utilisation(flops, seconds, peak_tflops)  # per device (rank 0's batches)
    return {"triplets_per_s": rate, "tokens_per_s": tokens / seconds,
            "papers_per_batch": first["papers_encoded"] / max(first["micro_batches"], 1),
            "peak_memory_bytes": max(r["peak_memory_bytes"] for r in results), "mfu": mfu,
            "projected_seconds": projected_seconds(rate, epochs), "timed_steps": first["timed_steps"]}


def describe_training(fig: Dict[str, Any], peak_tflops: Optional[float], device_type: str, epochs: int,
                      devices: int = 1) -> str:
    from scincl.model.throughput import PAPER_TRIPLETS

    memory = "peak memory" if device_type == "cuda" else "peak RSS (process)"
    mfu = (f"MFU {fig['mfu']:.1%} of {peak_tflops:g} TFLOPS bf16" if fig["mfu"] is not None else
           "MFU n/a (no published bf16 peak for this device; --peak_tflops)")
    return (f"{fig['triplets_per_s']:.2f} triplets/s, {fig['tokens_per_s']:,.0f} tokens/s, "
            f"{fig['papers_per_batch']:.1f} papers/micro-batch, {memory} {_gib(fig['peak_memory_bytes'])}, {mfu}; "
            f"{PAPER_TRIPLETS:,} triplets x {epochs} epochs: {hours(fig['projected_seconds'])} on {devices} "
            f"{device_type} device{'s' if devices > 1 else ''} ({fig['timed_steps']} timed steps)")


def losses_finite(results: List[Dict[str, Any]]) -> bool:
    return all(math.isfinite(v) for r in results for values in r["step_losses"].values() for v in values)


# ------------------------------------------------------------------------------- kNN rows

def knn_setting(s: Any) -> str:
    return f"{s.knn_vectors:,} x {s.knn_dim} unit vectors, {s.knn_queries:,} queries"


def knn_rows(results: Dict[str, Any], s: Any, gpus: int, faiss_gpu: bool) -> List[Row]:
    """The exact backend's and faiss GPU's rows from :func:`gpu_check_knn.knn_checks`' figures (``s``: the sizes)."""
    from gpu_check_knn import FALLBACK_QUERIES, bands_agree, summary

    where, rows = knn_setting(s), []
    if "exact" not in results:
        rows.append(Row("kNN exact backend", "skip", "cuda:0" if gpus else "cpu",
                        "not compared: the faiss CPU reference failed"))
    elif "error" in results["exact"]:
        rows.append(Row("kNN exact backend", "fail", "cuda:0" if gpus else "cpu", results["exact"]["error"]))
    else:
        exact = results["exact"]
        ratio = exact["seconds"] / results["faiss_cpu"]["seconds"]
        rows.append(Row("kNN exact backend", "pass" if bands_agree(exact) else "fail", exact["device"],
                        f"k={s.knn_k} on {where}: {exact['seconds']:.2f} s = {ratio:.2f}x faiss CPU's time; "
                        f"{summary(exact)}; {exact['tie_rows']} queries ranked on the tie path", exact["seconds"],
                        exact))
    gpu = results.get("faiss_gpu")
    if not gpus or not faiss_gpu or gpu is None:
        why = ("no GPU" if not gpus else f"faiss has no GPU support: pip uninstall -y faiss-cpu && pip install "
               f"{faiss_gpu_requirement()}" if not faiss_gpu else "not compared: the faiss CPU reference failed")
        rows.append(Row("kNN faiss GPU", "skip", "cuda" if gpus else "cpu", why))
    elif "error" in gpu:
        rows.append(Row("kNN faiss GPU", "fail", "cuda", gpu["error"]))
    else:
        ok = gpu["on_gpu"] and bands_agree(gpu) and bands_agree(gpu["fallback"])
        bands = ", ".join(f"n_{lo + 1}..n_{hi}" for lo, hi in gpu["bands_compared"])
        rows.append(Row("kNN faiss GPU", "pass" if ok else "fail", "cuda",
                        f"k={gpu['k']} (faiss' GPU limit) on {where}: {gpu['seconds']:.2f} s (build "
                        f"{gpu['build_seconds']:.2f} s), {bands}: {summary(gpu)}; k={s.knn_k} falls back to a CPU "
                        f"copy: {summary(gpu['fallback'])} ({min(FALLBACK_QUERIES, s.knn_queries)} queries)",
                        gpu["seconds"] + gpu["build_seconds"], gpu))
    return rows


# ------------------------------------------------------------------------------- output

def markdown(rows: List[Row]) -> str:
    """The table as Markdown (one row per check)."""
    out = ["| check | result | device | figures | seconds |", "|---|---|---|---|---:|"]
    for row in rows:
        out.append(f"| {row.check} | {row.status} | {row.device} | {row.figures.replace('|', '/')} | "
                   f"{row.seconds:.1f} |")
    return "\n".join(out) + "\n"
