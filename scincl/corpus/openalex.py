"""The OpenAlex works snapshot layout: ``data/works/updated_date=*/part_*.gz``.

Ids are W-ids without the URL prefix (``W1705572922``). Texts are ``title`` (``display_name`` when
the title is null) and the abstract rebuilt from ``abstract_inverted_index`` (null: an empty
abstract, counted as ``abstract_inverted_index_null``). References are ``referenced_works``;
references to works outside the snapshot are counted (``reference_outside_corpus``) and dropped,
as S2ORC lists only references inside its corpus.

A work that appears in several ``updated_date`` partitions is taken once, from the newest partition
(the last file in partition order); older copies are counted as ``superseded_by_newer_partition``.
Both rules need the snapshot's id set, so :func:`open_openalex` first reads the ids of every file
(in parallel; memory: the id set).
"""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Dict, FrozenSet, Iterator, List, Optional, Tuple, Union

import msgspec

from scincl.corpus.base import Corpus
from scincl.corpus.arxiv_ids import arxiv_id_of_url, arxiv_keys
from scincl.corpus.records import abstract_from_inverted_index, iter_records
from scincl.errors import InputError
from scincl.io import PathLike
from scincl.corpus.shards import (ReadStats, _shard_sort_key, is_corpus_file, map_shards, normalize_references,
                                  record_id)

SKIP_MISSING_ID = "missing_id"
DOI_PREFIX = "https://doi.org/"


class _WorkId(msgspec.Struct):
    id: Optional[str] = None


class _WorkReferences(msgspec.Struct):
    id: Optional[str] = None
    referenced_works: Optional[List[str]] = None


class _WorkText(msgspec.Struct):
    id: Optional[str] = None
    title: Optional[str] = None
    display_name: Optional[str] = None
    abstract_inverted_index: Optional[Dict[str, List[int]]] = None


class _Location(msgspec.Struct):
    landing_page_url: Optional[str] = None
    pdf_url: Optional[str] = None


class _WorkExternalIds(msgspec.Struct):
    id: Optional[str] = None
    doi: Optional[str] = None
    ids: Optional[Dict[str, Union[str, int, None]]] = None
    locations: Optional[List[_Location]] = None


_ID_DECODER = msgspec.json.Decoder(_WorkId)
_EXTERNAL_IDS_DECODER = msgspec.json.Decoder(_WorkExternalIds)
_REFERENCES_DECODER = msgspec.json.Decoder(_WorkReferences)
_TEXT_DECODER = msgspec.json.Decoder(_WorkText)


def works_dir_of(path: PathLike) -> Path:
    """The folder holding the ``updated_date=*`` partitions: ``path``, ``path/works`` or ``path/data/works``."""
    path = Path(path)
    for candidate in (path, path / "works", path / "data" / "works"):
        if candidate.is_dir() and any(p.is_dir() and p.name.startswith("updated_date=") for p in candidate.iterdir()):
            return candidate
    raise InputError("no updated_date=*/ partitions under this OpenAlex snapshot (expected data/works/)", path=path)


def list_work_files(path: PathLike) -> List[Path]:
    """The ``part_*.gz`` files of a snapshot, oldest partition first, natural order inside a partition."""
    works = works_dir_of(path)
    files = [f for part in sorted(p for p in works.iterdir() if p.is_dir() and p.name.startswith("updated_date="))
             for f in sorted((f for f in part.iterdir() if is_corpus_file(f) and f.name.endswith(".gz")),
                             key=_shard_sort_key)]
    if not files:
        raise InputError("no part_*.gz files in the updated_date=*/ partitions", path=works)
    return files


def _file_ids(path: Path, strict: bool = False) -> Tuple[List[str], ReadStats]:
    """The W-ids of one file, in line order (worker of :func:`open_openalex`)."""
    stats = ReadStats()
    ids = [wid for line_no, rec in iter_records(path, _ID_DECODER, strict, stats) if rec.id
           for wid in [record_id(rec.id, path, line_no, strict, stats, "id")] if wid is not None]
    return ids, stats


def _live_works(path: PathLike, decoder: msgspec.json.Decoder, strict: bool, stats: Optional[ReadStats],
                superseded: Optional[Dict[str, FrozenSet[str]]]) -> Iterator[Tuple[int, str, object, ReadStats]]:
    """``(line, W-id, record, stats)`` of the works of one file that no newer partition holds.

    A record without an id is skipped; an older copy of a work is counted as superseded.
    """
    path = Path(path)
    stats = stats if stats is not None else ReadStats()
    older = (superseded or {}).get(str(path), frozenset())
    for line_no, rec in iter_records(path, decoder, strict, stats):
        if not rec.id:
            stats.skip(SKIP_MISSING_ID, path, line_no)
            continue
        wid = record_id(rec.id, path, line_no, strict, stats, "id")
        if wid is None:
            continue
        if wid in older:
            stats.counted["superseded_by_newer_partition"] += 1
            continue
        stats.papers += 1
        yield line_no, wid, rec, stats


