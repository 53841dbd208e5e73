"""gpu_check's kNN rows: the miner's search at the paper's k with every backend the project has.

Random unit vectors (normal, L2-normalised, inner product = cosine), queries drawn from the corpus
(the miner's queries are corpus papers), k = the hard-negative band's end (paper §4.3: n_3999..n_4000).
The bands the miner draws from (``bands_of`` of the default config with that k: positives n_21..n_25,
hard negatives n_{k-1}..n_k) are compared entry by entry with faiss CPU's; a differing entry
counts as a float32 near-tie when the two similarities agree to 1e-5 (faiss and torch sum with
different BLAS), as in ``benchmarks/bench_triples.py``.

- faiss CPU: ``ann.build_index(..., "Flat")`` + ``ann.knn_search`` (the miner's ``--ann_backend faiss``);
- exact: :class:`scincl.knn.exact.ExactKnn` on the device (``--ann_backend exact --ann_device N``);
- faiss GPU: ``ann.build_index(..., device=N)`` (``index_cpu_to_gpu``) searched at faiss' GPU limit
  (``ann.GPU_MAX_SELECTION_K``), plus ``ann.knn_search`` at the full k on a few queries, which must
  fall back to a CPU copy (``index_gpu_to_cpu``) and match faiss CPU.
"""
from __future__ import annotations

import time
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

FALLBACK_QUERIES = 100  # queries of the k > GPU limit fallback check (the path, not its speed)


def random_unit_vectors(n: int, dim: int, seed: int = 0) -> np.ndarray:
    """``[n, dim]`` float32 normal vectors scaled to unit length."""
    x = np.random.default_rng(seed).standard_normal((n, dim), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def band_columns(query_rows: np.ndarray, raw: np.ndarray, bands: Sequence[Tuple[int, int]]) -> np.ndarray:
    """The miner's band columns of a raw ``[n, k+1]`` result (self dropped, as the miner does)."""
    from scincl.triples import strategies as st

    own = st.drop_self(query_rows, raw.copy())
    return np.hstack([own[:, lo:hi] for lo, hi in bands])


def compare_bands(x: np.ndarray, query_rows: np.ndarray, reference: np.ndarray, other: np.ndarray) -> Dict[str, int]:
    """Entries equal to the reference, and how many of the others are float32 near-ties."""
    differ = np.argwhere(reference != other)
    near = 0
    for r, c in differ:
        q = x[query_rows[r]].astype(np.float64)
        a, b = x[reference[r, c]].astype(np.float64) @ q, x[other[r, c]].astype(np.float64) @ q
        near += int(abs(a - b) <= 1e-5 * max(abs(a), abs(b), 1.0))
    return {"entries": int(reference.size), "identical": int(reference.size - len(differ)), "near_ties": near}


def knn_checks(n: int, dim: int, queries: int, k: int, device: Optional[int], faiss_gpu: bool,
               out: Dict[str, Dict[str, Any]], seed: int = 0) -> None:
    """Fill ``out`` with ``{"faiss_cpu", "exact", "faiss_gpu"}`` figures as each finishes (faiss_gpu only
    when ``faiss_gpu``; ``{"error": ...}`` when its GPU calls fail, so the other two still count)."""
    from scincl.knn import ann
    from scincl.knn.exact import ExactKnn
    from scincl.triples.miner import make_config
    from scincl.triples.knn_miner import bands_of

    x = random_unit_vectors(n, dim, seed)
    query_rows = np.sort(np.random.default_rng(seed + 1).choice(n, size=queries, replace=False))
    bands = bands_of(make_config(hard_negatives_k_min=k - 2, hard_negatives_k_max=k))

    started = time.perf_counter()
    index = ann.build_index(x, "Flat", metric="inner_product")
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    _, cpu_raw = ann.knn_search(index, x[query_rows], k + 1, show_progress=False)
    reference = band_columns(query_rows, cpu_raw, bands)
    out["faiss_cpu"] = {"seconds": time.perf_counter() - started, "build_seconds": build_s, "k": k,
                        "bands": [list(b) for b in bands], "shape": list(cpu_raw.shape)}

    try:
        started = time.perf_counter()
        exact = ExactKnn(x, metric="inner_product", bands=bands, device=-1 if device is None else device)
        raw = exact.search(query_rows, k + 1)
        seconds = time.perf_counter() - started
        out["exact"] = {"seconds": seconds, "device": str(exact.device), "k": k, "tie_rows": exact.tie_rows,
                        **compare_bands(x, query_rows, reference, band_columns(query_rows, raw, bands))}
        del exact
    except Exception as exc:  # noqa: BLE001 - reported in the row
        out["exact"] = {"error": f"{type(exc).__name__}: {str(exc).strip()[:300]}"}
    if device is not None and device >= 0:
        import torch

        torch.cuda.empty_cache()  # the exact backend's corpus copy: give the memory to faiss
    if faiss_gpu:
        try:
            out["faiss_gpu"] = _faiss_gpu_check(x, query_rows, cpu_raw, bands, k, device or 0)
        except Exception as exc:  # noqa: BLE001 - reported in the row
            out["faiss_gpu"] = {"error": f"{type(exc).__name__}: {str(exc).strip()[:300]}"}


def _faiss_gpu_check(x: np.ndarray, query_rows: np.ndarray, cpu_raw: np.ndarray, bands: Sequence[Tuple[int, int]],
                     k: int, device: int) -> Dict[str, Any]:
    """faiss GPU at its selection limit vs faiss CPU, and the CPU fallback beyond it."""
    from scincl.knn import ann

    started = time.perf_counter()
    gpu_index = ann.build_index(x, "Flat", metric="inner_product", device=device)
    build_s = time.perf_counter() - started
    k_gpu = min(k + 1, ann.GPU_MAX_SELECTION_K)
    in_reach = [(lo, hi) for lo, hi in bands if hi <= k_gpu - 1]
    started = time.perf_counter()
    _, raw = ann.knn_search(gpu_index, x[query_rows], k_gpu, show_progress=False)
    seconds = time.perf_counter() - started
    few = query_rows[:FALLBACK_QUERIES]
    _, fallback = ann.knn_search(gpu_index, x[few], k + 1, show_progress=False)  # > GPU limit: CPU copy
    return {"seconds": seconds, "build_seconds": build_s, "k": k_gpu - 1, "on_gpu": ann.is_gpu_index(gpu_index),
            "bands_compared": [list(b) for b in in_reach],
            **compare_bands(x, query_rows, band_columns(query_rows, cpu_raw, in_reach),
                            band_columns(query_rows, raw, in_reach)),
            "fallback": compare_bands(x, few, band_columns(few, cpu_raw[:len(few)], bands),
                                      band_columns(few, fallback, bands))}


def bands_agree(figures: Dict[str, Any]) -> bool:
    """Every band entry identical to faiss CPU's or a float32 near-tie."""
    return figures["identical"] + figures["near_ties"] == figures["entries"]


def summary(figures: Dict[str, Any]) -> str:
    """``identical x of y (z near-ties)``."""
    text = f"bands identical {figures['identical']:,} of {figures['entries']:,}"
    return text + (f" ({figures['near_ties']} others float32 near-ties)" if figures["near_ties"] else "")

