"""Paper texts of any corpus: the metadata jsonl of every paper (get_papers), or of the papers a stage needs.

Output records are ``{"paper_id", "title", "abstract"}`` (DESIGN.md: train_metadata.jsonl). Files
are read in parallel (:func:`scincl.corpus.shards.map_shards`); a paper listed twice is taken from its
first file (in file order), later copies counted as ``duplicate_paper_id``.

Formats whose abstracts live apart from their titles (S2AG) are joined by paper id in hash buckets:
every papers/abstracts file is split into ``buckets`` part files by ``hash(paper id)``, then each
bucket joins its abstracts (held in memory: 1/buckets of all abstracts) to its titles. Memory is
therefore the abstracts of one bucket per worker, not the corpus; ``buckets`` defaults to one per
:data:`JOIN_BUCKET_BYTES` of compressed abstracts. The output is in bucket order, then file order.
"""
from __future__ import annotations

import logging
import math
import shutil
import zlib
from functools import partial
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

import orjson

from scincl.corpus.base import Corpus
from scincl.io import PathLike, concatenate_parts
from scincl.corpus.shards import ReadStats, map_shards
from scincl.temporaries import make_temporary_dir
from scincl.faults import kill_point

logger = logging.getLogger(__name__)

# ~5x that much text decompressed, held as a dict by one join worker: a few hundred MB of RAM
JOIN_BUCKET_BYTES = 64 << 20


def _record_line(pid: str, title: Optional[str], abstract: Optional[str]) -> bytes:
    return orjson.dumps({"paper_id": pid, "title": title, "abstract": abstract}) + b"\n"


# ------------------------------------------------------------------------------- needed papers

def _file_texts(path: Path, read_texts, needed: FrozenSet[str], strict: bool) -> Tuple[List[tuple], ReadStats]:
    stats = ReadStats()
    return [(pid, t, a) for _, pid, t, a in read_texts(path, strict=strict, stats=stats) if pid in needed], stats


def _file_abstracts(path: Path, read_abstracts, needed: FrozenSet[str],
                    strict: bool) -> Tuple[List[Tuple[str, Optional[str]]], ReadStats]:
    stats = ReadStats()
    return [(pid, a) for _, pid, a in read_abstracts(path, strict=strict, stats=stats) if pid in needed], stats


def collect_texts(corpus: Corpus, needed: Set[str], workers: int = 1,
                  strict: bool = False) -> Tuple[List[dict], ReadStats]:
    """Records of the ``needed`` papers, in file order (memory: the needed records)."""
    frozen = frozenset(needed)
    stats = ReadStats()
    records: Dict[str, dict] = {}
    results = map_shards(partial(_file_texts, read_texts=corpus.read_texts, needed=frozen, strict=strict),
                         corpus.text_files, workers, desc="paper texts")
    for found, file_stats in results:
        stats.merge(file_stats)
        for pid, title, abstract in found:
            if pid in records:
                stats.counted["duplicate_paper_id"] += 1
                continue
            records[pid] = {"paper_id": pid, "title": title, "abstract": abstract}
    if corpus.joins_abstracts:
        abstracts: Dict[str, Optional[str]] = {}
        results = map_shards(partial(_file_abstracts, read_abstracts=corpus.read_abstracts,
                                     needed=frozenset(records), strict=strict),
                             corpus.abstract_files, workers, desc="abstracts")
        for found, file_stats in results:
            stats.merge(file_stats)
            for pid, abstract in found:
                abstracts.setdefault(pid, abstract)
        for pid, rec in records.items():
            text = abstracts.get(pid)
            if text is None:
                stats.counted["abstract_missing"] += 1
            rec["abstract"] = text or ""
    return list(records.values()), stats


# ---------------------------------------------------------------------------------- all papers

def _write_file_part(job: Tuple[int, Path], read_texts, parts_dir: Path,
                     strict: bool) -> Tuple[Path, List[str], ReadStats]:
    """One text file's records as jsonl lines in its part file, with the ids in line order."""
    index, path = job
    stats = ReadStats()
    part = parts_dir / f"{index:06d}.part"
    ids = []
    with open(part, "wb") as fh:
        for _, pid, title, abstract in read_texts(path, strict=strict, stats=stats):
            fh.write(_record_line(pid, title, abstract))
            ids.append(pid)
    return part, ids, stats


def _bucket_of(pid: str, buckets: int) -> int:
    return zlib.crc32(pid.encode()) % buckets


def _split_file(job: Tuple[int, Path], reader, kind: str, parts_dir: Path, buckets: int,
                strict: bool) -> ReadStats:
    """Write one papers (``kind`` = t) or abstracts (a) file's rows into its bucket files."""
    index, path = job
    stats = ReadStats()
    handles = [open(parts_dir / f"{kind}{index:06d}.b{b:05d}", "wb") for b in range(buckets)]
    try:
        if kind == "t":
            rows: Iterable[tuple] = ((pid, title) for _, pid, title, _ in reader(path, strict=strict, stats=stats))
        else:
            rows = ((pid, abstract) for _, pid, abstract in reader(path, strict=strict, stats=stats))
        for pid, text in rows:
            handles[_bucket_of(pid, buckets)].write(orjson.dumps([pid, text]) + b"\n")
    finally:
        for fh in handles:
            fh.close()
    return stats


