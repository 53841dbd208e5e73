#!/usr/bin/env python
"""kNN benchmark: our batched search (scincl.knn.ann / get_knn) vs one bare faiss ``index.search`` call.

Setting of the paper's hard-negative mining (SciNCL §3.2: negatives at kNN ranks up to 4000):
100k x 128-d float32 vectors (normal, L2-normalised, inner product = cosine; a Flat index), k = 4000,
5,000 queries drawn from the indexed vectors (a subset of the 100k to keep the run short; every
query costs the same, so the ratio does not depend on the query count), searched in batches of
4096 (two batches) against one bare ``index.search`` call over all 5,000.

Each variant runs in a fresh process (so peak memory is its own): the process builds the data and
index, records its resident memory, searches, and reports wall time and the peak RSS above the
pre-search level (``ru_maxrss``). Variants alternate and repeat; the best time of each is compared.

    python benchmarks/bench_knn.py [--vectors 100000 --dim 128 --k 4000 --queries 5000 --batch_size 4096 --repeats 2]
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

VARIANTS = ("bare faiss index.search", "scincl knn_search (get_knn)", "scincl get_knn, exclude_self (k+1)")


def _rss_bytes() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _run_variant(variant: str, n: int, dim: int, k: int, queries: int, batch_size: int, seed: int, out) -> None:
    import faiss
    import numpy as np

    from scincl.knn import ann
    from scincl.knn.papers import knn_for_papers

    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, dim), dtype=np.float32)
    faiss.normalize_L2(vectors)
    index = ann.build_index(vectors, "Flat", metric="inner_product")
    query_rows = np.sort(rng.choice(n, size=queries, replace=False))
    query_vectors = np.ascontiguousarray(vectors[query_rows])
    paper_ids = [str(i) for i in range(n)]
    baseline = _rss_bytes()
    started = time.perf_counter()
    if variant == VARIANTS[0]:
        distances, indices = index.search(query_vectors, k)
    elif variant == VARIANTS[1]:
        distances, indices = ann.knn_search(index, query_vectors, k, batch_size=batch_size, show_progress=False)
    else:
        ids_path = Path(os.environ["BENCH_TMP"]) / "queries.json"
        from scincl.io import write_id_list

        write_id_list(ids_path, [paper_ids[r] for r in query_rows])
        started = time.perf_counter()
        result = knn_for_papers(index, paper_ids, k, query_paper_ids=ids_path, batch_size=batch_size)
        distances, indices = result.distances, result.indices
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    out.put({"variant": variant, "seconds": seconds, "peak_extra_bytes": max(0, peak - baseline),
             "shape": indices.shape, "checksum": int(indices[:, :10].sum())})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--k", type=int, default=4000)
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--batch_size", type=int, default=4096)  # scincl.knn.ann.DEFAULT_SEARCH_BATCH_SIZE
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import tempfile

    os.environ.setdefault("TQDM_DISABLE", "1")  # no progress bars from the measured processes
    ctx = mp.get_context("spawn")
    results = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["BENCH_TMP"] = tmp
        for _ in range(args.repeats):
            for variant in VARIANTS:
                queue = ctx.Queue()
                p = ctx.Process(target=_run_variant, args=(variant, args.vectors, args.dim, args.k, args.queries,
                                                           args.batch_size, args.seed, queue))
                p.start()
                res = queue.get(timeout=1800)
                p.join()
                results[variant].append(res)

    output_bytes = args.queries * args.k * (4 + 8)
    batch_bytes = min(args.batch_size, args.queries) * args.k * (4 + 8)
    print(f"kNN benchmark: {args.vectors:,} x {args.dim}-d vectors (Flat, inner product), k={args.k}, "
          f"{args.queries:,} queries, batch_size={args.batch_size}, {args.repeats} repeats, "
          f"{os.cpu_count()} CPU cores (shared machine: absolute times are noisy; compare ratios)")
    print(f"result arrays (float32 distances + int64 ids): {output_bytes / 2**20:.1f} MiB in total, "
          f"{batch_bytes / 2**20:.1f} MiB per query batch of {min(args.batch_size, args.queries)}")
    checksums = {v: {r["checksum"] for r in rs} for v, rs in results.items()}
    same = checksums[VARIANTS[0]] == checksums[VARIANTS[1]]
    base_time = min(r["seconds"] for r in results[VARIANTS[0]])
    base_mem = min(r["peak_extra_bytes"] for r in results[VARIANTS[0]])
    print(f"{'variant':38s} {'best s':>8s} {'ratio':>7s} {'peak extra MiB':>15s} {'mem ratio':>10s}")
    for variant, runs in results.items():
        best = min(r["seconds"] for r in runs)
        mem = min(r["peak_extra_bytes"] for r in runs)
        print(f"{variant:38s} {best:8.2f} {best / base_time:6.2f}x {mem / 2**20:15.1f} "
              f"{mem / max(base_mem, 1):9.2f}x")
    ours = min(r["seconds"] for r in results[VARIANTS[1]])
    print(f"time ratio knn_search / bare faiss: {ours / base_time:.3f} (target <= 1.1); identical neighbours: {same}")
    n_batches = -(-args.queries // args.batch_size)
    ours_mem = min(r["peak_extra_bytes"] for r in results[VARIANTS[1]])
    print(f"memory per query batch (knn_search peak above pre-search RSS minus the result arrays, "
          f"over {n_batches} batches): {max(0, ours_mem - output_bytes) / 2**20:.1f} MiB working memory; "
          f"bare faiss over all {args.queries:,} queries at once: {max(0, base_mem - output_bytes) / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