def read_references(path: PathLike, strict: bool = False, stats: Optional[ReadStats] = None,
                    corpus_ids: FrozenSet[str] = frozenset(),
                    superseded: Optional[Dict[str, FrozenSet[str]]] = None) -> Iterator[Tuple[int, str, List[str]]]:
    """``(line, W-id, referenced W-ids inside the corpus)`` of one works file."""
    for line_no, wid, rec, stats in _live_works(path, _REFERENCES_DECODER, strict, stats, superseded):
        refs = normalize_references(rec.referenced_works, path, line_no, strict, stats)
        if refs is None:
            continue
        kept = [r for r in refs if r in corpus_ids]
        if len(kept) != len(refs):
            stats.counted["reference_outside_corpus"] += len(refs) - len(kept)
        yield line_no, wid, kept


def read_texts(path: PathLike, strict: bool = False, stats: Optional[ReadStats] = None,
               superseded: Optional[Dict[str, FrozenSet[str]]] = None
               ) -> Iterator[Tuple[int, str, Optional[str], Optional[str]]]:
    """``(line, W-id, title, abstract)`` of one works file."""
    for line_no, wid, rec, stats in _live_works(path, _TEXT_DECODER, strict, stats, superseded):
        if rec.abstract_inverted_index is None:
            stats.counted["abstract_inverted_index_null"] += 1
        yield line_no, wid, rec.title if rec.title is not None else rec.display_name, \
            abstract_from_inverted_index(rec.abstract_inverted_index) or ""


def _external_keys(value: str) -> List[str]:
    """An OpenAlex ``ids`` value as ids: DOIs without ``https://doi.org/``, other URLs' last path part too."""
    if value.startswith(DOI_PREFIX):
        return [value[len(DOI_PREFIX):]]
    if value.startswith("http"):
        return [value, value.rstrip("/").rsplit("/", 1)[-1]]
    return [value]


def read_external_ids(path: PathLike, strict: bool = False, stats: Optional[ReadStats] = None,
                      superseded: Optional[Dict[str, FrozenSet[str]]] = None) -> Iterator[Tuple[int, str, List[str]]]:
    """``(line, W-id, external ids)``: the ``ids`` values (DOI, PMID, MAG, …) and arXiv ids of landing pages."""
    for line_no, wid, rec, _ in _live_works(path, _EXTERNAL_IDS_DECODER, strict, stats, superseded):
        keys: List[str] = []
        for value in [rec.doi, *(rec.ids or {}).values()]:
            if value is not None and value != "":
                keys.extend(_external_keys(str(value)))
        for loc in rec.locations or ():
            for url in (loc.landing_page_url, loc.pdf_url):
                keys.extend(arxiv_keys(arxiv_id_of_url(url)))
        yield line_no, wid, keys


def index_works(files: List[Path], workers: int = 1,
                strict: bool = False) -> Tuple[FrozenSet[str], Dict[str, FrozenSet[str]], ReadStats]:
    """``(corpus ids, {file: ids superseded there by a newer copy}, stats)`` of a snapshot's files."""
    results = map_shards(partial(_file_ids, strict=strict), files, workers, desc="openalex ids")
    newest: Dict[str, int] = {}
    stats = ReadStats()
    for i, (ids, file_stats) in enumerate(results):
        stats.merge(file_stats)
        for wid in ids:
            newest[wid] = i  # files are in partition order: the last copy is the newest
    superseded = {}
    for i, (ids, _) in enumerate(results):
        older = frozenset(wid for wid in ids if newest[wid] != i)
        if older:
            superseded[str(files[i])] = older
    return frozenset(newest), superseded, stats


def open_openalex(path: PathLike, workers: int = 1, strict: bool = False) -> Corpus:
    """An OpenAlex works snapshot (its root, ``data/``, or ``data/works/``), with its id index built."""
    files = list_work_files(path)
    corpus_ids, superseded, _ = index_works(files, workers, strict)
    return Corpus(format="openalex", root=Path(path), reference_files=files,
                  read_references=partial(read_references, corpus_ids=corpus_ids, superseded=superseded),
                  text_files=files, read_texts=partial(read_texts, superseded=superseded),
                  read_external_ids=partial(read_external_ids, superseded=superseded))