def _rows(path: Path) -> Iterable[list]:
    with open(path, "rb") as fh:
        for line in fh:
            yield orjson.loads(line)


def _join_bucket(bucket: int, parts_dir: Path, n_papers_files: int, n_abstract_files: int) -> Tuple[Path, ReadStats]:
    """Join one bucket's titles with its abstracts into a part of the output."""
    stats = ReadStats()
    abstracts: Dict[str, Optional[str]] = {}
    for i in range(n_abstract_files):
        for pid, text in _rows(parts_dir / f"a{i:06d}.b{bucket:05d}"):
            if pid in abstracts:
                stats.counted["duplicate_abstract"] += 1
            else:
                abstracts[pid] = text
    seen: Set[str] = set()
    out = parts_dir / f"joined.b{bucket:05d}"
    with open(out, "wb") as fh:
        for i in range(n_papers_files):
            for pid, title in _rows(parts_dir / f"t{i:06d}.b{bucket:05d}"):
                if pid in seen:
                    stats.counted["duplicate_paper_id"] += 1
                    continue
                seen.add(pid)
                abstract = abstracts.pop(pid, None)
                if abstract is None:
                    stats.counted["abstract_missing"] += 1
                fh.write(_record_line(pid, title, abstract or ""))
    if abstracts:
        stats.counted["abstract_without_paper"] += len(abstracts)
    return out, stats


def join_buckets_for(corpus: Corpus) -> int:
    """Default bucket count of the S2AG join: one per :data:`JOIN_BUCKET_BYTES` of compressed abstracts."""
    size = sum(p.stat().st_size for p in corpus.abstract_files)
    return max(1, math.ceil(size / JOIN_BUCKET_BYTES))


def write_papers(corpus: Corpus, output: PathLike, workers: int = 1, strict: bool = False,
                 buckets: Optional[int] = None) -> Dict:
    """Write every paper of ``corpus`` as ``{"paper_id","title","abstract"}`` jsonl(.gz) to ``output``.

    The same bytes for any ``workers``. Returns the stats dict (papers, counted events, skipped lines).
    """
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    parts_dir = make_temporary_dir(output.parent, "papers.parts")
    stats = ReadStats()
    try:
        if corpus.joins_abstracts:
            buckets = int(buckets or join_buckets_for(corpus))
            jobs = [("t", corpus.read_texts, list(enumerate(corpus.text_files))),
                    ("a", corpus.read_abstracts, list(enumerate(corpus.abstract_files)))]
            for kind, reader, files in jobs:
                split = partial(_split_file, reader=reader, kind=kind, parts_dir=parts_dir, buckets=buckets,
                                strict=strict)
                for file_stats in map_shards(split, files, workers, desc=f"split {'papers' if kind == 't' else 'abstracts'}"):
                    stats.merge(file_stats)
            join = partial(_join_bucket, parts_dir=parts_dir, n_papers_files=len(corpus.text_files),
                           n_abstract_files=len(corpus.abstract_files))
            results = map_shards(join, list(range(buckets)), workers, desc="join")
            for _, bucket_stats in results:
                stats.counted.update(bucket_stats.counted)
            concatenate_parts([part for part, _ in results], output)
        else:
            jobs = list(enumerate(corpus.text_files))
            write = partial(_write_file_part, read_texts=corpus.read_texts, parts_dir=parts_dir, strict=strict)
            results = map_shards(write, jobs, workers, desc="papers")
            seen: Set[str] = set()
            skip: Dict[Path, Set[int]] = {}
            for part, ids, file_stats in results:
                stats.merge(file_stats)
                for i, pid in enumerate(ids):
                    if pid in seen:
                        skip.setdefault(part, set()).add(i)
                        stats.counted["duplicate_paper_id"] += 1
                    seen.add(pid)
            kill_point("papers:parts_written")
            concatenate_parts([part for part, _, _ in results], output, skip)
    finally:
        shutil.rmtree(parts_dir, ignore_errors=True)
    written = stats.papers - stats.counted.get("duplicate_paper_id", 0)
    summary = {"format": corpus.format, "papers": written, **stats.to_dict(), "output": str(output),
               "settings": {"workers": workers, "strict": strict,
                            **({"join_buckets": buckets} if corpus.joins_abstracts else {})}}
    logger.info("papers: %d written to %s (%s corpus; counted: %s; %d skipped lines)", written, output,
                corpus.format, dict(stats.counted), summary["skipped_lines"])
    return summary
