#!/usr/bin/env python
"""Benchmark of `cli_s2orc.py get_citations` on the 100k-paper demo corpus.

Prints papers/s and CPU time of get_citations (``--workers``, default 2, and 1 process: the per-core ratio is the
load-robust figure) against, in the same process:
  (a) a plain single-process loop: ``gzip.open`` + ``json.loads`` per line, edges written as TSV
      (what a straightforward implementation, like the original SciNCL worker, does);
  (b) the bound: gunzip + JSON parse only (the reader of get_citations, ``iter_reference_batches``:
      ISA-L inflate + msgspec decoding paper_id/outbound_citations of a whole block of lines per
      call, same workers), no extraction and no output;
      a full-record orjson parse is shown for context;
and the peak RSS (main process + workers, sampled every 20 ms) of a `get_citations` CLI run on the
25k- and 100k-paper corpora: streaming means it must not grow with the corpus.

Corpora are generated once into ``$SCINCL_BENCH_CACHE`` (default ``~/.cache/scincl/bench``).
Usage: ``python benchmarks/bench_s2orc.py [--workers 2] [--repeats 3]``. Absolute times depend on
the machine and its load; the ratios are what the benchmark reports on.
"""
from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from scincl.demo import make_demo  # noqa: E402
from scincl.graph.citations import extract_citations  # noqa: E402
from scincl.corpus.shards import iter_papers, iter_reference_batches, list_metadata_shards, map_shards  # noqa: E402


def demo_corpus(papers: int, cache: Path) -> Path:
    """The cached demo corpus of ``papers`` papers (seed 0); made on first use."""
    root = cache / f"demo_{papers}_seed0"
    if not (root / "demo_manifest.json").exists():
        print(f"making the {papers:,}-paper demo corpus in {root} ...", flush=True)
        shutil.rmtree(root, ignore_errors=True)
        t0 = time.perf_counter()
        make_demo(root, papers=papers, seed=0)
        print(f"  done in {time.perf_counter() - t0:.1f} s", flush=True)
    return root / "s2orc" / "metadata"


def plain_json_loop(shards, out_path: Path) -> int:
    """Baseline (a): single process, stdlib gzip + json.loads, edges written as TSV."""
    papers = 0
    with open(out_path, "w") as out:
        for shard in shards:
            with gzip.open(shard, "rt") as fh:
                for line in fh:
                    record = json.loads(line)
                    papers += 1
                    for cited in record.get("outbound_citations") or []:
                        out.write(f"{record['paper_id']}\t{cited}\n")
    return papers


def parse_only(shard: Path) -> int:
    """Bound (b) worker: gunzip + parse every line of a shard as get_citations does, nothing else."""
    return sum(len(batch.paper_ids) for batch in iter_reference_batches(shard))


def parse_full_records(shard: Path) -> int:
    """Context: gunzip + full orjson parse of every record (what iter_papers does)."""
    return sum(1 for _ in iter_papers(shard))


def best_of_interleaved(repeats: int, variants: dict) -> tuple:
    """Run every variant once per round, ``repeats`` rounds; best time and last result of each.

    Interleaving spreads load changes of a shared machine over all variants alike.
    """
    times = {name: [] for name in variants}
    cpu = {name: [] for name in variants}
    results = {}
    for _ in range(repeats):
        for name, fn in variants.items():
            c0, t0 = _cpu_seconds(), time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(_cpu_seconds() - c0)
    return {name: min(t) for name, t in times.items()}, {name: min(c) for name, c in cpu.items()}, results


