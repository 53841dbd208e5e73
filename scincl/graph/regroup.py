"""Reference lists of edge-list formats (S2AG ``citations``, plain ``citations.tsv``), grouped by citing paper.

Those formats store one citation per record; their readers group consecutive records of a citing
paper, which is exact for ``get_citations`` but not for co-citations when a paper's records are
spread over the files. :func:`regrouped_references` therefore hash-partitions the edges by citing
paper into ``buckets`` TSV files (one pass, in parallel over the input files) and reads each bucket
back with every citing paper's references in one list (memory: one bucket's edges per worker).
The buckets are deterministic (crc32 of the id), so outputs do not depend on ``workers``.
"""
from __future__ import annotations

import contextlib
import math
import shutil
import tempfile
import zlib
from functools import partial
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from scincl.corpus.base import Corpus
from scincl.io import PathLike
from scincl.corpus.shards import ReadStats, map_shards
from scincl.temporaries import make_temporary_dir

REGROUP_BUCKET_BYTES = 64 << 20  # compressed citation records per bucket: ~5M edges held by one worker


def _split_edges(job: Tuple[int, Path], read_references, parts_dir: Path, buckets: int,
                 strict: bool) -> ReadStats:
    index, path = job
    stats = ReadStats()
    handles = [open(parts_dir / f"e{index:06d}.b{b:05d}", "w", encoding="utf-8") for b in range(buckets)]
    try:
        for _, citing, refs in read_references(path, strict=strict, stats=stats):
            handles[zlib.crc32(citing.encode()) % buckets].write("".join(f"{citing}\t{r}\n" for r in refs))
    finally:
        for fh in handles:
            fh.close()
    return stats


def read_bucket(path: PathLike, strict: bool = False,
                stats: Optional[ReadStats] = None) -> Iterator[Tuple[int, str, List[str]]]:
    """``(0, citing, references)`` of one bucket directory's part files, each citing paper once."""
    stats = stats if stats is not None else ReadStats()
    stats.shards += 1
    groups: Dict[str, List[str]] = {}
    for part in sorted(Path(path).iterdir()):
        with open(part, encoding="utf-8") as fh:
            for line in fh:
                citing, cited = line.rstrip("\n").split("\t")
                groups.setdefault(citing, []).append(cited)
    for citing, refs in groups.items():
        stats.papers += 1
        yield 0, citing, refs


@contextlib.contextmanager
def regrouped_references(corpus: Corpus, workers: int = 1, strict: bool = False, buckets: Optional[int] = None,
                         work_dir: Optional[PathLike] = None) -> Iterator[Tuple[List[Path], ReadStats]]:
    """Bucket directories (read them with :func:`read_bucket`) and the stats of reading the corpus.

    The buckets live in a temporary folder inside ``work_dir`` (default: the system's), removed on exit.
    """
    size = sum(p.stat().st_size for p in corpus.reference_files)
    buckets = int(buckets or max(1, math.ceil(size / REGROUP_BUCKET_BYTES)))
    work = make_temporary_dir(Path(work_dir) if work_dir else Path(tempfile.gettempdir()), "regroup")
    try:
        split = partial(_split_edges, read_references=corpus.read_references, parts_dir=work, buckets=buckets,
                        strict=strict)
        stats = ReadStats()
        for file_stats in map_shards(split, list(enumerate(corpus.reference_files)), workers, desc="group by citing"):
            stats.merge(file_stats)
        dirs = []
        for b in range(buckets):
            d = work / f"bucket_{b:05d}"
            d.mkdir()
            for part in work.glob(f"e*.b{b:05d}"):
                part.rename(d / part.name)
            dirs.append(d)
        yield dirs, stats
    finally:
        shutil.rmtree(work, ignore_errors=True)


def corpus_cocitations(corpus: Corpus, output_path: PathLike, workers: int = 1, min_count: int = 1,
                       included=None, excluded=None, strict: bool = False, buckets: Optional[int] = None) -> Dict:
    """get_cocitations on any format: edge-list formats are regrouped by citing paper first; returns the stats."""
    from scincl.graph.cocitations import extract_cocitations

    if corpus.references_grouped:
        return extract_cocitations(corpus.reference_files, output_path, workers=workers, min_count=min_count,
                                   included=included, excluded=excluded, strict=strict,
                                   read_references=corpus.read_references)
    Path(output_path).parent.mkdir(parents=True, exist_ok=True)
    with regrouped_references(corpus, workers, strict, buckets, work_dir=Path(output_path).parent) as (dirs, read):
        summary = extract_cocitations(dirs, output_path, workers=workers, min_count=min_count, included=included,
                                      excluded=excluded, strict=strict, read_references=read_bucket)
    return {**summary, **read.to_dict(), "papers_read": summary["papers_read"], "regroup_buckets": len(dirs)}
