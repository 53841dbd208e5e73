#!/usr/bin/env python
"""Peak memory of the graph stage (issue 45): bounded FastRP per block size and graph size, PBG with
1, 2 and 4 partitions (peak RSS and link-prediction MRR side by side), the FAISS index + kNN stage
over a candidate pool, and the cost table ``plan_memory`` reads.

Every run is one ``cli_graph.py`` call in a subprocess; its peak RSS is sampled every 50 ms over the
process tree (``bench_scale.run``), its peak disk by sampling the size of its output folder. Graphs
are synthetic (numpy, seeded; cached in ``$SCINCL_BENCH_CACHE``, default ``~/.cache/scincl/bench``):
``N`` papers citing Poisson(10) papers each, drawn with ``P(rank < x) = sqrt(x / N)`` over a random
popularity order (``bench_scale.py``'s corpus), 1 % of the edges held out as test edges.

    .venv/bin/python benchmarks/bench_memory.py --runs fastrp --sizes 100000,1000000 --block_sizes 65536
    .venv/bin/python benchmarks/bench_memory.py --runs fastrp --sizes 1000000 --block_sizes 16384,262144
    .venv/bin/python benchmarks/bench_memory.py --runs pbg --sizes 300000 --partitions 1,2,4
    .venv/bin/python benchmarks/bench_memory.py --runs index --sizes 1000000 --pools 100000,300000
    .venv/bin/python benchmarks/bench_memory.py --report     # cost table + docs/scale/memory/MEMORY_TABLE.md

Raw records go to ``docs/scale/memory/results.json`` (a rerun of the same run replaces its record).
``--report`` fits the per-node / per-edge / per-block-row costs (least squares over the runs named
as fit runs) and writes them to ``scincl/graph/memory_costs.json``; the runs not used by a fit are
the check: the plan's estimate against the measured peak, printed with the error.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

RESULTS = REPO_ROOT / "docs" / "scale" / "memory" / "results.json"
TABLE = REPO_ROOT / "docs" / "scale" / "memory" / "MEMORY_TABLE.md"
MEAN_REFERENCES = 10
TEST_RATIO = 0.01
DIMENSION = 128
QUERIES = 2000  # kNN queries mined per index run (bench_scale.py's 1M-paper setting)
K_HARD = 4000  # the paper's hard negatives n_3999..n_4000


def cache_dir() -> Path:
    return Path(os.environ.get("SCINCL_BENCH_CACHE", Path.home() / ".cache" / "scincl" / "bench"))


def generate_edges(papers: int, seed: int = 0) -> Dict[str, Path]:
    """(Once) ``train.tsv`` / ``test.tsv`` of a synthetic citation graph of ``papers`` papers."""
    root = cache_dir() / f"memory_{papers}"
    train, test, done = root / "train.tsv", root / "test.tsv", root / "graph.json"
    if done.exists():
        return {"train": train, "test": test, "root": root}
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    ids = np.char.mod("%d", 100_000_000 + 37 * np.arange(papers))
    popularity = rng.permutation(papers)
    edges = 0
    with open(train, "w") as tr, open(test, "w") as te:
        for start in range(0, papers, 1_000_000):
            stop = min(start + 1_000_000, papers)
            counts = rng.poisson(MEAN_REFERENCES, stop - start)
            citing = np.repeat(np.arange(start, stop), counts)
            cited = popularity[(papers * rng.random(len(citing)) ** 2).astype(np.int64)]
            pairs = np.unique(np.stack([citing, cited], axis=1)[citing != cited], axis=0)
            held = rng.random(len(pairs)) < TEST_RATIO
            for fh, rows in ((tr, pairs[~held]), (te, pairs[held])):
                fh.write("\n".join(np.char.add(np.char.add(ids[rows[:, 0]], "\t"), ids[rows[:, 1]]).tolist()) + "\n")
            edges += int((~held).sum())
    done.write_text(json.dumps({"papers": papers, "train_edges": edges, "seed": seed}))
    return {"train": train, "test": test, "root": root}


def graph_counts(papers: int) -> Dict[str, int]:
    return json.loads((cache_dir() / f"memory_{papers}" / "graph.json").read_text())


def folder_bytes(path: Path) -> int:
    """Bytes of the files under ``path`` (allocated blocks: sparse files count what they hold)."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return total


def tree_pss(process) -> int:
    """Proportional set size of a process and its children: shared pages (PBG's shared-memory
    partitions, touched by every worker) counted once in all, not once per process as in RSS."""
    import psutil

    total = 0
    for p in [process] + process.children(recursive=True):
        try:
            total += p.memory_full_info().pss
        except psutil.Error:
            pass
    return total


