#!/usr/bin/env python
"""Benchmark: SciNCL triple mining vs the bare FAISS search inside it (issue 4, target <= 1.5x).

Setting (paper §4.3 defaults): 100k papers x 128-d clustered vectors, flat inner-product index,
k = 4000 (hard negatives n_3999..n_4000), positives n_21..n_25, 3 random_without_knn easy
negatives, 5 triples per query, 10k queries.

- baseline: one ``index.search(queries, k + 1)`` call (the kNN matrix alone), run before and after
  ours (the mean is the baseline; the two runs show how noisy the machine is);
- ours: :func:`mine_knn_triples` with :func:`scincl.ann.knn_search` (block-wise search + band
  selection + random_without_knn sampling) and writing the triples CSV.

Prints times, the ratio, and how much of ours is search vs sampling. Absolute times depend on the
machine (and on other load); the ratio is what matters.

    .venv/bin/python benchmarks/bench_triples.py [--papers 100000] [--queries 10000] [--k 4000]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scincl import ann  # noqa: E402
from scincl.triples.config import make_config  # noqa: E402
from scincl.triples.knn_miner import write_mined_triples  # noqa: E402
from scincl.triples.miner import Corpus, mine_knn_triples  # noqa: E402


def clustered_vectors(n: int, dim: int, seed: int, clusters: int = 1000) -> np.ndarray:
    """Gaussian clusters (a stand-in for graph embeddings with topical structure)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dim)).astype(np.float32)
    x = centres[rng.integers(0, clusters, n)] + 0.5 * rng.normal(size=(n, dim)).astype(np.float32)
    return np.ascontiguousarray(x, dtype=np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--k", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="faiss OpenMP threads (default: faiss' own)")
    args = parser.parse_args()

    import faiss

    ann.set_workers(args.threads)
    x = clustered_vectors(args.papers, args.dim, args.seed)
    started = time.perf_counter()
    index = ann.build_index(x, "Flat", metric="inner_product")
    build_s = time.perf_counter() - started
    query_rows = np.sort(np.random.default_rng(args.seed).choice(args.papers, args.queries, replace=False))
    queries = x[query_rows]

    def bare_search() -> float:
        started = time.perf_counter()
        distances, rows = index.search(queries, args.k + 1)
        return time.perf_counter() - started

    bare_before_s = bare_search()

    config = make_config(hard_negatives_k_min=args.k - 2, hard_negatives_k_max=args.k)
    search_s = [0.0]

    def search(block_rows: np.ndarray, k: int) -> np.ndarray:
        t = time.perf_counter()
        found = ann.knn_search(index, x[block_rows], k, batch_size=len(block_rows), show_progress=False)[1]
        search_s[0] += time.perf_counter() - t
        return found

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        mined = mine_knn_triples(query_rows, Corpus(size=args.papers), config, search, seed=args.seed,
                                 show_progress=False)
        mine_s = time.perf_counter() - started
        ids = [str(i) for i in range(args.papers)]
        write_mined_triples(Path(tmp) / "train_triples.csv", mined, ids)
        total_s = time.perf_counter() - started
    bare_after_s = bare_search()  # the machine may be shared: bracket ours with two baseline runs
    bare_s = (bare_before_s + bare_after_s) / 2

    print(f"bench_triples: {args.papers:,} papers x {args.dim}-d, k={args.k:,}, {args.queries:,} queries, "
          f"{len(mined):,} triples (faiss {faiss.__version__}, {faiss.omp_get_max_threads()} threads, "
          f"{os.cpu_count()} cpus)")
    print(f"  index build (not timed below):       {build_s:8.2f} s")
    print(f"  bare faiss search (k+1={args.k + 1}), before: {bare_before_s:8.2f} s")
    print(f"  bare faiss search (k+1={args.k + 1}), after:  {bare_after_s:8.2f} s")
    print(f"  bare faiss search, mean (baseline):  {bare_s:8.2f} s")
    print(f"  ours: mining (search + sampling):    {mine_s:8.2f} s")
    print(f"        of which faiss search blocks:  {search_s[0]:8.2f} s")
    print(f"  ours: mining + writing the CSV:      {total_s:8.2f} s")
    print(f"  ratio total / bare search:           {total_s / bare_s:8.2f} x   (target <= 1.5)")
    print(f"  ratio mining / bare search:          {mine_s / bare_s:8.2f} x")
    print(f"  ratio total / faiss search inside:   {total_s / search_s[0]:8.2f} x   (sampling + writing overhead)")


if __name__ == "__main__":
    main()