def _cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children (pool workers are joined)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def peak_rss_of_cli(metadata_dir: Path, workers: int, out_dir: Path) -> tuple:
    """Run the get_citations CLI; return (peak RSS of process tree, peak RSS of main process) in MiB."""
    cmd = [sys.executable, str(REPO_ROOT / "cli_s2orc.py"), "get_citations", str(metadata_dir), str(out_dir),
           "--workers", str(workers)]
    env = {**os.environ, "SCINCL_LOG_LEVEL": "WARNING", "TQDM_DISABLE": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=REPO_ROOT)
    ps = psutil.Process(proc.pid)
    peak_tree = peak_main = 0
    while proc.poll() is None:
        try:
            main = ps.memory_info().rss
            tree = main + sum(c.memory_info().rss for c in ps.children(recursive=True))
        except psutil.Error:
            continue
        peak_main, peak_tree = max(peak_main, main), max(peak_tree, tree)
        time.sleep(0.02)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.read().decode())
    return peak_tree / 2**20, peak_main / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--cache", default=os.environ.get("SCINCL_BENCH_CACHE",
                                                           str(Path.home() / ".cache" / "scincl" / "bench")))
    args = parser.parse_args()
    cache = Path(args.cache)
    logging.basicConfig(level=logging.WARNING)

    metadata_dir = demo_corpus(args.papers, cache)
    shards = list_metadata_shards(metadata_dir)
    work = Path(tempfile.mkdtemp(prefix="bench_s2orc_"))
    try:
        def ours(workers: int = args.workers):
            shutil.rmtree(work / "ours", ignore_errors=True)
            return extract_citations(shards, work / "ours", workers=workers)

        times, cpu, results = best_of_interleaved(args.repeats, {
            "ours": ours,
            "ours1": lambda: ours(1),
            "plain": lambda: plain_json_loop(shards, work / "plain.tsv"),
            "bound": lambda: map_shards(parse_only, shards, args.workers),
            "bound1": lambda: map_shards(parse_only, shards, 1),
            "full": lambda: map_shards(parse_full_records, shards, args.workers),
        })
        t_ours, t_plain, t_bound, t_bound1, t_full = (times[k] for k in ("ours", "plain", "bound", "bound1", "full"))
        summary, n_plain, counts = results["ours"], results["plain"], results["bound"]
        n = summary["papers_read"]
        assert n == n_plain == sum(counts), (n, n_plain, sum(counts))
        plain_edges = sum(1 for _ in open(work / "plain.tsv"))
        assert summary["edges"] == plain_edges, (summary["edges"], plain_edges)

        print(f"\nget_citations benchmark: {n:,} papers, {len(shards)} shards, {summary['edges']:,} edges, "
              f"workers={args.workers}, best of {args.repeats} interleaved rounds (CPU count {os.cpu_count()}; load avg "
              f"{os.getloadavg()[0]:.1f})")
        rows = [("get_citations (ours)", t_ours), ("get_citations (ours), 1 process", times["ours1"]),
                ("(a) plain json.loads loop, 1 process", t_plain),
                (f"(b) bound: gunzip+parse only, {args.workers} workers", t_bound),
                ("    bound: gunzip+parse only, 1 process", t_bound1),
                (f"    gunzip+full orjson parse, {args.workers} workers", t_full)]
        cpu_of = dict(zip([r[0] for r in rows], (cpu[k] for k in ("ours", "ours1", "plain", "bound", "bound1", "full"))))
        print(f"  {'':<45s} {'wall':>7s}    {'papers/s':>10s}  {'CPU s (all processes)':>22s}")
        for name, t in rows:
            print(f"  {name:<45s} {t:7.2f} s  {n / t:>10,.0f}  {cpu_of[name]:>20.2f} s")
        print(f"  speed-up vs (a) plain json.loads loop:     {t_plain / t_ours:5.2f}x wall  "
              f"({cpu['plain'] / cpu['ours']:.2f}x less CPU time)  (target >= 5x)")
        print(f"  per core (1 process each; CPU time, robust to machine load): {cpu['plain'] / cpu['ours1']:5.2f}x less CPU "
              f"time than (a); gunzip+parse alone: {cpu['plain'] / cpu['bound1']:.2f}x (the ceiling with JSON validation)")
        print(f"  time relative to (b) gunzip+parse bound:   {t_ours / t_bound:5.2f}x wall  "
              f"({cpu['ours'] / cpu['bound']:.2f}x its CPU time)  (target <= 2x)")

        print("\npeak RSS of `cli_s2orc.py get_citations` (main + workers):")
        for papers in (25_000, args.papers):
            meta = demo_corpus(papers, cache)
            tree, main_rss = peak_rss_of_cli(meta, args.workers, work / f"rss_{papers}")
            print(f"  {papers:>7,} papers: {tree:7.1f} MiB total, {main_rss:6.1f} MiB main process")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