def measure(cmd: List[str], log: Path, watch: Path) -> Dict[str, float]:
    """``cmd``'s wall / CPU seconds, peak RSS and PSS of its process tree and peak bytes under ``watch``."""
    from benchmarks.proc_stats import run_sampled

    peaks = {"pss": 0, "disk": 0, "disk_at": 0.0}

    def sample(process) -> None:
        peaks["pss"] = max(peaks["pss"], tree_pss(process))
        if time.perf_counter() - peaks["disk_at"] > 0.5:
            peaks["disk"], peaks["disk_at"] = max(peaks["disk"], folder_bytes(watch)), time.perf_counter()

    done = run_sampled(cmd, log, sample=sample)
    return {"wall_s": round(done["wall_s"], 2), "cpu_s": round(done["cpu_s"], 2),
            "peak_rss_mib": round(done["peak_rss"] / 2 ** 20, 1), "peak_pss_mib": round(peaks["pss"] / 2 ** 20, 1),
            "peak_disk_mib": round(peaks["disk"] / 2 ** 20, 1),
            "load_average": round(os.getloadavg()[0], 1)}


def load() -> List[dict]:
    return json.loads(RESULTS.read_text()) if RESULTS.exists() else []


def save(record: dict) -> None:
    """Add (or replace) ``record`` in the results file; runs in parallel processes take turns (a lock)."""
    from filelock import FileLock

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(RESULTS) + ".lock"):
        records = [r for r in load() if r["run"] != record["run"]] + [record]
        RESULTS.write_text(json.dumps(sorted(records, key=lambda r: r["run"]), indent=1) + "\n")


def run_fastrp(papers: int, block_size: Optional[int], work: Path) -> dict:
    """``embed_graph --method fastrp`` (bounded with ``block_size``, in memory without)."""
    graph = generate_edges(papers)
    out = work / f"fastrp_{papers}_{block_size or 'memory'}"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "cli_graph.py", "embed_graph", graph["train"], out, "--method", "fastrp", "--config",
           "s2orc_128d_dot", "--dimension", str(DIMENSION)]
    if block_size:
        cmd += ["--block_size", str(block_size)]
    stats = measure(cmd, work / "bench_memory.log", out)
    shutil.rmtree(out, ignore_errors=True)
    name = f"fastrp papers={papers} block_size={block_size or 'in-memory'}"
    return {"run": name, "method": "fastrp", "papers": graph_counts(papers)["papers"],
            "edges": graph_counts(papers)["train_edges"], "dimension": DIMENSION, "block_size": block_size, **stats}


def run_pbg(papers: int, partitions: int, work: Path, epochs: int) -> dict:
    """``embed_graph --method pbg`` (``s2orc_128d_dot``, ``epochs`` epochs) with ``partitions`` partitions."""
    graph = generate_edges(papers)
    out = work / f"pbg_{papers}_{partitions}"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "cli_graph.py", "embed_graph", graph["train"], out, "--method", "pbg", "--config",
           "s2orc_128d_dot", "--test_edges", graph["test"], "--random_baseline", "False", "-p",
           f"num_epochs={epochs}", "-p", f"entities.paper_id.num_partitions={partitions}", "-p", "workers=2"]
    stats = measure(cmd, work / "bench_memory.log", out)
    metrics = json.loads((out / "link_prediction.json").read_text())["results"]["trained"]
    shutil.rmtree(out, ignore_errors=True)
    return {"run": f"pbg papers={papers} partitions={partitions} epochs={epochs}", "method": "pbg",
            "papers": graph_counts(papers)["papers"], "edges": graph_counts(papers)["train_edges"],
            "dimension": DIMENSION, "partitions": partitions, "epochs": epochs, "mrr": round(metrics["mrr"], 4),
            "hits@10": round(metrics["hits@10"], 4), **stats}


