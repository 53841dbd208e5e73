"""Id mappings over S2ORC (the helper commands of the original SciNCL README).

- inbound citation counts per paper; where each paper sits in the shards (file, line);
- SciDocs (S2 API ids) -> S2ORC ids by exact title match, and merges of such mappings;
- S2ORC ``paper_id`` <-> ``_pdf_hash`` from the pdf_parses shards (the hashes are the S2 API ids,
  see allenai/scidocs#18).

The SPECTER-like training corpus selection is :func:`scincl.corpus.selection.select_specter_corpus`.

Every function streams shards through :func:`scincl.corpus.shards.map_shards`; results are merged in
shard order, so outputs are deterministic.
"""
from __future__ import annotations

import logging
from collections import Counter, defaultdict
from functools import partial
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

from scincl.ids import canonical_pair
from scincl.errors import InputError
from scincl.scidocs_io import read_scidocs_metadata_dir
from scincl.io import PathLike, read_json
from scincl.corpus.shards import ReadStats, iter_numbered_papers, iter_papers, map_shards, normalize_references, unit_name

logger = logging.getLogger(__name__)

def _merge_stats(results: Iterable[Tuple[object, ReadStats]]) -> ReadStats:
    total = ReadStats()
    for _, stats in results:
        total.merge(stats)
    return total


# ------------------------------------------------------------------------------ per-shard work

def _shard_inbound_counts(shard: Path, strict: bool = False) -> Tuple[List[Tuple[str, int]], ReadStats]:
    stats = ReadStats()
    out = []
    for rec in iter_papers(shard, strict=strict, stats=stats):
        inbound = rec.get("inbound_citations")
        if isinstance(inbound, list) and inbound:
            out.append((rec["paper_id"], len(inbound)))
    return out, stats


def _file_cited_counts(path: Path, read_references, strict: bool = False) -> Tuple[Counter, ReadStats]:
    stats = ReadStats()
    counts: Counter = Counter()
    for line_no, _, refs in read_references(path, strict=strict, stats=stats):
        counts.update(normalize_references(refs, path, line_no, strict, stats) or ())
    return counts, stats


def inbound_citation_counts(shards: Sequence[Path], workers: int = 1, strict: bool = False,
                            read_references=None) -> Tuple[Dict[str, int], ReadStats]:
    """``{paper_id: len(inbound_citations)}`` for papers with at least one inbound citation.

    S2ORC records carry ``inbound_citations``; for the other formats give their ``read_references``
    (:class:`scincl.corpus.Corpus`): the counts are then those of the corpus's own references.
    """
    if read_references is not None:
        results = map_shards(partial(_file_cited_counts, read_references=read_references, strict=strict), shards,
                             workers, desc="inbound counts")
        total: Counter = Counter()
        for counts, _ in results:
            total.update(counts)
        return dict(sorted(total.items())), _merge_stats(results)
    results = map_shards(partial(_shard_inbound_counts, strict=strict), shards, workers, desc="inbound counts")
    counts = {pid: n for pairs, _ in results for pid, n in pairs}
    return counts, _merge_stats(results)


def _s2orc_texts(shard: Path, strict: bool = False, stats: Optional[ReadStats] = None):
    """``(line, paper_id, title, abstract)`` of one S2ORC shard (the default text reader below)."""
    for line_no, rec in iter_numbered_papers(shard, strict=strict, stats=stats):
        yield line_no, rec["paper_id"], rec.get("title"), rec.get("abstract")


def _shard_positions(shard: Path, strict: bool = False, read_texts=_s2orc_texts) -> Tuple[List[List], ReadStats]:
    stats = ReadStats()
    rows = [[pid, line_no - 1] for line_no, pid, _, _ in read_texts(shard, strict=strict, stats=stats)]
    return rows, stats


def metadata_id_mapping(shards: Sequence[Path], workers: int = 1, strict: bool = False,
                        read_texts=_s2orc_texts) -> Tuple[Dict[str, List[List]], ReadStats]:
    """``{shard_file_name: [[paper_id, line_index], ...]}`` (0-based line index in the shard; OpenAlex
    parts are named ``updated_date=…/part_000.gz``, unique across partitions).

    ``read_texts`` reads another corpus format's text files (:class:`scincl.corpus.Corpus`).
    """
    results = map_shards(partial(_shard_positions, strict=strict, read_texts=read_texts), shards, workers,
                         desc="id mapping")
    mapping = {unit_name(Path(shard)): rows for shard, (rows, _) in zip(shards, results)}
    return mapping, _merge_stats(results)


def _shard_title_matches(shard: Path, titles: Set[str], strict: bool = False,
                         read_texts=_s2orc_texts) -> Tuple[List[Tuple[str, str]], ReadStats]:
    stats = ReadStats()
    out = [(pid, title) for _, pid, title, _ in read_texts(shard, strict=strict, stats=stats) if title in titles]
    return out, stats


