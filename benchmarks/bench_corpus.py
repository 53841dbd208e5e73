#!/usr/bin/env python
"""Benchmark of the corpus formats: the same 100k-paper corpus as S2ORC, S2AG, OpenAlex and plain files.

For each layout of the demo corpus (``make_demo`` + :func:`scincl.corpus.layouts.write_layout`,
cached in ``$SCINCL_BENCH_CACHE``, default ``~/.cache/scincl/bench``) runs, as CLI processes:

- ``cli_s2orc.py get_citations CORPUS OUT --corpus_format F`` (OpenAlex includes its id-index pass);
- ``cli_s2orc.py get_papers CORPUS OUT.jsonl.gz --corpus_format F`` (S2AG includes the bucketed join
  of papers and abstracts);

and prints wall time, papers/s, the time relative to the S2ORC layout measured in the same run
(the baseline: the S2ORC path) and the peak RSS of the process tree (main + workers, sampled
every 20 ms). Rounds are interleaved over the formats, best of ``--repeats``. The machine may be
shared: the ratios are what the benchmark reports on, absolute times are context.
Usage: ``python benchmarks/bench_corpus.py [--papers 100000] [--workers 2] [--repeats 2]``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_s2orc import demo_corpus  # noqa: E402
from proc_stats import tree_rss  # noqa: E402
from scincl.corpus.layouts import LAYOUTS, write_layout  # noqa: E402

FORMATS = ("s2orc",) + LAYOUTS
COMMANDS = ("get_citations", "get_papers")


def layout_dir(metadata_dir: Path, fmt: str) -> Path:
    """The corpus in layout ``fmt`` next to the cached demo corpus (written on first use)."""
    if fmt == "s2orc":
        return metadata_dir
    root = metadata_dir.parent.parent / f"layout_{fmt}"
    if not (root / "id_map.json").exists():
        print(f"writing the {fmt} layout to {root} ...", flush=True)
        shutil.rmtree(root, ignore_errors=True)
        write_layout(metadata_dir, root, fmt)
    return root


def run_measured(cmd: list) -> tuple:
    """Run ``cmd``; return (wall seconds, peak RSS of the process tree in MiB)."""
    env = {**os.environ, "SCINCL_LOG_LEVEL": "WARNING", "TQDM_DISABLE": "1"}
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=REPO_ROOT)
    ps = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(ps))
        time.sleep(0.02)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.read().decode())
    return wall, peak / 2**20


def command(name: str, corpus: Path, fmt: str, out: Path, workers: int) -> list:
    target = out / "citations" if name == "get_citations" else out / "papers.jsonl.gz"
    return [sys.executable, str(REPO_ROOT / "cli_s2orc.py"), name, str(corpus), str(target), "--corpus_format", fmt,
            "--workers", str(workers), "--override"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--cache", default=os.environ.get("SCINCL_BENCH_CACHE",
                                                           str(Path.home() / ".cache" / "scincl" / "bench")))
    args = parser.parse_args()
    metadata_dir = demo_corpus(args.papers, Path(args.cache))
    corpora = {fmt: layout_dir(metadata_dir, fmt) for fmt in FORMATS}
    work = Path(tempfile.mkdtemp(prefix="bench_corpus_"))
    best = {}
    try:
        for _ in range(args.repeats):
            for name in COMMANDS:
                for fmt in FORMATS:
                    wall, rss = run_measured(command(name, corpora[fmt], fmt, work / fmt, args.workers))
                    old = best.get((name, fmt))
                    best[(name, fmt)] = (min(wall, old[0]), max(rss, old[1])) if old else (wall, rss)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\ncorpus formats: {args.papers:,} papers, workers={args.workers}, best of {args.repeats} interleaved "
          f"rounds (CPU count {os.cpu_count()}; load avg {os.getloadavg()[0]:.1f}; shared machine)")
    print(f"  {'command':<14s} {'format':<9s} {'wall':>8s} {'papers/s':>10s} {'vs s2orc':>9s} {'peak RSS':>10s}")
    for name in COMMANDS:
        base = best[(name, "s2orc")][0]
        for fmt in FORMATS:
            wall, rss = best[(name, fmt)]
            print(f"  {name:<14s} {fmt:<9s} {wall:7.2f}s {args.papers / wall:>10,.0f} {wall / base:8.2f}x "
                  f"{rss:8.1f} MiB")


if __name__ == "__main__":
    main()