def random_export(papers: int, pool: int, seed: int = 0) -> Dict[str, Path]:
    """(Once) random 128-d ``embeddings.h5`` of ``papers`` papers, their id list, and a random candidate pool.

    The index and kNN stages' memory depends on the shape, not the values (``bench_scale.py``'s
    ``--random_embeddings``); the rows are written a block at a time.
    """
    import h5py

    from scincl.graph.embedders.block_output import write_ids_blocks
    from scincl.io import write_id_list

    root = cache_dir() / f"memory_export_{papers}"
    paths = {"embeddings": root / "embeddings.h5", "ids": root / "entity_names_paper_id_0.json",
             "pool": root / f"pool_{pool}.json", "queries": root / f"queries_{pool}.json"}
    rng = np.random.default_rng(seed)
    ids = np.char.mod("%d", 100_000_000 + 37 * np.arange(papers))
    if not paths["embeddings"].exists():
        import polars as pl

        root.mkdir(parents=True, exist_ok=True)
        with h5py.File(root / "tmp.h5", "w") as f:
            data = f.create_dataset("embeddings", shape=(papers, DIMENSION), dtype=np.float32)
            for start in range(0, papers, 1 << 18):
                stop = min(start + (1 << 18), papers)
                data[start:stop] = rng.standard_normal((stop - start, DIMENSION), dtype=np.float32)
        write_ids_blocks(paths["ids"], pl.Series(ids))
        (root / "tmp.h5").rename(paths["embeddings"])
    if not paths["pool"].exists():
        chosen = np.sort(rng.choice(papers, size=pool, replace=False))
        write_id_list(paths["pool"], ids[chosen].tolist())
        write_id_list(paths["queries"], ids[chosen[:QUERIES]].tolist())
    return paths


def run_index_knn(papers: int, pool: int, work: Path) -> List[dict]:
    """``build_faiss`` (Flat) over a candidate pool of ``pool`` papers, then ``get_knn_triples`` for
    ``QUERIES`` of them (k = 4000, exact backend) with the pool as the corpus."""
    paths = random_export(papers, pool)
    out = work / f"index_{papers}_{pool}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    index = out / "index.faiss"
    base = {"papers": papers, "edges": 0, "dimension": DIMENSION, "pool": pool}
    build = measure([sys.executable, "cli_graph.py", "build_faiss", paths["embeddings"], index, "--string_factory",
                     "Flat", "--paper_ids", paths["ids"], "--include_paper_ids", paths["pool"]],
                    work / "bench_memory.log", out)
    mine = measure([sys.executable, "cli_triples.py", "get_knn_triples", out / "triples.csv",
                    "--graph_paper_ids_path", paths["ids"], "--graph_embeddings_path", paths["embeddings"],
                    "--ann_index_path", out / "knn.faiss", "--include_paper_ids", paths["pool"],
                    "--query_papers", paths["queries"], "--hard_negatives_k_min", str(K_HARD - 2),
                    "--hard_negatives_k_max", str(K_HARD), "--ann_backend", "exact"], work / "bench_memory.log", out)
    shutil.rmtree(out, ignore_errors=True)
    return [{"run": f"index papers={papers} pool={pool}", "method": "index", **base, **build},
            {"run": f"knn papers={papers} pool={pool} queries={QUERIES}", "method": "knn", "queries": QUERIES,
             **base, **mine}]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", default="fastrp", help="comma list of fastrp, fastrp_memory, pbg, index")
    parser.add_argument("--sizes", default="100000", help="papers per synthetic graph, comma list")
    parser.add_argument("--block_sizes", default="65536", help="FastRP rows per block, comma list")
    parser.add_argument("--partitions", default="1,2,4", help="PBG partitions, comma list")
    parser.add_argument("--epochs", type=int, default=2, help="PBG epochs per run")
    parser.add_argument("--pools", default="100000", help="index / kNN candidate pool sizes, comma list")
    parser.add_argument("--work", default=None, help="scratch folder (default: the cache folder)")
    parser.add_argument("--report", action="store_true", help="fit the cost table and write the table")
    args = parser.parse_args()
    if args.report:
        from benchmarks.memory_report import report

        report(load(), TABLE)
        return
    work = Path(args.work) if args.work else cache_dir() / "memory_runs"
    work.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in str(args.sizes).split(",")]
    jobs = {"fastrp": lambda n: (run_fastrp(n, int(b), work) for b in str(args.block_sizes).split(",")),
            "fastrp_memory": lambda n: (run_fastrp(n, None, work) for _ in (0,)),
            "pbg": lambda n: (run_pbg(n, int(p), work, args.epochs) for p in str(args.partitions).split(",")),
            "index": lambda n: (r for q in str(args.pools).split(",") for r in run_index_knn(n, int(q), work))}
    for run in str(args.runs).split(","):
        if run not in jobs:
            raise SystemExit(f"unknown run {run!r}; choose from {', '.join(jobs)}")
        for papers in sizes:
            for record in jobs[run](papers):
                save(record)
                print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