def scidocs_title_mapping(scidocs_dir: PathLike, shards: Sequence[Path], workers: int = 1, strict: bool = False,
                          read_texts=_s2orc_texts) -> Tuple[Dict[str, str], Dict[str, List[str]], ReadStats]:
    """Map SciDocs paper ids to S2ORC ids by exact title; ambiguous titles are left out.

    Returns ``(mapping, ambiguous, stats)``: ``ambiguous`` lists the S2ORC candidates of each
    SciDocs id whose title matched more than one S2ORC paper.
    """
    metadata = read_scidocs_metadata_dir(scidocs_dir)
    titles = {m.get("title") for meta in metadata.values() for m in meta.values() if m.get("title")}
    logger.info("SciDocs: %d papers, %d distinct titles",
                len({pid for meta in metadata.values() for pid in meta}), len(titles))
    results = map_shards(partial(_shard_title_matches, titles=titles, strict=strict, read_texts=read_texts), shards,
                         workers, desc="title matches")
    by_title: Dict[str, List[str]] = defaultdict(list)
    for matches, _ in results:
        for pid, title in matches:
            by_title[title].append(pid)
    mapping: Dict[str, str] = {}
    ambiguous: Dict[str, List[str]] = {}
    for meta in metadata.values():
        for s2_id, paper in meta.items():
            if s2_id in mapping or s2_id in ambiguous:
                continue
            candidates = by_title.get(paper.get("title"), [])
            if len(candidates) == 1:
                mapping[s2_id] = candidates[0]
            elif len(candidates) > 1:
                ambiguous[s2_id] = sorted(set(candidates))
    return mapping, ambiguous, _merge_stats(results)


def _as_path_list(paths: Union[str, Sequence[str], None]) -> List[str]:
    if paths is None:
        return []
    if isinstance(paths, str):
        return [p for p in paths.split(",") if p]
    return [str(p) for p in paths]


def merge_s2id_mappings(s2id_to_paper_paths: Union[str, Sequence[str]],
                        s2id_to_s2orc_paths: Union[str, Sequence[str], None] = None) -> Dict[str, str]:
    """Merge S2 id -> S2ORC id mappings: S2 API responses first (``corpusId``), then given mappings.

    ``s2id_to_paper_paths``: JSON files ``{s2_id: {"corpusId": ..., ...}}`` (comma-separated or a
    list); ``s2id_to_s2orc_paths``: JSON files ``{s2_id: s2orc_id}`` (e.g. title mappings), used
    only for ids the API responses do not map. The first mapping of an id wins.
    """
    merged: Dict[str, str] = {}
    for path in _as_path_list(s2id_to_paper_paths):
        data = read_json(path)
        if not isinstance(data, dict):
            raise InputError("expected a JSON object {s2_id: paper}", path=path)
        for s2_id, paper in data.items():
            if not isinstance(paper, dict) or paper.get("corpusId") is None:
                raise InputError(f"paper {s2_id!r} has no 'corpusId'", path=path, field="corpusId")
            merged.setdefault(str(s2_id), str(paper["corpusId"]))
    for path in _as_path_list(s2id_to_s2orc_paths):
        data = read_json(path)
        if not isinstance(data, dict):
            raise InputError("expected a JSON object {s2_id: s2orc_id}", path=path)
        for s2_id, s2orc_id in data.items():
            merged.setdefault(str(s2_id), str(s2orc_id))
    return merged


def read_mapping(paths: Union[str, Sequence[str]]) -> Dict[str, str]:
    """One or more JSON mappings ``{key: value}`` (comma-separated paths), earlier files winning."""
    merged: Dict[str, str] = {}
    for path in _as_path_list(paths):
        data = read_json(path)
        if not isinstance(data, dict):
            raise InputError("expected a JSON object mapping ids to ids", path=path)
        for k, v in data.items():
            if v is None:
                continue  # unmapped
            key, value = canonical_pair(k, v, path)
            merged.setdefault(key, value)
    if not merged and not _as_path_list(paths):
        raise InputError("no mapping files given")
    return merged


def paper_ids_from_mapping(mapping: Dict[str, str]) -> List[str]:
    """The distinct values (S2ORC ids) of a mapping, in first-seen order."""
    return list(dict.fromkeys(str(v) for v in mapping.values()))


def _shard_pdf_hashes(shard: Path, strict: bool = False) -> Tuple[List[Tuple[str, str]], ReadStats]:
    stats = ReadStats()
    out = []
    for line_no, rec in iter_numbered_papers(shard, strict=strict, stats=stats):
        pdf_hash = rec.get("_pdf_hash")
        if not pdf_hash:
            if strict:
                raise InputError("record without '_pdf_hash'", path=shard, line=line_no, field="_pdf_hash")
            stats.skip("missing__pdf_hash", shard, line_no)
            continue
        out.append((rec["paper_id"], str(pdf_hash)))
    return out, stats


def pdf_hashes(shards: Sequence[Path], workers: int = 1,
               strict: bool = False) -> Tuple[Dict[str, str], Dict[str, str], ReadStats]:
    """``(paper_id -> _pdf_hash, _pdf_hash -> paper_id, stats)`` from S2ORC pdf_parses shards."""
    results = map_shards(partial(_shard_pdf_hashes, strict=strict), shards, workers, desc="pdf hashes")
    paper_to_hash = {pid: h for pairs, _ in results for pid, h in pairs}
    hash_to_paper = {h: pid for pid, h in paper_to_hash.items()}
    return paper_to_hash, hash_to_paper, _merge_stats(results)
